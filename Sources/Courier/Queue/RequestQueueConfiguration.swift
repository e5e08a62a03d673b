import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a ``RequestQueue`` works: where results are delivered, how many requests run at once,
/// timeouts, and the settings handed to the transport.
///
/// ```swift
/// var config = RequestQueueConfiguration.default
/// config.callbackQueue = DispatchQueue(label: "results")
/// config.maxConcurrentRequests = 8
/// let queue = RequestQueue(configuration: config, baseURL: URL(string: "https://api.example.com"))
/// ```
public struct RequestQueueConfiguration: Sendable {
    /// Where observers are called. Default: `.main`, as apps expect.
    ///
    /// A command-line program on Linux runs main-queue work only while the main thread
    /// serves the queue: from an `async` `@main`, under `dispatchMain()`, or while
    /// `RunLoop.main` runs. Otherwise pass a queue of your own.
    ///
    /// Results that end together are delivered to it in one block, in order (see "Order and
    /// completion" in <doc:ObservingResults>).
    public var callbackQueue: DispatchQueue = .main

    /// How many requests may be in flight at once; further ones wait, first in first out.
    /// Default: 6. Values below 1 count as 1. The session's `httpMaximumConnectionsPerHost`
    /// is raised to this number when it is lower, so that the limit is really reached.
    public var maxConcurrentRequests: Int = 6

    /// The timeout in seconds of requests that set no ``Request/timeout`` of their own: the
    /// longest time from sending a request to having its whole response. Default: 60.
    /// The queue enforces it itself, since Linux's URLSession ignores `URLRequest.timeoutInterval`.
    public var timeoutInterval: TimeInterval = 60

    /// The session settings (cookies, cache, extra headers, proxies…) handed to the transport as
    /// ``TransportSettings/sessionConfiguration``. Default: `.default`. Courier's URLSession
    /// transport honours them all; a custom transport documents which it honours. The transport
    /// works from a copy: changing this object afterwards has no effect.
    public var sessionConfiguration: URLSessionConfiguration = .default

    /// How many finished results the queue keeps for observers added after their
    /// request finished. Default: 256. Results are also dropped after ``resultRetentionInterval``.
    /// An observer added for a dropped result gets ``RequestError/resultUnavailable(_:)``.
    public var resultRetentionCount: Int = 256

    /// How long, in seconds, the queue keeps finished results for late observers. Default: 30.
    public var resultRetentionInterval: TimeInterval = 30

    /// How JSON bodies are decoded into `Decodable` response types, unless a request says
    /// otherwise (``Request/decoding``). Default: ``ResponseDecoding/default``, a plain
    /// `JSONDecoder`.
    public var decoding: ResponseDecoding = .default

    /// Whether and how far redirects are followed, unless a request says otherwise
    /// (``Request/redirectPolicy``). Default: ``RedirectPolicy/default``, up to 10.
    /// When a redirect leaves the origin (scheme, host or port), `Authorization`,
    /// `Proxy-Authorization`, `Cookie` and the ``sensitiveHeaders`` are not sent on.
    /// A 307 or 308 repeats the method and the body; a 303 (and a 301/302 after a POST) becomes
    /// a GET without a body.
    public var redirectPolicy: RedirectPolicy = .default

    /// More headers, besides `Authorization`, `Proxy-Authorization` and `Cookie`, never sent to
    /// another origin on a redirect, such as `["X-Api-Key"]`. Case-insensitive. Default: none.
    public var sensitiveHeaders: Set<String> = []

    /// Credentials that answer HTTP Basic and Digest challenges (once per request); Linux's
    /// URLSession answers Basic only, the curl transport both. Default: `nil`:
    /// a 401 or 407 then ends the request at once as ``RequestError/validationFailed(_:body:)``
    /// with the response's status and headers.
    public var credentials: HTTPCredentials?

    /// The largest body of a buffered response, in bytes; a larger one ends its request with
    /// ``RequestError/responseTooLarge(limit:)`` as soon as it is known (from `Content-Length`,
    /// or while the body arrives), without buffering the rest. Default:
    /// ``defaultMaximumResponseSize`` (64 MiB): far more than any sane JSON, far below memory.
    /// `nil` for no limit. Streams (``RequestQueue/stream(_:priority:options:)``) and downloads
    /// (``RequestQueue/download(_:to:priority:options:)``) are not limited by it: they are the way
    /// to receive larger bodies.
    ///
    /// The curl transport counts decoded bytes, so a compression bomb stops at the limit too, and
    /// its memory stays near the limit. With a limit, the URLSession transport receives bodies
    /// through its session's delegate, which on Linux costs throughput (see BENCHMARKS.md), and
    /// Linux's URLSession reads ahead of its delegate: from a fast server it can take hundreds of
    /// megabytes before the transfer stops.
    public var maximumResponseSize: Int? = RequestQueueConfiguration.defaultMaximumResponseSize

    /// The default ``maximumResponseSize``: 64 MiB.
    public static let defaultMaximumResponseSize = 64 << 20

