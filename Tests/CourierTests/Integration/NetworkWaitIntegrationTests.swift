import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Requests that wait for their origin, against an httpbin of the test's own that is down until
/// the test starts it: what the server received once it was up, through the run's transport.
final class NetworkWaitIntegrationTests: XCTestCase {
    struct Put: Request {
        typealias ResponseType = Echo
        let name: String
        var path: String { "/anything/\(name)" }
        var method: HTTPMethod { .put }
    }

    func testRequestsAndADurableWriteWaitForAnOriginThatIsDownAndReachItWhenItIsUp() throws {
        // Given an origin where nothing listens yet, and a durable queue whose requests wait
        let server = KillableServer(gunicorn: try KillableServer.gunicornPath(), port: HTTPBin.closedPort())
        defer { server.kill() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-netwait-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = RequestQueueConfiguration.default
        configuration.transport = HTTPBin.transport
        configuration.callbackQueue = TestQueues.callbacks
        configuration.whileOffline = .wait
        configuration.durability = Durability(folder: folder, responseTypes: [Echo.self])
        let queue = try RequestQueue.open(configuration: configuration, baseURL: server.url)

        // When two requests and a durable write go to it
        let ids = [queue.add(Put(name: "one")), queue.add(Put(name: "two")), try queue.addDurably(Put(name: "durable"))]

        // Then they wait, the origin unreachable, none failed
        let origin = "http://127.0.0.1:\(server.port)"
        XCTAssertTrue(eventually { queue.state.withLock { $0.heldForNetwork } == 3 },
                      "not all held: \(queue.networkStatus)")
        XCTAssertEqual(Array(queue.networkStatus.unreachableOrigins.keys), [origin])

        // When the origin starts
        try server.start()

        // Then each reached it with its own path, the durable one with its key, and the queue is online
        let echoes = try ids.map { id in try XCTUnwrap(result(of: id, on: queue, as: Echo.self, timeout: 60)).get() }
        XCTAssertEqual(echoes.map { URL(string: $0.url)?.path }, ["/anything/one", "/anything/two", "/anything/durable"])
        XCTAssertEqual(echoes.map(\.method), ["PUT", "PUT", "PUT"])
        XCTAssertNotNil(echoes[2].headers["Idempotency-Key"])
        XCTAssertNil(echoes[0].headers["Idempotency-Key"])
        XCTAssertTrue(eventually { queue.networkStatus == NetworkStatus() })
        TestQueues.callbacks.sync {}
    }
}
