import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Lanes through the queue: one request of a lane on the wire at a time, in the order added,
/// also after a reopen, while other lanes and ordinary requests go on.
final class DurableLaneTests: DurableQueueTestCase {
    private func paths(_ transport: StubTransport) -> [String] {
        transport.started.compactMap { $0.url?.path }
    }

    func testALanesRequestsGoOneAtATimeInOrderWhileAnotherLaneProceeds() throws {
        // Given a durable queue whose transport holds every request
        let transport = StubTransport { _ in .hold }
        let queue = durableQueue(transport)
        // When three requests are added to lane a, one to lane b, and an ordinary one
        let ids = try ["a1", "a2", "a3"].map { try queue.addDurably(SendDurableMessage(name: $0), lane: "a") }
        try queue.addDurably(SendDurableMessage(name: "b1"), lane: "b")
        queue.add(SendDurableMessage(name: "plain"))
        // Then a1, b1 and the ordinary one go out, and a2 waits for a1
        XCTAssertTrue(transport.waitForStarts(3))
        XCTAssertEqual(paths(transport), ["/messages/a1", "/messages/b1", "/messages/plain"])
        XCTAssertEqual(queue.bookkeeping.waiting, 2)
        // When a1 gets its answer, a2 goes, and only then a3
        XCTAssertEqual(transport.releaseOldest(with: Self.created(1, "a1"))?.url?.path, "/messages/a1")
        XCTAssertTrue(transport.waitForStarts(1))
        XCTAssertEqual(paths(transport).last, "/messages/a2")
        XCTAssertEqual(queue.bookkeeping.waiting, 1)
        XCTAssertEqual(transport.releaseOldest(with: Self.created(3, "b1"))?.url?.path, "/messages/b1")
        XCTAssertEqual(transport.releaseOldest(with: Self.created(4, "plain"))?.url?.path, "/messages/plain")
        XCTAssertEqual(transport.releaseOldest(with: Self.created(2, "a2"))?.url?.path, "/messages/a2")
        XCTAssertTrue(transport.waitForStarts(1))
        XCTAssertEqual(paths(transport), ["/messages/a1", "/messages/b1", "/messages/plain", "/messages/a2", "/messages/a3"])
        transport.releaseAll(with: Self.created(5, "a3"))
        // And each ends with its own result
        XCTAssertEqual(try ids.map { try result(of: $0, on: queue, as: DurableMessage.self)?.get().id }, [1, 2, 5])
    }

    func testALaneKeepsItsOrderAcrossAReopen() throws {
        // Given a lane of three whose first is in flight when the queue is released
        let first = StubTransport { _ in .hold }
        var queue: RequestQueue? = durableQueue(first)
        for name in ["d1", "d2", "d3"] { try queue!.addDurably(SendDurableMessage(name: name), lane: "doc") }
        XCTAssertTrue(first.waitForStarts(1))
        release(&queue, transport: first)
        // When the queue is opened again, its transport holding every request
        let second = StubTransport { _ in .hold }
        queue = durableQueue(second)
        // Then the lane's requests go one at a time, in the order added
        for (index, name) in ["d1", "d2", "d3"].enumerated() {
            XCTAssertTrue(second.waitForStarts(1))
            XCTAssertEqual(paths(second).count, index + 1)
            XCTAssertEqual(paths(second).last, "/messages/\(name)")
            XCTAssertEqual(second.releaseOldest(with: Self.created(index, name))?.url?.path, "/messages/\(name)")
        }
    }
}