    /// Certificate authorities to trust besides the system's, as PEM files: a private CA, or a
    /// test server's. Server certificates are always verified; this only adds roots. Default: none.
    ///
    /// ```swift
    /// config.trustedCertificates = [URL(fileURLWithPath: "/etc/myapp/internal-ca.pem")]
    /// ```
    /// Honoured by the curl transport (Linux). Linux's URLSession cannot take extra roots per
    /// session; there, and on Apple platforms, a file that cannot be used fails requests with
    /// ``RequestError/transportFailed(_:)`` (`.secureConnectionFailed`) saying so, rather than
    /// being ignored.
    public var trustedCertificates: [URL] = []

    /// Pinned server keys, client certificates, self-signed test servers and the oldest TLS
    /// version accepted, per queue or per host (see ``TLSConfiguration``). Default: none of them,
    /// TLS 1.2 and later.
    ///
    /// ```swift
    /// config.tls.hosts["payments.example.com"] = HostTLS(trust: .pinnedKeys([currentKeyPin, nextKeyPin]))
    /// ```
    /// Honoured by the curl transport (Linux); the URLSession transport fails every request with a
    /// ``TLSFailure`` when anything but the default is set, rather than send it less protected.
    public var tls = TLSConfiguration()

    /// Where requests go. Default: ``RequestTransport/network``; ``RequestTransport/fixtures(_:)``
    /// answers from fixtures (tests, demos), ``RequestTransport/recording(into:)`` captures them.
    public var transport: RequestTransport = .network

    /// The HTTP cache that answers and stores buffered requests (see ``ResponseCache`` and
    /// ``Request/cachePolicy``). Default: a cache of this configuration's own, in memory only,
    /// of ``ResponseCache/defaultMemoryCapacity`` (16 MiB). `nil` turns caching off.
    ///
    /// On by default because it only does what the responses' own headers allow, as a browser or
    /// URLCache would: a response without `Cache-Control`, `Expires` or `Last-Modified` is never
    /// answered from it without asking the origin (unless a request's policy accepts old data).
    /// In memory by default because a folder outlives the process: give one to keep responses
    /// across launches and work offline:
    /// ```swift
    /// configuration.cache = try ResponseCache(directory: ResponseCache.standardDirectory(named: "api"))
    /// ```
    /// Streams and downloads bypass it. Copies of a configuration share its cache, so queues
    /// made from one configuration share responses.
    public var cache: ResponseCache? = ResponseCache()

    /// Whether identical `GET` and `HEAD` requests added while one is in flight share its
    /// transfer. Default: `true`.
    ///
    /// Identical means the same URL, the same header fields as sent (after delegates and the
    /// authenticator: different credentials never share), the same ``Request/cachePolicy``, and
    /// no body. Five views asking for one profile at once make one request; each still gets its
    /// own ``RequestID``, delegate calls, observers and result, and cancelling one leaves the
    /// others' transfer running (cancelling all of them cancels it). Waiting participants hold no
    /// concurrency slot. A request opts out with ``Request/sharesIdenticalRequests``; streams and
    /// downloads never share.
    public var sharesIdenticalRequests = true

    /// Whether failed requests are tried again. Default: `nil`, never.
    public var retryPolicy: RetryPolicy?

    /// Adds credentials to every request and refreshes them when the server refuses them.
    /// Default: `nil`.
    public var authenticator: (any Authenticator)?

    /// Where the queue journals durable requests (``RequestQueue/addDurably(_:lane:key:)``), which
    /// response types their results decode into after a restart, and how long they are tried.
    /// Default: `nil`, no journal: ``RequestQueue/addDurably(_:lane:key:)`` throws
    /// ``JournalError/Kind/notConfigured``, and ordinary requests cost nothing more for it.
    ///
    /// Open a queue with durability with ``RequestQueue/open(configuration:delegate:baseURL:)``,
    /// which says at once when the journal cannot be used:
    /// ```swift
    /// configuration.durability = Durability(folder: Durability.standardFolder(named: "api"),
    ///                                       responseTypes: [Message.self])
    /// let queue = try RequestQueue.open(configuration: configuration, baseURL: api)
    /// ```
    public var durability: Durability?

    /// What requests do while the network or their origin is gone (see ``NetworkStatus``):
    /// `.wait` holds them, out of their concurrency slots, until it answers again (their timeout
    /// still runs); a request may choose otherwise with ``Request/whileOffline``.
    /// Default: ``OfflinePolicy/fail``, sent anyway and failing as the network fails. Durable
    /// requests always wait.
    /// ```swift
    /// configuration.whileOffline = .wait
    /// let queue = RequestQueue(configuration: configuration, baseURL: api)
    /// queue.pause()     // the app's own switch: nothing starts until resume()
    /// ```
    public var whileOffline: OfflinePolicy = .fail

    /// Creates the default configuration.
    public init() {}

    /// The default configuration: callbacks on `.main`, 6 requests at once, 60-second timeouts.
    public static var `default`: RequestQueueConfiguration { RequestQueueConfiguration() }
}
