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
        case fixtures(FixtureTransport)
        case recording(URL)
        case custom(@Sendable (TransportSettings) -> any Transport)
    }

    let kind: Kind

    /// URLSession, with the queue's session configuration. The default.
    public static let network = RequestTransport(kind: .network)

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
        case .network: URLSessionTransport(settings: settings)
        case .fixtures(let fixtures): fixtures
        case .recording(let directory): FixtureRecorder(network: URLSessionTransport(settings: settings), directory: directory)
        case .custom(let makeTransport): makeTransport(settings)
        }
    }
}
