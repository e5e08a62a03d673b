import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A type that makes itself from an HTTP response, for bodies that are not JSON or that need
/// their head.
///
/// A request's ``Request/ResponseType`` need not adopt it: any `Decodable & Sendable` type
/// (arrays, dictionaries and optionals too) is decoded from JSON by itself, and `String` and
/// `Data` take the body as text and as bytes. Adopt `Response` to make a value your own way:
/// ```swift
/// struct Banner: Response {
///     let text: String
///     let language: String?
///     init(body: ResponseData, head: ResponseHead) throws {
///         guard let text = body.string else { throw BannerError.notText }
///         self.text = text
///         language = head.headerFields["Content-Language"]
///     }
/// }
/// ```
///
/// ## Migrating from `HTTPURLResponse`
/// Types written for Courier 1 implement `init(data:response:)` and `validate(_:)`, which take
/// an `HTTPURLResponse`. They keep working, deprecated: the queue makes an `HTTPURLResponse` for
/// them, which costs a little on every response. To move on:
/// - A `Decodable` type that adopted `Response` only to be decoded needs it no more: drop the
///   conformance.
/// - `init(data:response:)` becomes ``init(body:head:)``: `response.statusCode` is
///   `head.status`, `response.value(forHTTPHeaderField: "ETag")` is `head.headerFields["ETag"]`,
///   and `head.httpURLResponse` is there for code that needs the Foundation type.
/// - `validate(_:)` becomes ``accepts(_:)``.
public protocol Response: Sendable {
    /// Makes the value from the body and the head. Called on the queue's background work
    /// queue, only for responses that ``accepts(_:)`` accepted. A thrown error ends the request
    /// with ``RequestError/serializationFailed(type:underlying:)`` (a thrown ``RequestError`` is
    /// passed on as it is).
    ///
    /// Default for `Decodable` types: the body decoded from JSON with the request's
    /// ``ResponseDecoding``.
    init(body: ResponseData, head: ResponseHead) throws

    /// Whether the response is acceptable. Default: a status code in 200–299.
    /// A rejected response ends the request with ``RequestError/validationFailed(_:body:)``.
    static func accepts(_ head: ResponseHead) -> Bool

    /// The Courier 1 form of ``init(body:head:)``, taking an `HTTPURLResponse`: still called
    /// for types that implement it and not ``init(body:head:)``, with an `HTTPURLResponse` made
    /// for them. Implement ``init(body:head:)`` instead.
    init(data: ResponseData, response: HTTPURLResponse) throws

    /// The Courier 1 form of ``accepts(_:)``, taking an `HTTPURLResponse`: still asked by the
    /// default ``accepts(_:)``. Implement ``accepts(_:)`` instead.
    static func validate(_ response: HTTPURLResponse) -> Bool
}

extension Response {
    /// Calls the Courier 1 `init(data:response:)` with an `HTTPURLResponse` made from `head`.
    @available(*, deprecated, message: "implement init(body:head:), which takes a ResponseHead, rather than init(data:response:)")
    public init(body: ResponseData, head: ResponseHead) throws {
        try self.init(data: body, response: head.httpURLResponse)
    }

    /// Throws ``RequestError/serializationFailed(type:underlying:)``: a type that implements
    /// neither ``init(body:head:)`` nor this cannot be made from a response.
    public init(data: ResponseData, response: HTTPURLResponse) throws {
        throw RequestError.serializationFailed(type: String(reflecting: Self.self), underlying: MissingInitializer())
    }

    /// Asks ``validate(_:)`` when the type implements it; otherwise accepts 200–299, as that
    /// one's default does. Implement this rather than `validate(_:)`, which needs an
    /// `HTTPURLResponse` made for it.
    public static func accepts(_ head: ResponseHead) -> Bool {
        CourierOneHooks.call(.validate, of: Self.self, legacy: { validate(head.httpURLResponse) }, byDefault: { head.isSuccess })
    }

    /// Accepts a status code in 200–299.
    public static func validate(_ response: HTTPURLResponse) -> Bool {
        CourierOneHooks.defaultRan(for: Self.self)
        return (200..<300).contains(response.statusCode)
    }
}

extension Response where Self: Decodable {
    /// Decodes the body as JSON with the request's ``Request/decoding``, or the queue's
    /// ``RequestQueueConfiguration/decoding``; outside a queue, with ``ResponseDecoding/default``.
    public init(body: ResponseData, head: ResponseHead) throws {
        self = try (ResponseDecoding.current ?? .default).decode(Self.self, from: body)
    }
}

