import Foundation

/// Parameters sent as an `application/x-www-form-urlencoded` body built from their stored properties.
///
/// ```swift
/// struct LogInParameters: URLEncodedBodyData { let username: String; let password: String }
/// // username=ada&password=p%40ss
/// ```
/// The body follows the same rules as ``DefaultQueryString``. Browsers write spaces as `+`
/// in forms; set ``ParameterEncodingOptions/spaceStyle`` to ``ParameterEncodingOptions/SpaceStyle/plus``
/// to do the same (the default `%20` is understood by every server).
public protocol URLEncodedBodyData: Serializable, BodyData {}

extension URLEncodedBodyData {
    /// `application/x-www-form-urlencoded; charset=utf-8`.
    public var contentType: String { "application/x-www-form-urlencoded; charset=utf-8" }

    /// The form body built from the stored properties.
    /// Throws ``RequestError/invalidParameters(keyPath:reason:)`` for a value that cannot be encoded.
    public func encode() throws -> Data {
        try encodeFormBody(self)
    }
}
