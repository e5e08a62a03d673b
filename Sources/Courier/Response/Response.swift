import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A value the queue makes from an HTTP response and hands to observers.
///
/// A `Decodable` type needs nothing more: Courier decodes the body as JSON.
/// ```swift
/// struct Profile: Response, Decodable { let name: String }
/// ```
/// Any other type says how it is made:
/// ```swift
/// struct Banner: Response {
///     let text: String
///     init(data: ResponseData, response: HTTPURLResponse) throws {
///         guard let text = data.string else { throw BannerError.notText }
///         self.text = text
///     }
/// }
/// ```
public protocol Response: Sendable {
    /// Makes the response from the body and the HTTP response. Called on the queue's
    /// background work queue, only for responses that ``validate(_:)`` accepted.
    /// A thrown error ends the request with ``RequestError/serializationFailed(type:underlying:)``
    /// (a thrown ``RequestError`` is passed on as it is).
    init(data: ResponseData, response: HTTPURLResponse) throws

    /// Whether the response is acceptable. Default: a status code in 200–299.
    /// A rejected response ends the request with ``RequestError/validationFailed(_:body:)``.
    static func validate(_ response: HTTPURLResponse) -> Bool
}

extension Response {
    public static func validate(_ response: HTTPURLResponse) -> Bool {
        (200..<300).contains(response.statusCode)
    }
}

extension Response where Self: Decodable {
    /// Decodes the body as JSON with a plain `JSONDecoder`.
    public init(data: ResponseData, response: HTTPURLResponse) throws {
        self = try data.decode(Self.self)
    }
}

/// A response whose body does not matter: it accepts any body, including none
/// (a `204 No Content`, or the answer to a `HEAD`).
public struct EmptyResponse: Response, Hashable {
    /// Creates an empty response.
    public init() {}
    public init(data: ResponseData, response: HTTPURLResponse) {}
}

/// A hook that a ``Response`` type can adopt to learn about the HTTP response it was made from.
///
/// Called on the queue's background work queue after the queue's and the request's
/// delegates, and before observers.
public protocol ResponseDelegate {
    /// Called on the response the queue just made, with the HTTP response it came from.
    func responseDidReceive(_ response: HTTPURLResponse)
}

extension ResponseDelegate {
    public func responseDidReceive(_ response: HTTPURLResponse) {}
}
