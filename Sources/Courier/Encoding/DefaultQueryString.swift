import Foundation

/// Parameters encoded into the URL's query string from their stored properties.
///
/// ```swift
/// struct SearchParameters: DefaultQueryString { let query: String; let page: Int; let tags: [String] }
/// // query=swift%20six&page=2&tags%5B%5D=a&tags%5B%5D=b
/// ```
/// Nested values are written `user%5Baddress%5D%5Bcity%5D=Paris` (that is `user[address][city]`,
/// with the brackets percent-encoded), arrays by ``ParameterEncodingOptions/arrayStyle``.
/// Keys and values are percent-encoded per RFC 3986: only `A–Z a–z 0–9 - . _ ~` stay as they are.
public protocol DefaultQueryString: Serializable, QueryString {}

extension DefaultQueryString {
    /// The percent-encoded query built from the stored properties, without a leading `?`.
    /// Throws ``RequestError/invalidParameters(keyPath:reason:)`` for a value that cannot be encoded.
    public func encode() throws -> String {
        try encodeQuery(self)
    }
}
