// Shared scaffolding for the tests that mirror the DocC articles in Sources/Courier/Courier.docc.
// Every queue made here answers from a FixtureTransport (no network) and calls observers on a
// private serial queue, as a command-line program would.
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum DocsSupport {
    /// The callback queue of every documentation test queue.
    static let callbacks = DispatchQueue(label: "CourierTests.Docs.callbacks")

    /// A queue answering from `fixtures`, with observers on ``callbacks``.
    static func queue(
        _ fixtures: FixtureTransport,
        baseURL: String? = "https://api.example.com/v1",
        delegate: (any RequestQueueDelegate)? = nil,
        configure: (inout RequestQueueConfiguration) -> Void = { _ in }
    ) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = callbacks
        configuration.transport = .fixtures(fixtures)
        configure(&configuration)
        return RequestQueue(configuration: configuration, delegate: delegate, baseURL: baseURL.flatMap(URL.init(string:)))
    }

    /// A new empty folder in the temporary directory.
    static func temporaryFolder(_ name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-docs-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}
