import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Durable requests while their origin is gone: they wait without spending their attempts.
final class DurableOfflineTests: DurableQueueTestCase {
    /// A durable queue whose probes come every 10 to 50 ms.
    private func offlineQueue(_ transport: StubTransport, limits: Durability.Limits) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = callbacks
        configuration.durability = Durability(folder: folder, responseTypes: [DurableMessage.self], limits: limits)
        return RequestQueue(configuration: configuration, delegate: nil, baseURL: URL(string: "https://api.example.com"),
                            transport: transport, connectivity: Connectivity(initialDelay: 0.01, maximumDelay: 0.05))
    }

    func testFailuresThatFindTheOriginGoneDoNotSpendAttempts() throws {
        // Given an origin that refuses its first four connections, and durable requests allowed two attempts
        let calls = Locked(0)
        let transport = StubTransport { _ in
            calls.withLock { $0 += 1; return $0 } <= 4 ? .failure(.cannotConnectToHost) : Self.created(1, "one")
        }
        let queue = offlineQueue(transport, limits: Durability.Limits(attempts: 2))

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

    func testADurableRequestWaitingForItsOriginEndsAtTheFirstProbeAfterItsAgeLimit() throws {
        // Given an origin that refuses every connection, and durable requests tried for half a second
        let transport = StubTransport { _ in .failure(.cannotConnectToHost) }
        let queue = offlineQueue(transport, limits: Durability.Limits(age: 0.5))

        // When a durable request is added, and waits for the origin
        let id = try queue.addDurably(SendDurableMessage(name: "late"))
        let result = try XCTUnwrap(self.result(of: id, on: queue, as: DurableMessage.self, timeout: 30))

        // Then the first probe after its age limit ended it, with the failure that held it, and the
        // journal has that end: it is not sent again after a restart
        guard case .failure(.transportFailed(let error)) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(error.code, .cannotConnectToHost)
        XCTAssertEqual(queue.state.withLock { $0.heldForNetwork }, 0)
        XCTAssertEqual(try journalOnDisk().pending(), [])
        callbacks.sync {}
    }
}
