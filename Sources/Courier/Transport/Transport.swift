import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends HTTP requests for a ``RequestQueue``: the queue's only way out to the network.
///
/// Courier ships transports for the network (URLSession), for fixtures (``FixtureTransport``)
/// and for recording fixtures; ``RequestTransport/custom(_:)`` plugs in any other, for
/// instrumentation, an in-process server in tests, or another HTTP stack.
///
/// ```swift
/// var config = RequestQueueConfiguration.default
/// config.transport = .custom { settings in MyTransport(settings: settings) }
/// ```
///
/// ## The contract
/// The queue does the work around a transfer, so a transport stays small. A transport:
/// - **Sends exactly the request it is given.** The queue has already applied delegates, the
///   authenticator and header checks. It never follows redirects: it hands a 3xx response back
///   as it is, and the queue follows it (leaving credentials behind across origins).
/// - **Need not enforce timeouts.** The queue ends a request whose timeout passed and cancels its
///   task. A transport may still honour transport-level limits it is given in
///   ``TransportSettings/sessionConfiguration``.
/// - **Completes each task exactly once**, on any thread, once the task was resumed: with the
///   response, whatever its status (a 404 is a response, not an error), or with an error.
///   After ``TransportTask/cancel()`` it completes with ``RequestError/cancelled`` unless it had
///   already completed. A task that is cancelled before it is resumed may complete or not.
///   (The queue ignores a second completion, but a transport must not rely on that.)
/// - **Reports failures as ``RequestError/transportFailed(_:)``** with the `URLError` code that
///   says what happened (`.cannotConnectToHost`, `.networkConnectionLost`, `.cannotFindHost`,
///   `.secureConnectionFailed`, `.badServerResponse`…), since ``RetryPolicy`` decides by those
///   codes; ``RequestError/cancelled``, ``RequestError/timedOut`` and
///   ``RequestError/responseTooLarge(limit:)`` for those cases.
/// - **Reports progress on demand** through ``TransportTask/progress``, which the queue reads
///   only while someone observes it.
/// - **Runs no user code.** The queue moves every completion onto its own work queue before it
///   decodes, calls delegates or observers, so a transport's I/O thread is never held up by them.
///   A transport that calls its completions on ``TransportSettings/completionQueue`` saves that
///   hop.
/// - Honours the ``TransportSettings`` it can, and says in its documentation which it ignores.
///
/// A transport delivers a response in one of two ways:
/// - **buffered** (``makeTask(for:completion:)``): the whole body at once. Every transport
///   implements this.
/// - **streamed** (``makeStreamingTask(for:receiver:)``): the head, then the body in chunks
///   as they arrive, with back-pressure, then the end. The default implementation delivers a
///   buffered response that way; a transport that can do better overrides it.
public protocol Transport: Sendable {
    /// Makes a task that sends `request` and delivers its whole response at once.
    ///
    /// The task does nothing until it is resumed; once resumed it calls `completion` exactly
    /// once, on any thread.
    func makeTask(
        for request: TransportRequest,
        completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void
    ) -> any TransportTask

    /// Makes a task that sends `request` and delivers its response to `receiver` as it arrives.
    ///
    /// Once resumed, the task hands the receiver the response head at most once, as a
    /// ``ResponseHead`` or as an `HTTPURLResponse` (`transportDidReceive(_:)` takes either), then
    /// ``TransportStreamReceiver/transportDidReceive(_:)-(Data)``
    /// for each chunk of the body in order, then ``TransportStreamReceiver/transportDidComplete(_:)``
    /// exactly once (`nil` after a complete body). Calls for one task never overlap.
    /// When the receiver answers a chunk with ``TransportDemand/pause``, a transport that can pause
    /// delivers nothing more until ``TransportTask/resumeDelivery()``; one that cannot keeps
    /// delivering and documents how much it may deliver meanwhile.
    ///
    /// Default: the buffered task's response delivered as a head, one chunk and the end.
    func makeStreamingTask(for request: TransportRequest, receiver: any TransportStreamReceiver) -> any TransportTask

    /// Cancels everything in flight and releases the transport's resources. The queue calls it
    /// once, when it is released; the transport makes no new tasks afterwards.
    func invalidate()
}

/// One request a ``Transport`` sends.
public protocol TransportTask: Sendable {
    /// Starts sending. Called once.
    func resume()

    /// Stops the request. Once resumed, the task then completes with ``RequestError/cancelled``
    /// unless it had completed already. Safe to call more than once, and from any thread.
    func cancel()

    /// Bytes sent and received so far, with their totals when they are known.
    var progress: TransferProgress { get }

    /// Lets a streamed delivery that the receiver paused (``TransportDemand/pause``) go on.
    ///
    /// Default: does nothing, which is right for a task that never pauses.
    func resumeDelivery()
}

