import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Priorities, cancel groups, metrics and streams of results, against a stub transport.
final class QueueFeaturesTests: XCTestCase {
    func testHigherPrioritiesStartFirstAndEachPriorityIsFIFO() throws {
        // Given one slot, taken
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport, maxConcurrent: 1)
        queue.add(PathRequest<EmptyResponse>("/busy"))
        XCTAssertTrue(transport.waitForStarts(1))

        // When requests of mixed priorities wait
        queue.add(PathRequest<EmptyResponse>("/low-1"), priority: .low)
        queue.add(PathRequest<EmptyResponse>("/normal-1"))
        queue.add(PathRequest<EmptyResponse>("/high-1"), priority: .high)
        queue.add(PathRequest<EmptyResponse>("/low-2"), priority: .low)
        queue.add(PathRequest<EmptyResponse>("/high-2"), priority: .high)
        queue.add(PathRequest<EmptyResponse>("/normal-2"))
        for _ in 0..<6 {
            transport.releaseOldest()
            XCTAssertTrue(transport.waitForStarts(1))
        }
        transport.releaseOldest()

        // Then they start high before normal before low, in order within each
        XCTAssertEqual(transport.started.map { $0.url!.lastPathComponent },
                       ["busy", "high-1", "high-2", "normal-1", "normal-2", "low-1", "low-2"])
    }

    func testCancelGroupsByTypeOwnerAndAll() throws {
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport, maxConcurrent: 2)
        let screen = ObserverOwner(), other = ObserverOwner()
        let ids: [String: RequestID] = [
            "greeting-owned": queue.add(PathRequest<Greeting>("/a"), owner: screen),
            "empty-owned": queue.add(PathRequest<EmptyResponse>("/b"), owner: screen),
            "greeting": queue.add(PathRequest<Greeting>("/c"), owner: other),
            "empty": queue.add(PathRequest<EmptyResponse>("/d")),
        ]
        XCTAssertTrue(transport.waitForStarts(2))
        let outcomes = Locked<[String: String]>([:])
        let done = expectation(description: "all four end")
        done.expectedFulfillmentCount = 4
        for (name, id) in ids {
            let record: @Sendable (String) -> Void = { outcome in outcomes.withLock { $0[name] = outcome }; done.fulfill() }
            if name.hasPrefix("greeting") {
                queue.addObserver(for: id) { (result: Result<Greeting, RequestError>) in
                    let outcome = if case .failure(.cancelled) = result { "cancelled" } else { "\(result)" }
                    record(outcome)
                }
            } else {
                queue.addObserver(for: id) { (result: Result<EmptyResponse, RequestError>) in
                    let outcome = if case .failure(.cancelled) = result { "cancelled" } else { "\(result)" }
                    record(outcome)
                }
            }
        }

        // When groups are cancelled one after the other
        queue.cancelAll(ownedBy: screen)
        queue.cancelAll(ofType: Greeting.self)
        queue.cancelAll()
        wait(for: [done], timeout: 30)

        // Then everything ended as cancelled, once
        XCTAssertEqual(outcomes.withLock { $0 }, ["greeting-owned": "cancelled", "empty-owned": "cancelled",
                                                  "greeting": "cancelled", "empty": "cancelled"])
        withExtendedLifetime((screen, other)) {}
    }

    func testOwnerGroupLeavesOthersRunning() throws {
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        let screen = ObserverOwner()
        let owned = queue.add(PathRequest<EmptyResponse>("/owned"), owner: screen)
        let free = queue.add(PathRequest<EmptyResponse>("/free"))
        XCTAssertTrue(transport.waitForStarts(2))
        queue.cancelAll(ownedBy: screen)
        guard case .failure(.cancelled)? = result(of: owned, on: queue, as: EmptyResponse.self) else { return XCTFail() }
        XCTAssertFalse(queue.isFinished(free))
        transport.releaseOldest()
        guard case .success? = result(of: free, on: queue, as: EmptyResponse.self) else { return XCTFail() }
        withExtendedLifetime(screen) {}
    }

    func testMetricsReachDelegates() throws {
        // Given a server that fails once and then answers
        let calls = Locked(0)
        let transport = StubTransport { _ in
            calls.withLock { $0 += 1; return $0 } == 1 ? .status(503) : .json(#"{"message":"ok"}"#)
        }
        let metrics = Recorder<RequestMetrics>()
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.retryPolicy = RetryPolicy(baseDelay: 0.01, jitter: 0)
        let queue = RequestQueue(configuration: configuration, delegate: MetricsDelegate(metrics: metrics),
                                 baseURL: URL(string: "https://api.example.com"), transport: transport)

        // When a request with a body runs
        let id = queue.add(BodyRequest<TextBody, Greeting>(parameters: TextBody(text: "12345"), path: "/m", method: .put))
        XCTAssertNotNil(result(of: id, on: queue, as: Greeting.self))

        // Then the delegate got its metrics once, before the observer
        let recorded = try XCTUnwrap(metrics.all.first)
        XCTAssertEqual(metrics.count, 1)
        XCTAssertEqual(recorded.id, id)
        XCTAssertEqual(recorded.attempts, 2)
        XCTAssertEqual(recorded.statusCode, 200)
        XCTAssertEqual(recorded.bytesSent, 10)
        XCTAssertEqual(recorded.bytesReceived, Int64(#"{"message":"ok"}"#.utf8.count))
        XCTAssertNotNil(recorded.startedAt)
        XCTAssertGreaterThanOrEqual(recorded.finishedAt, recorded.startedAt!)
        XCTAssertGreaterThan(recorded.totalDuration, 0)
    }

    func testResultsStreamYieldsEveryResultAndEndsWithoutLeaking() async throws {
        // Given a stream of Greeting results
        let transport = StubTransport { request in
            request.url!.lastPathComponent == "fail" ? .status(500) : .json(#"{"message":"hi"}"#)
        }
        let queue = makeQueue(transport: transport)

        // When three requests end (one failing) and the consumer stops after them (bounded: a
        // result that never came would fail the test, not hang it)
        let seen = try await bounded {
            var seen: [String] = []
            let results = queue.results(of: Greeting.self)
            XCTAssertEqual(queue.typeObserverCount, 1)
            queue.add(PathRequest<Greeting>("/one"))
            for await result in consume results {
                switch result {
                case .success(let greeting): seen.append(greeting.message)
                case .failure(let error): seen.append("status \(error.statusCode ?? 0)")
                }
                if seen.count == 1 { queue.add(PathRequest<Greeting>("/fail")) }
                if seen.count == 2 { queue.add(PathRequest<Greeting>("/two")) }
                if seen.count == 3 { break }
            }
            return seen
        }

        // Then it saw all three, and the queue let go of its observer
        XCTAssertEqual(seen, ["hi", "status 500", "hi"])
        queue.sweepDeadObservers()
        XCTAssertEqual(queue.typeObserverCount, 0)
    }
}

private final class MetricsDelegate: RequestQueueDelegate {
    let metrics: Recorder<RequestMetrics>
    init(metrics: Recorder<RequestMetrics>) { self.metrics = metrics }
    func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics) { self.metrics.append(metrics) }
}

extension QueueFeaturesTests {
    func testBookkeepingStaysBoundedAfterAHundredThousandRequests() throws {
        // Given a queue that keeps at most 256 results, with type observers whose owners come and go
        let transport = StubTransport { _ in .status(200) }
        let queue = makeQueue(transport: transport, maxConcurrent: 16, retentionCount: 256)
        let total = 100_000
        let done = expectation(description: "all requests")
        done.expectedFulfillmentCount = total
        for index in 0..<total {
            if index.isMultiple(of: 1_000) {
                queue.addObserver(ownedBy: ObserverOwner()) { (_: Result<EmptyResponse, RequestError>) in }
            }
            queue.addObserver(for: queue.add(PathRequest<EmptyResponse>("/n"))) { (_: Result<EmptyResponse, RequestError>) in
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 120)
        TestQueues.callbacks.sync {}
        queue.sweepDeadObservers()

        // Then nothing per request is left but the bounded recent results
        let counts = queue.bookkeeping
        XCTAssertEqual(counts.active, 0)
        XCTAssertEqual(counts.waiting, 0)
        XCTAssertEqual(counts.undelivered, 0)
        XCTAssertLessThanOrEqual(counts.recentResults, 256)
        XCTAssertEqual(counts.deadlines, 0, "an ended request's deadline is gone with it")
        XCTAssertEqual(queue.typeObserverCount, 0)
    }
}
