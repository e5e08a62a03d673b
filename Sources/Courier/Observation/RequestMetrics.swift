import Foundation

/// What happened to one request, handed to ``RequestQueueDelegate/requestQueue(_:didFinishWith:)``
/// when it ends, whatever its result.
///
/// ```swift
/// func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics) {
///     log("\(metrics.id) \(metrics.statusCode ?? 0) in \(metrics.totalDuration) s, \(metrics.attempts) attempt(s)")
/// }
/// ```
public struct RequestMetrics: Sendable, Hashable {
    /// The request.
    public let id: RequestID
    /// When it was added to the queue.
    public let addedAt: Date
    /// When it was first handed to the transport; `nil` if it never was (cancelled while
    /// waiting, or its URL or parameters were invalid).
    public internal(set) var startedAt: Date?
    /// When it ended.
    public internal(set) var finishedAt: Date
    /// Attempts made: 1, plus retries and the resend after a credentials refresh.
    public internal(set) var attempts: Int
    /// Redirects followed, over all attempts.
    public internal(set) var redirects: Int
    /// Body bytes sent, over all attempts and redirects.
    public internal(set) var bytesSent: Int64
    /// Response body bytes received, over all attempts and redirects.
    public internal(set) var bytesReceived: Int64
    /// The status of the last response, if any arrived.
    public internal(set) var statusCode: Int?
    /// Where the last response came from: the network, or the queue's cache and how fresh it
    /// was; `nil` when no response arrived.
    public internal(set) var source: ResponseSource?
    /// The HTTP version the last response from the network arrived in. `nil` when none did, for
    /// streams and downloads, and through transports that do not report it (URLSession's, on
    /// Linux); the curl transport reports it.
    public internal(set) var httpVersion: HTTPVersion?
    /// The TLS version of the connection the last response from the network arrived on: the one
    /// negotiated, also on a reused connection. `nil` for plain HTTP, and where ``httpVersion``
    /// is `nil`; the curl transport reports it where libcurl uses OpenSSL (Linux distributions'
    /// libcurl does).
    public internal(set) var tlsVersion: TLSVersion?
    /// Why the network did not answer, when the cache answered in its place: the origin could
    /// not be reached and the stored response allowed it (`stale-if-error`), so the last
    /// response is stale (``source`` is `.cache(.stale)`) and the app may say it is offline.
    /// `nil` when the last response came from the origin or the cache answered by the rules alone.
    ///
    /// ```swift
    /// let reply = try await queue.reply(to: TimelineRequest())
    /// offlineBanner.isHidden = reply.metrics.networkFailure == nil
    /// ```
    public internal(set) var networkFailure: URLError?

    init(id: RequestID, addedAt: Date) {
        self.id = id
        self.addedAt = addedAt
        finishedAt = addedAt
        attempts = 0
        redirects = 0
        bytesSent = 0
        bytesReceived = 0
    }

    /// Seconds from adding to the end.
    public var totalDuration: TimeInterval { finishedAt.timeIntervalSince(addedAt) }
    /// Seconds spent waiting for a free slot before the first send.
    public var waitingDuration: TimeInterval { (startedAt ?? finishedAt).timeIntervalSince(addedAt) }
}
