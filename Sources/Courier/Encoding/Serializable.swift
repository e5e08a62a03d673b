import Foundation

/// Parameters that Courier encodes by reading their stored properties, so you write no encoding code.
///
/// Don't adopt `Serializable` directly; adopt the refinement that says where the parameters go:
/// ``DefaultQueryString``, ``URLEncodedBodyData`` or ``JSONBodyData``.
///
/// Stored properties are encoded in declaration order (a superclass's properties first),
/// under keys made by ``ParameterEncodingOptions/keyStyle`` (snake_case by default) or by the
/// type's ``ParameterKeyMapping``. Nested structs and classes need not adopt anything.
public protocol Serializable: Parameters {
    /// How this type's values are encoded. Defaults to ``ParameterEncodingOptions/default``.
    ///
    /// The options of the top-level type apply to the whole value, nested values included,
    /// so one request is encoded consistently.
    static var encodingOptions: ParameterEncodingOptions { get }
}

extension Serializable {
    /// ``ParameterEncodingOptions/default``: snake_case keys, `tags[]` arrays, `true`/`false`,
    /// ISO 8601 dates, nil left out, spaces as `%20`.
    public static var encodingOptions: ParameterEncodingOptions { .default }
}