/// Why a type that adopted ``Response`` cannot be made: it implements no initializer.
struct MissingInitializer: Error, CustomStringConvertible {
    var description: String {
        "the type adopts Response but implements neither init(body:head:) nor init(data:response:); "
            + "implement init(body:head:), or drop Response and adopt Decodable to be decoded from JSON"
    }
}

/// A response whose body does not matter: it accepts any body, including none
/// (a `204 No Content`, or the answer to a `HEAD`).
///
/// It is `Decodable` too (from any value), so that a generic request whose response type must be
/// `Decodable` can use it; the queue still makes it with ``init(body:head:)``, reading nothing.
public struct EmptyResponse: Response, Hashable, Decodable {
    /// Creates an empty response.
    public init() {}
    public init(body: ResponseData, head: ResponseHead) {}
    /// Reads nothing: any value decodes.
    public init(from decoder: any Decoder) {}
    /// Accepts a status code in 200–299 (Courier's own types decide from the head directly).
    public static func accepts(_ head: ResponseHead) -> Bool { head.isSuccess }
}

/// The body as text, in the charset its `Content-Type` names (UTF-8, ISO-8859-1, Windows-1252,
/// US-ASCII, UTF-16), UTF-8 when it names none. A body that is not valid text in its charset, or
/// a charset not in that list, fails with ``RequestError/serializationFailed(type:underlying:)``.
extension String: Response {
    public init(body: ResponseData, head: ResponseHead) throws {
        if let text = body.text(contentType: head.headerFields["Content-Type"]) {
            self = text
        } else {
            throw RequestError.serializationFailed(type: "Swift.String", underlying: NotText(contentType: head.headerFields["Content-Type"]))
        }
    }

    /// Accepts a status code in 200–299.
    public static func accepts(_ head: ResponseHead) -> Bool { head.isSuccess }
}

/// The body's bytes as they arrived (decoded from any `Content-Encoding` the transport asked for).
extension Data: Response {
    public init(body: ResponseData, head: ResponseHead) {
        self = body.data
    }

    /// Accepts a status code in 200–299.
    public static func accepts(_ head: ResponseHead) -> Bool { head.isSuccess }
}

/// Why a body is not text.
private struct NotText: Error, CustomStringConvertible {
    let contentType: String?
    var description: String {
        "the body is not valid text in its charset (Content-Type: \(contentType ?? "none")); "
            + "use Data as the response type to take its bytes"
    }
}

/// A hook that a response type can adopt to learn about the HTTP response it was made from.
///
/// Called on the queue's background work queue after the queue's and the request's
/// delegates, and before observers.
public protocol ResponseDelegate {
    /// Called on the value the queue just made, with the head it came from.
    func responseDidReceive(_ head: ResponseHead)

    /// The Courier 1 form, taking an `HTTPURLResponse`: still called for types that implement it
    /// rather than the form taking a ``ResponseHead``, which is the one to implement.
    func responseDidReceive(_ response: HTTPURLResponse)
}

extension ResponseDelegate {
    /// Calls the Courier 1 form with an `HTTPURLResponse` made from `head`.
    @available(*, deprecated, message: "implement responseDidReceive(_:) taking a ResponseHead, rather than an HTTPURLResponse")
    public func responseDidReceive(_ head: ResponseHead) {
        responseDidReceive(head.httpURLResponse)
    }

    /// Does nothing.
    public func responseDidReceive(_ response: HTTPURLResponse) {}
}

/// A response as it came, whatever its status: the head and the body, for a request that wants
/// to see a `304`, a `3xx` it does not follow, or an error status itself.
///
/// ```swift
/// struct Probe: Request {
///     typealias ResponseType = RawResponse
///     var path: String { "/old-page" }
///     var redirectPolicy: RedirectPolicy? { .never }
/// }
/// let raw = try await queue.send(Probe())
/// print(raw.status, raw.head.headerFields["Location"] ?? "")   // 301 /new-page
/// ```
public struct RawResponse: Response, Hashable {
    /// The status line and header fields.
    public let head: ResponseHead
    /// The body as it arrived (decoded from any `Content-Encoding` the transport asked for).
    public let body: ResponseData

    /// The status code.
    public var status: Int { head.status }

    public init(body: ResponseData, head: ResponseHead) {
        self.head = head
        self.body = body
    }

    /// Accepts every status.
    public static func accepts(_ head: ResponseHead) -> Bool { true }
}
