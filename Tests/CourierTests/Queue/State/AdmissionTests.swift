import XCTest
@testable import Courier

final class AdmissionTests: XCTestCase {
    private func id(_ raw: UInt64) -> RequestID { RequestID(rawValue: raw) }

    /// Runs one claimed run to its end, starting everything it offers.
    private func drain(_ admission: inout Admission, verdict: (RequestID) -> Admission.Verdict = { _ in .start }) -> [Admission.Next] {
        var started: [Admission.Next] = []
        while let next = admission.next(verdict) {
            started.append(next)
            if next == .handOff { break }
        }
        return started
    }

    func testHigherPrioritiesStartFirstAndEachPriorityKeepsItsOrder() {
        // Given requests of every priority, added interleaved
        var admission = Admission(limit: 10)
        admission.append(id(1), priority: .low)
        admission.append(id(2), priority: .normal)
        admission.append(id(3), priority: .high)
        admission.append(id(4), priority: .normal)
        admission.append(id(5), priority: .high)

        // When one run starts them all
        XCTAssertTrue(admission.claimRun())
        let started = drain(&admission)

        // Then high before normal before low, first in first out within each
        XCTAssertEqual(started, [.start(id(3)), .start(id(5)), .start(id(2)), .start(id(4)), .start(id(1))])
        XCTAssertEqual(admission.inFlight, 5)
        XCTAssertEqual(admission.waitingCount, 0)
    }

    func testNeverMoreThanTheLimitInFlight() {
        var admission = Admission(limit: 2)
        for raw: UInt64 in 1...5 { admission.append(id(raw), priority: .normal) }

        XCTAssertTrue(admission.claimRun())
        XCTAssertEqual(drain(&admission), [.start(id(1)), .start(id(2))])
        XCTAssertEqual(admission.inFlight, 2)
        // No slot: no run to claim until one is given back
        XCTAssertFalse(admission.claimRun())
        admission.releaseSlot()
        XCTAssertTrue(admission.claimRun())
        XCTAssertEqual(drain(&admission), [.start(id(3))])
        XCTAssertEqual(admission.waitingCount, 2)
    }

    func testALimitBelowOneCountsAsOne() {
        XCTAssertEqual(Admission(limit: 0).limit, 1)
        XCTAssertEqual(Admission(limit: -3).limit, 1)
    }

    func testOneRunIsClaimedAtATimeAndOnlyWhenSomethingWaits() {
        var admission = Admission(limit: 4)
        // Nothing waits: no run (a finished request must not wake a thread for nothing)
        XCTAssertFalse(admission.claimRun())

        admission.append(id(1), priority: .normal)
        XCTAssertTrue(admission.claimRun())
        // A burst of adds while the run is due claims no second run
        admission.append(id(2), priority: .normal)
        XCTAssertFalse(admission.claimRun())

        // The run ends when nothing is left: the next add may claim again
        XCTAssertEqual(drain(&admission), [.start(id(1)), .start(id(2))])
        admission.append(id(3), priority: .normal)
        XCTAssertTrue(admission.claimRun())
    }

    func testSkippedRequestsLeaveTheLineWithoutTakingASlot() {
        var admission = Admission(limit: 4)
        for raw: UInt64 in 1...3 { admission.append(id(raw), priority: .normal) }
        XCTAssertTrue(admission.claimRun())

        // Given request 2 ended while it waited
        let started = drain(&admission) { $0 == self.id(2) ? .skip : .start }

        XCTAssertEqual(started, [.start(id(1)), .start(id(3))])
        XCTAssertEqual(admission.inFlight, 2)
        XCTAssertEqual(admission.waitingCount, 0)
    }

    func testAHandOffKeepsTheRequestFirstAndTheRunClaimed() {
        var admission = Admission(limit: 4)
        admission.append(id(1), priority: .normal)
        admission.append(id(2), priority: .normal)
        XCTAssertTrue(admission.claimRun())

        // When the first cannot start on this thread
        XCTAssertEqual(admission.next { _ in .handOff }, .handOff)

        // Then it is still first, no slot is taken, and the run is still claimed
        XCTAssertEqual(admission.inFlight, 0)
        XCTAssertFalse(admission.claimRun())
        XCTAssertEqual(drain(&admission), [.start(id(1)), .start(id(2))])
    }

    func testARequestBackFromAPauseGoesFirstInItsPriority() {
        var admission = Admission(limit: 4)
        admission.append(id(1), priority: .normal)
        admission.append(id(2), priority: .normal)
        admission.prepend(id(9), priority: .normal)
        admission.append(id(3), priority: .high)

        XCTAssertTrue(admission.claimRun())
        XCTAssertEqual(drain(&admission), [.start(id(3)), .start(id(9)), .start(id(1)), .start(id(2))])
    }
}

final class WaitingListTests: XCTestCase {
    func testFirstInFirstOutThroughCompactions() {
        // Given more IDs than the list keeps before it compacts its consumed front
        var list = WaitingList()
        for raw: UInt64 in 0..<10_000 { list.append(RequestID(rawValue: raw)) }
        var popped: [UInt64] = []
        for _ in 0..<6_000 { popped.append(list.popFirst()!.rawValue) }
        for raw: UInt64 in 10_000..<10_010 { list.append(RequestID(rawValue: raw)) }
        list.prepend(RequestID(rawValue: 99_999))

        // Then order holds across the compaction, with the prepended ID first
        XCTAssertEqual(popped, Array(0..<6_000))
        XCTAssertEqual(list.count, 4_011)
        XCTAssertEqual(list.popFirst()?.rawValue, 99_999)
        var rest: [UInt64] = []
        while let next = list.popFirst() { rest.append(next.rawValue) }
        XCTAssertEqual(rest, Array(6_000..<10_010))
        XCTAssertNil(list.popFirst())
        XCTAssertEqual(list.count, 0)
    }

    func testPrependToAnEmptyList() {
        var list = WaitingList()
        list.prepend(RequestID(rawValue: 1))
        list.prepend(RequestID(rawValue: 2))
        XCTAssertEqual(list.popFirst()?.rawValue, 2)
        XCTAssertEqual(list.popFirst()?.rawValue, 1)
        XCTAssertNil(list.popFirst())
    }
}