extension TransportTask {
    public func resumeDelivery() {}
}

/// What a ``Transport`` is asked to send.
public struct TransportRequest: Sendable {
    /// The request as it goes on the wire: URL, method, headers, and the body when it is in
    /// `httpBody`.
    public var urlRequest: URLRequest

    /// A file the body streams from, when `urlRequest.httpBody` is `nil` (multipart forms, which
    /// Courier writes to disk so that memory stays bounded). A transport sends it with a
    /// `Content-Length`, never reading it whole into memory.
    public var bodyFile: URL?

    /// The request's own header fields (``Request/headerFields``) in the order it gave them,
    /// repeated names apart, where `urlRequest` holds each name once with its values joined. A
    /// transport that can send several lines of one name sends these lines for a name while
    /// `urlRequest`'s value is still their join (a delegate may have changed it since); one that
    /// cannot, as URLSession cannot, sends `urlRequest` as it is. Default: none.
    public var headerFields: HTTPFields

    /// What the queue's own layers (shared transfers, the cache) know of the request;
    /// transports never read it.
    var context = TransportContext()

    /// Creates a request to send.
    /// - Parameters:
    ///   - urlRequest: What goes on the wire.
    ///   - bodyFile: The file the body streams from, if any. Default: `nil`.
    ///   - headerFields: The request's own fields in order, repeated names apart. Default: none.
    public init(urlRequest: URLRequest, bodyFile: URL? = nil, headerFields: HTTPFields = []) {
        self.urlRequest = urlRequest
        self.bodyFile = bodyFile
        self.headerFields = headerFields
    }
}

/// A complete HTTP response, as a ``Transport`` hands it back.
///
/// A transport that parses heads itself makes it with ``init(head:body:)``, which spares the
/// queue an `HTTPURLResponse` (costly on Linux) unless user code asks for one; one built on
/// URLSession passes the `HTTPURLResponse` it has with ``init(response:body:)``.
public struct TransportResponse: Sendable {
    /// The status line and header fields, with the URL answered.
    public var head: ResponseHead
    /// The whole body, decoded from any `Content-Encoding` the transport asked for.
    public var body: Data

    /// Where the response came from: the network unless the queue's cache answered.
    var source = ResponseSource.network

    /// How many more seconds the response stays fresh (RFC 9111 §4.2), when the queue's cache
    /// answered with a fresh stored one and so has computed it: an observable resource takes it
    /// rather than reading the same fields again. `nil` otherwise.
    var freshFor: Double?

    /// The HTTP and TLS versions it arrived in, when the transport reports them (the curl
    /// transport does); for ``RequestMetrics``.
    var negotiated: NegotiatedVersions?

    /// The transport's failure that a stored response answers in place of (`stale-if-error`):
    /// the request got an answer, but the network or its origin is gone, which the queue's
    /// connectivity must still learn (``RequestMetrics/networkFailure``). `nil` otherwise.
    var networkFailure: URLError?

    /// Creates a response from its head.
    public init(head: ResponseHead, body: Data) {
        self.head = head
        self.body = body
    }

    /// Creates a response from a Foundation response.
    public init(response: HTTPURLResponse, body: Data) {
        self.init(head: ResponseHead(response), body: body)
    }

    /// The head as a Foundation `HTTPURLResponse` (``ResponseHead/httpURLResponse``), made when
    /// first asked for; setting it replaces ``head``.
    public var response: HTTPURLResponse {
        get { head.httpURLResponse }
        set { head = ResponseHead(newValue) }
    }
}

/// The HTTP and TLS versions a response arrived in.
struct NegotiatedVersions: Sendable, Hashable {
    var http: HTTPVersion?
    /// `nil` for plain HTTP, or where the TLS library did not say.
    var tls: TLSVersion?
}

/// Whether a streamed delivery may go on after a chunk.
public enum TransportDemand: Sendable, Hashable {
    /// Deliver more as it arrives.
    case more
    /// Deliver nothing more until ``TransportTask/resumeDelivery()``: the receiver's buffer is full.
    case pause
}

/// Receives a streamed response from a ``Transport`` (see
/// ``Transport/makeStreamingTask(for:receiver:)``).
///
/// A transport hands the head over once, in either form: as a ``ResponseHead`` (Courier's
/// transports), or as the `HTTPURLResponse` it has (one built on URLSession).
public protocol TransportStreamReceiver: AnyObject, Sendable {
    /// The response head: status and headers. Called at most once, before any chunk.
    func transportDidReceive(_ response: HTTPURLResponse)

    /// The response head, as a ``ResponseHead``: what a transport that parses heads itself calls
    /// instead of `transportDidReceive(_:)` with an `HTTPURLResponse`. Called at most once, before
    /// any chunk.
    ///
    /// Default: makes the head's `HTTPURLResponse` and passes it on.
    func transportDidReceive(_ head: ResponseHead)

