import Foundation

/// Where a queue's requests go: the network, fixtures, or the network while recording fixtures.
///
/// ```swift
/// config.transport = .fixtures(fixtures)                 // tests and demos: no network
/// config.transport = .recording(into: fixturesFolder)    // capture a session once
/// ```
public struct RequestTransport: Sendable {
    enum Kind: Sendable {
        case network
        case fixtures(FixtureTransport)
        case recording(URL)
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
}
