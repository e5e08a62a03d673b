import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// How durable requests end: an attempt that runs out of time is tried again; a result is noted
/// as seen before the queue lets its journal go.
final class DurableEndingTests: DurableQueueTestCase {
    /// ``SendDurableMessage`` with a timeout of its own: each attempt's, for a durable request.
    private struct QuickDurableMessage: Request {
        typealias ResponseType = DurableMessage
        var parameters: DurableDraft { DurableDraft(text: "quick") }
        var path: String { "/messages/quick" }
        var method: HTTPMethod { .post }
        var timeout: TimeInterval? { 0.2 }
    }

    func testAnAttemptThatRunsOutOfTimeIsTriedAgainWithItsKey() throws {
        // Given a durable request of 0.2 s per attempt, whose first attempt never gets an answer
        let attempts = Locked(0)
        let transport = StubTransport { _ in attempts.withLock { $0 += 1; return $0 } == 1 ? .hold : Self.created(9, "quick") }
        let queue = durableQueue(transport, retryPolicy: RetryPolicy(maximumAttempts: 3, baseDelay: 0.01, jitter: 0))

        // When it is added
        let id = try queue.addDurably(QuickDurableMessage())

        // Then the first attempt was stopped at its deadline and the second one's answer is the result
        XCTAssertEqual(try result(of: id, on: queue, as: DurableMessage.self)?.get(), DurableMessage(id: 9, text: "quick"))
        let keys = transport.started.map { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        XCTAssertEqual(keys.count, 2)
        XCTAssertEqual(keys[0], keys[1])
        XCTAssertEqual(transport.heldCount, 0, "the first attempt's transfer was cancelled")
        XCTAssertEqual(try journalOnDisk().entry(String(id.rawValue))?.attempts, 1)
    }

    func testAnAttemptThatRunsOutOfTimeWithNoAttemptsLeftEndsTimedOut() throws {
        // Given a durable request allowed one attempt, which never gets an answer
        let transport = StubTransport { _ in .hold }
        let queue = durableQueue(transport, limits: Durability.Limits(attempts: 1))

        // When it is added, then its attempt runs out of time
        let id = try queue.addDurably(QuickDurableMessage())

        // Then it ends timed out, as an ordinary request does
        guard case .failure(.timedOut)? = result(of: id, on: queue, as: DurableMessage.self) else {
            return XCTFail("not timed out")
        }
    }

    func testAQueueReleasedWhileAnObserverRunsKeepsItsJournalUntilTheResultIsNotedAsSeen() throws {
        // Given a durable request whose observer is still running when its queue is released
        let transport = StubTransport { _ in Self.created(3, "seen") }
        var queue: RequestQueue? = durableQueue(transport)
        let id = try queue!.addDurably(SendDurableMessage(name: "seen"))
        let inObserver = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let got = Locked<[DurableMessage]>([])
        queue!.addObserver(for: id) { (result: Result<DurableMessage, RequestError>) in
            if case .success(let message) = result { got.withLock { $0.append(message) } }
            inObserver.signal()
            _ = finish.wait(timeout: .now() + 30)
        }
        XCTAssertEqual(inObserver.wait(timeout: .now() + 30), .success)

        // When the queue is released meanwhile, a queue is opened on the folder, and the observer ends
        queue = nil
        XCTAssertTrue(transport.waitForInvalidation())
        let third = StubTransport { _ in .status(500) }
        let observerEnded = Locked(false)
        let reopened = Locked<(queue: RequestQueue, afterObserver: Bool)?>(nil)
        let opening = DispatchSemaphore(value: 0)
        let folder: URL = folder, callbacks = callbacks
        DispatchQueue.global().async {
            var configuration = RequestQueueConfiguration.default
            configuration.callbackQueue = callbacks
            configuration.durability = Durability(folder: folder, responseTypes: [DurableMessage.self])
            let queue = RequestQueue(configuration: configuration, delegate: nil, baseURL: URL(string: "https://api.example.com"),
                                     transport: third)
            reopened.withLock { $0 = (queue, observerEnded.withLock { $0 }) }
            opening.signal()
        }
        observerEnded.withLock { $0 = true }
        finish.signal()
        XCTAssertEqual(opening.wait(timeout: .now() + 30), .success)

        // Then the opening waited for the observer to end, opened the journal, and gives the result
        // to nobody again: the app got it once
        let (second, afterObserver) = try XCTUnwrap(reopened.withLock { $0 })
        XCTAssertTrue(afterObserver, "the journal was let go while its result was being delivered")
        guard case .success? = second.durable?.opened else { return XCTFail("the journal did not open") }
        guard case .failure(.resultUnavailable(id))? = result(of: id, on: second, as: DurableMessage.self) else {
            return XCTFail("the result was delivered again")
        }
        XCTAssertEqual(got.withLock { $0 }, [DurableMessage(id: 3, text: "seen")])
        XCTAssertEqual(third.started.count, 0)
    }
}
