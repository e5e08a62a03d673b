/// An HTTP request method.
///
/// The common methods are constants (`.get`, `.post`…); any other token works too:
/// ```swift
/// let purge = HTTPMethod(rawValue: "PURGE")
/// ```
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method as sent on the wire, in upper case.
    public let rawValue: String

    /// Creates a method from its name; the name is upper-cased (`"get"` is `GET`).
    public init(rawValue: String) {
        self.rawValue = rawValue.uppercased()
    }

    /// `GET`: read a resource. Parameters go in the query string.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`: a `GET` without the body.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`: create, or process the body. Not retried by the default ``RetryPolicy``.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`: replace a resource with the body.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`: change part of a resource. Not retried by the default ``RetryPolicy``.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`: remove a resource. Plain parameters go in the query string.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `OPTIONS`: ask what the server allows.
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `TRACE`: ask the server to echo the request.
    public static let trace = HTTPMethod(rawValue: "TRACE")
    /// `CONNECT`: ask a proxy for a tunnel.
    public static let connect = HTTPMethod(rawValue: "CONNECT")

    public var description: String { rawValue }
}
