import Foundation

/// Parameters sent as a JSON body (RFC 8259) built from their stored properties.
///
/// ```swift
/// struct ProfileUpdate: JSONBodyData { let displayName: String; let avatar: URL?; let address: Address }
/// // {"display_name":"Ada","address":{"city":"Paris"}}
/// ```
/// Nested structs and classes become objects, arrays arrays, `[String: Value]` dictionaries objects
/// with sorted keys. A nil property is left out unless ``ParameterEncodingOptions/nilStyle`` is
/// ``ParameterEncodingOptions/NilStyle/null``. NaN and infinity cannot be written in JSON and throw.
public protocol JSONBodyData: Serializable, BodyData {}

extension JSONBodyData {
    /// `application/json` (JSON is always UTF-8, so no charset parameter is needed).
    public var contentType: String { "application/json" }

    /// The JSON body built from the stored properties, compact and with no trailing newline.
    /// Throws ``RequestError/invalidParameters(keyPath:reason:)`` for a value that cannot be encoded.
    public func encode() throws -> Data {
        try encodeJSONBody(self)
    }
}
