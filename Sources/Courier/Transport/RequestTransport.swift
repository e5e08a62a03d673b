import Foundation

/// Where a queue's requests go: the network, fixtures, the network while recording fixtures,
/// or a ``Transport`` of your own.
///
/// ```swift
/// config.transport = .fixtures(fixtures)                 // tests and demos: no network
/// config.transport = .recording(into: fixturesFolder)    // capture a session once
/// config.transport = .custom { settings in MyTransport(settings: settings) }
/// ```
public struct RequestTransport: Sendable {
    enum Kind: Sendable {
        case network
        case urlSession
        case curl
        case fixtures(FixtureTransport)
        case recording(URL)
        case custom(@Sendable (TransportSettings) -> any Transport)
    }

    let kind: Kind

    /// The network, through the best transport of the platform. The default.
    ///
    /// On Linux that is ``curl`` (several times URLSession's speed, and without Linux
    /// URLSession's hangs on 401s and ignored timeouts); where libcurl cannot be used it is
    /// URLSession, and the queue says why once on standard error (``curlUnavailableReason``).
    /// On Apple platforms it is URLSession.
    public static let network = RequestTransport(kind: .network)

    /// URLSession, with the queue's session configuration.
    public static let urlSession = RequestTransport(kind: .urlSession)

    /// Courier's own transport on libcurl's multi interface (Linux): the `libcurl.so.4` that
    /// FoundationNetworking loads, driven from one thread of Courier's own. Where libcurl cannot be
    /// used (see ``curlUnavailableReason``), the queue uses URLSession instead.
    public static let curl = RequestTransport(kind: .curl)

    /// Why ``curl`` cannot be used in this process (libcurl missing or older than 7.68, or not
    /// Linux), or `nil` when it can.
    public static var curlUnavailableReason: String? {
        #if os(Linux)
        if case .failure(let reason) = CurlLibrary.availability { return reason.description }
        return nil
        #else
        return "the curl transport is for Linux; Apple platforms use URLSession"
        #endif
    }

    /// Answers from fixtures, never touching the network.
    public static func fixtures(_ fixtures: FixtureTransport) -> RequestTransport {
        RequestTransport(kind: .fixtures(fixtures))
    }

    /// Sends to the network and writes every exchange into `directory` as a fixture file that
    /// ``FixtureTransport/load(directory:)`` reads back.
    public static func recording(into directory: URL) -> RequestTransport {
        RequestTransport(kind: .recording(directory))
    }

    /// A transport of your own, made once per queue from the queue's settings.
    ///
    /// ```swift
    /// config.transport = .custom { settings in
    ///     LoggingTransport(wrapping: FixtureTransport(), settings: settings)
    /// }
    /// ```
    /// The transport must keep the contract written in ``Transport``'s documentation; the queue
    /// does everything else (redirects, timeouts, retries, credentials, delegates, observers).
    /// - Parameter makeTransport: Called once, when the queue is created, with the settings the
    ///   transport should honour.
    public static func custom(_ makeTransport: @escaping @Sendable (TransportSettings) -> any Transport) -> RequestTransport {
        RequestTransport(kind: .custom(makeTransport))
    }

    /// Makes the transport for a queue with these settings.
    func make(_ settings: TransportSettings) -> any Transport {
        switch kind {
        case .urlSession: URLSessionTransport(settings: settings)
        case .curl: Self.curlOrURLSession(settings)
        #if os(Linux)
        case .network: Self.curlOrURLSession(settings)
        #else
        case .network: URLSessionTransport(settings: settings)
        #endif
        case .fixtures(let fixtures): fixtures
        case .recording(let directory): FixtureRecorder(network: RequestTransport.network.make(settings), directory: directory)
        case .custom(let makeTransport): makeTransport(settings)
        }
    }

    /// The curl transport, or URLSession with the reason said once on standard error.
    private static func curlOrURLSession(_ settings: TransportSettings) -> any Transport {
        #if os(Linux)
        switch CurlTransport.make(settings: settings) {
        case .success(let transport): return transport
        case .failure(let reason): reportFallback(reason.description)
        }
        #else
        reportFallback(curlUnavailableReason ?? "")
        #endif
        return URLSessionTransport(settings: settings)
    }

    /// Says once per process why URLSession is used instead of the curl transport.
    private static func reportFallback(_ reason: String) {
        guard fallbackReported.take() else { return }
        FileHandle.standardError.write(Data("Courier: using URLSession instead of the curl transport: \(reason)\n".utf8))
    }

    private static let fallbackReported = Once()
}
