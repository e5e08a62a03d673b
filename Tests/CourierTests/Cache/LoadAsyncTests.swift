import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// `load` from async code: the stored response, then the fresh one, as an AsyncSequence that
/// needs no callback queue.
final class LoadAsyncTests: XCTestCase {
    private let clock = TestClock()
    /// A callback queue that does not run during a test (suspended in setUp, resumed in tearDown:
    /// libdispatch traps when a suspended queue is released).
    private let stalled = DispatchQueue(label: "LoadAsyncTests.stalled")

    override func setUp() {
        super.setUp()
        stalled.suspend()
    }

    override func tearDown() {
        stalled.resume()
        super.tearDown()
    }

    /// A queue whose callback queue never runs: whatever arrives came directly.
    private func queue(_ transport: StubTransport) -> RequestQueue {
        let cache = ResponseCache(memory: MemoryStore(capacity: 1 << 20), disk: nil, directory: nil,
                                  heuristicFreshnessLimit: 86_400, clock: { [clock] in clock.now })
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = stalled
        configuration.cache = cache
        return RequestQueue(configuration: configuration, delegate: nil, baseURL: URL(string: "https://api.example.com"),
                            transport: transport)
    }

    private func origin(version: Locked<String>) -> StubTransport {
        StubTransport { request in
            let current = version.withLock { $0 }
            if request.value(forHTTPHeaderField: "If-None-Match") == "\"\(current)\"" {
                return .status(304, headers: ["Date": CacheRuleFixtures.date(61)])
            }
            return .status(200, headers: ["Cache-Control": "max-age=60", "ETag": "\"\(current)\"", "Date": CacheRuleFixtures.date(0)],
                           body: Data(current.utf8))
        }
    }

    private func updates(_ queue: RequestQueue) async throws -> [String] {
        try await bounded {
            var seen: [String] = []
            for await update in queue.load(CachedRequest(path: "/a")) {
                seen.append("\(update.value?.text ?? "-") \(update.source.map { "\($0)" } ?? "nil") final=\(update.isFinal)")
            }
            return seen
        }
    }

    func testNothingStoredGivesOneFinalUpdateAndStaleThenChangedGivesTwo() async throws {
        // Given an origin at v1, asked with nothing stored
        let version = Locked("v1")
        let queue = queue(origin(version: version))
        let first = try await updates(queue)

        // When the stored v1 is stale and the origin moved on to v2
        clock.advance(61)
        version.withLock { $0 = "v2" }
        let second = try await updates(queue)

        // Then the first load had one final update from the network; the second showed the
        // stale v1 at once, then v2
        XCTAssertEqual(first, ["v1 network final=true"])
        XCTAssertEqual(second, ["v1 cache (stale) final=false", "v2 network final=true"])
    }

    func testAStaleResponseConfirmedBy304IsTheFinalUpdate() async throws {
        let version = Locked("v1")
        let queue = queue(origin(version: version))
        _ = try await updates(queue)
        clock.advance(61)
        let second = try await updates(queue)
        XCTAssertEqual(second, ["v1 cache (stale) final=false", "v1 cache (revalidated) final=true"])
    }

    func testAConsumerThatStopsEarlyCancelsTheRequest() async throws {
        // Given a request the origin holds
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/slow", body: Data("late".utf8))
        fixtures.holdsAnswers = true
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .fixtures(fixtures)
        let queue = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com"))

        // When its consumer's task is cancelled while it waits
        let consumer = Task { () -> Int in
            var count = 0
            for await _ in queue.load(CachedRequest(path: "/slow")) { count += 1 }
            return count
        }
        XCTAssertTrue(eventually { fixtures.heldRequests.count == 1 })
        consumer.cancel()

        // Then the sequence ended with nothing, and the request was cancelled, not answered
        let count = try await bounded { await consumer.value }
        XCTAssertEqual(count, 0)
        XCTAssertTrue(eventually { fixtures.heldRequests.isEmpty })
    }
}
