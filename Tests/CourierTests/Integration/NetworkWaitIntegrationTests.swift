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

    struct Feed: Request {
        typealias ResponseType = Echo
        var path: String { "/anything/feed" }
    }

    func testAWatchedResourceThatFailedLoadsWhenItsOriginComesUp() throws {
        // Given an origin where nothing listens yet, and a queue whose requests fail as the network fails
        let server = KillableServer(gunicorn: try KillableServer.gunicornPath(), port: HTTPBin.closedPort())
        defer { server.kill() }
        var configuration = RequestQueueConfiguration.default
        configuration.transport = HTTPBin.transport
        configuration.callbackQueue = TestQueues.callbacks
        configuration.cache = nil
        let queue = RequestQueue(configuration: configuration, baseURL: server.url)

        // When a screen watches a resource of it, retrying after 50 ms
        let context = DispatchQueue(label: "NetworkWaitIntegrationTests.resource")
        let feed = queue.resource(Feed(), options: ResourceOptions(retry: .init(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200)),
                                                                   updatesOn: .queue(context)))
        let watching = Task { await feed.watch() }
        defer { watching.cancel() }

        // Then its load failed, saying why, and its retry waits for the origin with the error shown
        assertRetryWaitsForItsOrigin(feed, on: context)

        // When the origin starts
        try server.start()

        // Then the waiting load reached it: the value is httpbin's echo of the feed, the error gone
        XCTAssertTrue(eventually(timeout: 60) { context.sync { feed.value != nil && !feed.isLoading } })
        XCTAssertEqual(context.sync { feed.value.flatMap { URL(string: $0.url)?.path } }, "/anything/feed")
        XCTAssertNil(context.sync { feed.error })
    }
}
