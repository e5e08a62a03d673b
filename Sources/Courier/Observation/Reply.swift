import Foundation

/// A request's value with the response it came from: status, header fields, final URL, and the
/// request's metrics, which say where the response came from (the network or the cache).
///
/// ```swift
/// let reply = try await queue.reply(to: PostsRequest(page: 2))
/// show(reply.value)                                       // [Post]
/// nextPage = reply.headerFields["Link"]                   // the head, in any case
/// remaining = reply.headerFields["X-RateLimit-Remaining"]
/// if reply.source == .network { … }                       // or .cache(.fresh)…
/// ```
/// An ID observer gets one by asking for it:
/// ```swift
/// queue.addObserver(for: id) { (result: Result<Reply<[Post]>, RequestError>) in … }
/// ```
public struct Reply<Value: Sendable>: Sendable {
    /// The value the request's response type made.
    public let value: Value
    /// The status line and header fields of the response the value was made from.
    public let head: ResponseHead
    /// What happened to the request: attempts, redirects, bytes, timings, and the source.
    public let metrics: RequestMetrics

    /// The status code.
    public var status: Int { head.status }
    /// The header fields, in order, looked up by name in any case.
    public var headerFields: HTTPFields { head.headerFields }
    /// The URL that answered: the request's, or the last one a redirect led to.
    public var url: URL { head.url }
    /// Where the response came from: the network, or the queue's cache and how fresh it was.
    public var source: ResponseSource? { metrics.source }
}

/// A value the queue made from a buffered response, with its head, and once the request ended,
/// its metrics: what observers of the value alone or of a ``Reply`` are both typed from.
struct MadeValue: Sendable {
    let value: any Sendable
    let head: ResponseHead
    var metrics: RequestMetrics?
    /// ``TransportResponse/freshFor``: how long a fresh answer of the cache stays fresh.
    var freshFor: Double?
    /// The body the value was made from, kept only for a durable request, whose journal records it.
    var rawBody: Data?
}

/// ``Reply`` seen from code that does not know its `Value`.
protocol ReplyType {
    /// The type of the value: what the request's response type must be.
    static var valueType: Any.Type { get }
    /// The reply for a made value, or nil when the value is not a `Value`.
    static func make(from made: MadeValue, metrics: RequestMetrics) -> Self?
}

extension Reply: ReplyType {
    static var valueType: Any.Type { Value.self }

    static func make(from made: MadeValue, metrics: RequestMetrics) -> Reply? {
        guard let value = made.value as? Value else { return nil }
        return Reply(value: value, head: made.head, metrics: metrics)
    }
}
