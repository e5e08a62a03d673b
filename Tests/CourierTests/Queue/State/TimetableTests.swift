import XCTest
@testable import Courier

final class TimetableTests: XCTestCase {
    private func id(_ raw: UInt64) -> RequestID { RequestID(rawValue: raw) }

    /// The deadlines' IDs among `jobs`, in order.
    private func deadlines(_ jobs: [Timetable.Job]) -> [UInt64] {
        jobs.compactMap { if case .deadline(let id) = $0 { id.rawValue } else { nil } }
    }

    func testTheTimerIsArmedOnlyWhenANewJobIsEarlier() {
        var timetable = Timetable()
        XCTAssertEqual(timetable.schedule(.deadline(id(1)), at: 100), 100, "first job arms the timer")
        XCTAssertNil(timetable.schedule(.deadline(id(2)), at: 150), "later than armed: nothing to do")
        XCTAssertNil(timetable.schedule(.deadline(id(3)), at: 100), "as early as armed: nothing to do")
        XCTAssertEqual(timetable.schedule(.deadline(id(4)), at: 50), 50, "earlier: re-arm")
        XCTAssertEqual(timetable.armedFor, 50)
    }

    func testDueJobsComeOutEarliestFirstAndTheNextTimeIsReturned() {
        var timetable = Timetable()
        for (raw, due) in [(1, 300), (2, 100), (3, 200), (4, 100)] as [(UInt64, UInt64)] {
            _ = timetable.schedule(.deadline(id(raw)), at: due)
        }

        // Nothing is due before the earliest
        let early = timetable.takeDue(now: 99)
        XCTAssertTrue(early.jobs.isEmpty)
        XCTAssertEqual(early.next, 100)

        // Ties keep the order they were scheduled in
        let first = timetable.takeDue(now: 200)
        XCTAssertEqual(deadlines(first.jobs), [2, 4, 3])
        XCTAssertEqual(first.next, 300)
        XCTAssertEqual(timetable.armedFor, 300)

        let last = timetable.takeDue(now: 1_000)
        XCTAssertEqual(deadlines(last.jobs), [1])
        XCTAssertNil(last.next, "nothing left: the timer stays disarmed")
        XCTAssertNil(timetable.armedFor)
        XCTAssertEqual(timetable.count, 0)
    }

    func testAPeriodicJobIsPendingAtMostOnce() {
        var timetable = Timetable()
        XCTAssertEqual(timetable.schedule(.pollProgress, at: 100), 100)
        XCTAssertNil(timetable.schedule(.pollProgress, at: 10), "already pending: ignored, even if earlier")
        XCTAssertNotNil(timetable.schedule(.sweepObservers, at: 20), "another kind is separate")
        XCTAssertEqual(timetable.count, 2)

        let jobs = timetable.takeDue(now: 100).jobs
        XCTAssertEqual(jobs.count, 2)
        // Once run, it can be scheduled again
        XCTAssertEqual(timetable.schedule(.pollProgress, at: 200), 200)
        XCTAssertEqual(timetable.count, 1)
    }

    func testDeadlinesOfEndedRequestsArePurgedOnceTheyDominate() {
        var timetable = Timetable()
        for raw: UInt64 in 1...200 { _ = timetable.schedule(.deadline(id(raw)), at: 1_000 + raw) }
        _ = timetable.schedule(.sweepObservers, at: 5_000)
        XCTAssertEqual(timetable.deadlines, 200)

        // Few ended: nothing is purged yet
        timetable.purgeDeadlines(liveCount: 150) { $0.rawValue > 50 }
        XCTAssertEqual(timetable.deadlines, 200)

        // Most ended: only the live ones stay, and other jobs are kept
        timetable.purgeDeadlines(liveCount: 10) { $0.rawValue > 190 }
        XCTAssertEqual(timetable.deadlines, 10)
        let jobs = timetable.takeDue(now: 10_000).jobs
        XCTAssertEqual(deadlines(jobs), Array(191...200))
        XCTAssertEqual(jobs.count, 11)
    }
}
