import XCTest
@testable import Courier

/// The invariants of ``SharedTransferTable``: one open transfer per key, every participant
/// answered once, the task started once and cancelled only when everyone left.
final class SharedTransferTableTests: XCTestCase {
    private typealias Table = SharedTransferTable<String, String, String>

    func testTheFirstRequestOpensATransferAndIdenticalOnesJoinIt() {
        // Given an empty table
        var table = Table()
        // When three requests with one key and one with another join
        let a = table.join("GET /a", waiter: "a1")
        let b = table.join("GET /a", waiter: "a2")
        let c = table.join("GET /a", waiter: "a3")
        let d = table.join("GET /b", waiter: "b1")
        // Then the first of each key opens a transfer, the others join it
        XCTAssertEqual([a.isFirst, b.isFirst, c.isFirst, d.isFirst], [true, false, false, true])
        XCTAssertEqual(Set([a.ticket.transfer, b.ticket.transfer, c.ticket.transfer]).count, 1)
        XCTAssertNotEqual(a.ticket.transfer, d.ticket.transfer)
        XCTAssertEqual(table.count, 2)
        XCTAssertEqual(table.participantCount, 4)
        XCTAssertEqual(table.participants(of: a.ticket.transfer), 3)
    }

    func testTheTaskStartsOnceWhoeverStartsFirst() {
        var table = Table()
        let leader = table.join("k", waiter: "1").ticket
        let follower = table.join("k", waiter: "2").ticket
        XCTAssertEqual(table.setTask("task", for: leader.transfer), .hold)
        // When the follower starts before the leader
        XCTAssertEqual(table.start(follower), "task")
        // Then the leader's start does not start it again
        XCTAssertNil(table.start(leader))
    }

    func testAStartBeforeTheTaskExistsStartsItWhenItIsSet() {
        var table = Table()
        let leader = table.join("k", waiter: "1").ticket
        XCTAssertNil(table.start(leader))
        XCTAssertEqual(table.setTask("task", for: leader.transfer), .start)
        XCTAssertNil(table.start(leader))
    }

    func testLeavingHandsBackTheWaiterAndTheLastOneCancelsTheTask() {
        var table = Table()
        let one = table.join("k", waiter: "1").ticket
        let two = table.join("k", waiter: "2").ticket
        _ = table.setTask("task", for: one.transfer)
        // When one participant leaves, the transfer goes on
        let first = table.leave(one)
        XCTAssertEqual(first.waiter, "1")
        XCTAssertNil(first.cancel)
        XCTAssertEqual(table.participants(of: two.transfer), 1)
        // When the last one leaves, its task is to be cancelled and the transfer is gone
        let last = table.leave(two)
        XCTAssertEqual(last.waiter, "2")
        XCTAssertEqual(last.cancel, "task")
        XCTAssertEqual(table.count, 0)
        // And leaving twice hands nothing back
        XCTAssertNil(table.leave(two).waiter)
    }

    func testATransferEveryoneLeftBeforeItsTaskExistedCancelsTheTaskWhenItIsSet() {
        var table = Table()
        let only = table.join("k", waiter: "1").ticket
        XCTAssertEqual(table.leave(only).waiter, "1")
        // Then a new request with that key opens a new transfer rather than joining the abandoned one
        let next = table.join("k", waiter: "2")
        XCTAssertTrue(next.isFirst)
        XCTAssertNotEqual(next.ticket.transfer, only.transfer)
        // And the abandoned transfer's task is cancelled as soon as it is handed over
        XCTAssertEqual(table.setTask("late", for: only.transfer), .cancel)
        XCTAssertEqual(table.count, 1)
    }

    func testFinishingAnswersTheRemainingParticipantsInJoinOrderAndClosesTheKey() {
        var table = Table()
        let first = table.join("k", waiter: "1").ticket
        let second = table.join("k", waiter: "2").ticket
        _ = table.join("k", waiter: "3")
        _ = table.setTask("task", for: first.transfer)
        _ = table.leave(second)
        // When the transfer ends
        XCTAssertEqual(table.waiters(of: first.transfer), ["1", "3"])
        XCTAssertEqual(table.finish(first.transfer), ["1", "3"])
        // Then it is gone: nobody can join it, a late leave or finish does nothing
        XCTAssertEqual(table.count, 0)
        XCTAssertNil(table.leave(first).waiter)
        XCTAssertEqual(table.finish(first.transfer), [])
        XCTAssertTrue(table.join("k", waiter: "4").isFirst)
    }

    func testRandomJoinsLeavesAndEndsAnswerEveryParticipantExactlyOnce() {
        // Given a seeded random sequence of operations on a few keys
        var generator = SeededGenerator(seed: 0xC0FFEE)
        var table = SharedTransferTable<Int, Int, Int>()
        var answered: [Int: Int] = [:]
        var live: [(SharedTransferTable<Int, Int, Int>.Ticket, Int)] = []
        var tasks: Set<Int> = []
        var next = 0
        for _ in 0..<5_000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                let (ticket, isFirst) = table.join(Int.random(in: 0..<4, using: &generator), waiter: next)
                if isFirst { _ = table.setTask(ticket.transfer, for: ticket.transfer); tasks.insert(ticket.transfer) }
                live.append((ticket, next))
                next += 1
            case 5..<8 where !live.isEmpty:
                let (ticket, _) = live.remove(at: Int.random(in: 0..<live.count, using: &generator))
                let (waiter, cancel) = table.leave(ticket)
                if let waiter { answered[waiter, default: 0] += 1 }
                if let cancel {
                    // Only the last participant's leave cancels, and only once
                    XCTAssertTrue(tasks.remove(cancel) != nil)
                    XCTAssertFalse(live.contains { $0.0.transfer == cancel })
                }
            case 8..<10 where !live.isEmpty:
                let transfer = live[Int.random(in: 0..<live.count, using: &generator)].0.transfer
                for waiter in table.finish(transfer) { answered[waiter, default: 0] += 1 }
                tasks.remove(transfer)
                live.removeAll { $0.0.transfer == transfer }
            default:
                break
            }
        }
        for (ticket, _) in live { if let waiter = table.leave(ticket).waiter { answered[waiter, default: 0] += 1 } }
        // Then every participant was answered exactly once and nothing is left open
        XCTAssertEqual(answered.count, next)
        XCTAssertTrue(answered.values.allSatisfy { $0 == 1 })
        XCTAssertEqual(table.count, 0)
    }
}