    /// The next chunk of the body, in order. Returns whether the transport may deliver more now.
    func transportDidReceive(_ chunk: Data) -> TransportDemand

    /// The end of the transfer: `nil` after a complete body, otherwise the error that ended it.
    /// Called exactly once.
    func transportDidComplete(_ error: RequestError?)
}

extension TransportStreamReceiver {
    public func transportDidReceive(_ head: ResponseHead) {
        transportDidReceive(head.httpURLResponse)
    }
}

extension Transport {
    public func makeStreamingTask(for request: TransportRequest, receiver: any TransportStreamReceiver) -> any TransportTask {
        makeTask(for: request) { result in
            switch result {
            case .success(let response):
                receiver.transportDidReceive(response.head)
                if !response.body.isEmpty { _ = receiver.transportDidReceive(response.body) }
                receiver.transportDidComplete(nil)
            case .failure(let error):
                receiver.transportDidComplete(error)
            }
        }
    }
}

/// The queue's settings that concern a transport, handed to it when the queue makes it.
///
/// Each transport documents which it honours. Courier's curl transport honours all of them; its
/// URLSession transport all but ``trustedCertificates`` and ``tls``, which it refuses with an
/// error rather than ignore.
public struct TransportSettings: Sendable {
    /// The session settings of ``RequestQueueConfiguration/sessionConfiguration``: extra
    /// headers, cookies, proxies, caches, transport-level timeouts. A copy: changing it has no effect
    /// on the queue.
    public var sessionConfiguration: URLSessionConfiguration

    /// How many connections to open to one host at the most: the session configuration's
    /// `httpMaximumConnectionsPerHost`, raised to ``RequestQueueConfiguration/maxConcurrentRequests``
    /// when that is higher, so that the queue's limit is really reached.
    public var maximumConnectionsPerHost: Int

    /// Credentials for HTTP Basic and Digest challenges (``RequestQueueConfiguration/credentials``):
    /// answered once per request; without them a 401 or 407 is the response.
    public var credentials: HTTPCredentials?

    /// The largest response body to accept for buffered tasks
    /// (``RequestQueueConfiguration/maximumResponseSize``): a larger one completes with
    /// ``RequestError/responseTooLarge(limit:)`` without being buffered. `nil` for no limit.
    public var maximumResponseSize: Int?

    /// PEM files of certificate authorities to trust besides the system's
    /// (``RequestQueueConfiguration/trustedCertificates``). Verification itself stays on.
    public var trustedCertificates: [URL]

    /// Pinned keys, client certificates, self-signed test servers and the minimum TLS version
    /// (``RequestQueueConfiguration/tls``). A transport that cannot honour one of them fails its
    /// requests with a ``TLSFailure`` rather than send them less protected.
    public var tls: TLSConfiguration

    /// The queue's work queue, where it processes completions. A transport that calls its
    /// completions on this queue saves a thread hop per request; on any other, the queue moves
    /// them here itself.
    public var completionQueue: DispatchQueue

    /// Creates settings, for tests of a transport outside a queue.
    /// - Parameters:
    ///   - sessionConfiguration: Session settings. Default: `.default`.
    ///   - maximumConnectionsPerHost: Connections per host. Default: 6.
    ///   - credentials: Basic and Digest credentials. Default: `nil`.
    ///   - maximumResponseSize: The body limit of buffered tasks. Default: `nil`, no limit.
    ///   - trustedCertificates: Extra certificate authorities, as PEM files. Default: none.
    ///   - tls: Pins, client certificates and the minimum TLS version. Default: none, TLS 1.2.
    ///   - completionQueue: Where completions are welcome. Default: a new concurrent queue.
    public init(sessionConfiguration: URLSessionConfiguration = .default, maximumConnectionsPerHost: Int = 6,
                credentials: HTTPCredentials? = nil, maximumResponseSize: Int? = nil, trustedCertificates: [URL] = [],
                tls: TLSConfiguration = TLSConfiguration(),
                completionQueue: DispatchQueue = DispatchQueue(label: "Courier.transport.completions", attributes: .concurrent)) {
        self.trustedCertificates = trustedCertificates
        self.tls = tls
        self.sessionConfiguration = sessionConfiguration
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
        self.credentials = credentials
        self.maximumResponseSize = maximumResponseSize
        self.completionQueue = completionQueue
    }
}

extension RequestError {
    /// The error for a `URLError`: its cancelled, timed-out and too-large codes become Courier's own cases.
    init(_ error: URLError, maximumResponseSize: Int? = nil) {
        switch error.code {
        case .cancelled: self = .cancelled
        case .timedOut: self = .timedOut
        case .dataLengthExceedsMaximum: self = .responseTooLarge(limit: maximumResponseSize ?? 0)
        default: self = .transportFailed(error)
        }
    }
}
