import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Durable requests while their origin is gone: they wait without spending their attempts.
final class DurableOfflineTests: DurableQueueTestCase {
    func testFailuresThatFindTheOriginGoneDoNotSpendAttempts() throws {
        // Given an origin that refuses its first four connections, and durable requests allowed two attempts
        let calls = Locked(0)
        let transport = StubTransport { _ in
            calls.withLock { $0 += 1; return $0 } <= 4 ? .failure(.cannotConnectToHost) : Self.created(1, "one")
        }
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = callbacks
        configuration.durability = Durability(folder: folder, responseTypes: [DurableMessage.self],
                                              limits: Durability.Limits(attempts: 2))
        let queue = RequestQueue(configuration: configuration, delegate: nil, baseURL: URL(string: "https://api.example.com"),
                                 transport: transport, connectivity: Connectivity(initialDelay: 0.01, maximumDelay: 0.05))

        // When a durable request is added
        let id = try queue.addDurably(SendDurableMessage(name: "one"))
        let result = try XCTUnwrap(self.result(of: id, on: queue, as: DurableMessage.self))

        // Then it waited through four refusals (probes) and the fifth brought its answer
        XCTAssertEqual(try result.get(), DurableMessage(id: 1, text: "one"))
        XCTAssertEqual(transport.started.count, 5)
        XCTAssertTrue(queue.networkStatus.isOnline)
        XCTAssertEqual(queue.networkStatus.unreachableOrigins, [:])
        callbacks.sync {}
    }
}
