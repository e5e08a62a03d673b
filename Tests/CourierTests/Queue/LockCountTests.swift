import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// How many times a request takes its queue's state lock, end to end (debug builds count every
/// `Locked.withLock`): each take is an atomic read-modify-write, and a contended one sleeps
/// (#20's profiles), so a change that adds one to every request should be a change that says so.
final class LockCountTests: XCTestCase {
    private func stateLockTakes(_ count: Int, on queue: RequestQueue, _ one: @escaping @Sendable (RequestQueue) async -> Void) async -> Double {
        for _ in 0..<10 { await one(queue) }
        let before = queue.state.acquisitionCount
        for _ in 0..<count { await one(queue) }
        return Double(queue.state.acquisitionCount - before) / Double(count)
    }

    private func queue(_ transport: StubTransport) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.cache = nil
        configuration.callbackQueue = DispatchQueue(label: "LockCountTests.callbacks")
        // A request that never ended would end here, its count off, rather than hang the suite.
        configuration.timeoutInterval = 5
        return RequestQueue(configuration: configuration, delegate: nil, baseURL: URL(string: "https://api.example.com/v1"),
                            transport: transport)
    }

    func testASendTakesTheStateLockAFixedNumberOfTimes() async {
        // Given a queue whose transport answers at once
        let transport = StubTransport { _ in .json("{}") }
        let queue = queue(transport)
        // When 100 requests are sent one after another
        let perRequest = await stateLockTakes(100, on: queue) { queue in _ = try? await queue.send(PathRequest<EmptyResponse>("/a")) }
        // Then each took the lock 7 times: added (`enqueue`), taken by the start loop and the loop
        // finding no more (`nextToStart`, twice), its task attached (`launch`), the transfer recorded
        // and its slot given back together (`transportDidFinish`), claimed (`finish`), and marked
        // delivered. (A sweep of the queue's timers landing among them adds one in a hundred: the
        // tolerance.)
        XCTAssertEqual(perRequest, 7, accuracy: 0.2)
    }

    func testAnAddWithAnObserverTakesTheStateLockAFixedNumberOfTimes() async {
        // Given a queue whose transport holds each request until the test answers it, so that the
        // observer always joins a request in flight (one that had ended would take another path)
        let transport = StubTransport { _ in .hold }
        let queue = queue(transport)
        // When 100 requests are added one after another, each with an observer by ID
        let perRequest = await stateLockTakes(100, on: queue) { queue in
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let id = queue.add(PathRequest<EmptyResponse>("/a"))
                XCTAssertTrue(transport.waitForStarts(1, timeout: 5))
                queue.addObserver(for: id) { (_: Result<EmptyResponse, RequestError>) in done.resume() }
                XCTAssertNotNil(transport.releaseOldest(with: .json("{}")))
            }
        }
        // Then each took it 7 or 8 times: a send's 7 and the observer added by ID, on average 7.0
        // to 8.0 under load (here the start loop runs on the start queue's thread, and how it
        // interleaves with the transfer's end changes one take)
        XCTAssertGreaterThanOrEqual(perRequest, 6.8)
        XCTAssertLessThanOrEqual(perRequest, 8.2)
    }
}
