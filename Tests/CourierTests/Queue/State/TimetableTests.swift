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

    func testAnEndedRequestsDeadlineIsGoneAtOnce() {
        // Given 200 deadlines and another job
        var timetable = Timetable()
        for raw: UInt64 in 1...200 { _ = timetable.schedule(.deadline(id(raw)), at: 1_000 + raw) }
        _ = timetable.schedule(.sweepObservers, at: 5_000)
        XCTAssertEqual(timetable.deadlines, 200)

        // When all but ten of their requests end, the earliest among them
        for raw: UInt64 in 1...190 { timetable.cancelDeadline(of: id(raw)) }
        timetable.cancelDeadline(of: id(7))
        timetable.cancelDeadline(of: id(9_999))

        // Then only the live ones are kept, other jobs stay, and the cancelled never come out
        XCTAssertEqual(timetable.deadlines, 10)
        XCTAssertEqual(timetable.count, 11)
        let jobs = timetable.takeDue(now: 10_000).jobs
        XCTAssertEqual(deadlines(jobs), Array(191...200))
        XCTAssertEqual(jobs.count, 11)
        XCTAssertEqual(timetable.deadlines, 0)
    }

    func testABurstOfRequestsThatEndedLeavesAtMost64OfItsDeadlinesBehind() {
        // Given 10,000 requests with a timeout of a minute, and a periodic job
        var timetable = Timetable()
        _ = timetable.schedule(.sweepObservers, at: 1_000)
        for raw: UInt64 in 1...10_000 { _ = timetable.schedule(.deadline(id(raw)), at: 60_000 + raw) }

        // When all of them end, in an order unlike their deadlines'
        for raw: UInt64 in stride(from: 10_000, through: 1, by: -1) { timetable.cancelDeadline(of: id(raw)) }

        // Then the heap keeps the periodic job and at most 64 of the deadlines, none of which comes out
        XCTAssertEqual(timetable.deadlines, 0)
        XCTAssertEqual(timetable.count, 1)
        XCTAssertLessThanOrEqual(timetable.stored, 65)
        let taken = timetable.takeDue(now: 100_000)
        XCTAssertEqual(taken.jobs.count, 1)
        XCTAssertNil(taken.next)
        XCTAssertEqual(timetable.stored, 0)
    }

    func testSchedulingARequestsDeadlineAgainReplacesIt() {
        var timetable = Timetable()
        _ = timetable.schedule(.deadline(id(1)), at: 100)
        _ = timetable.schedule(.deadline(id(1)), at: 300)
        _ = timetable.schedule(.deadline(id(2)), at: 200)

        XCTAssertEqual(timetable.deadlines, 2)
        XCTAssertEqual(deadlines(timetable.takeDue(now: 250).jobs), [2], "the first deadline of #1 was replaced")
        XCTAssertEqual(deadlines(timetable.takeDue(now: 300).jobs), [1])
    }

    func testASeededRandomSequenceMatchesASortedModel() {
        // Given a model: every pending job with its due time and scheduling order
        var generator = SeededGenerator(seed: 0x7157_AB1E)
        var timetable = Timetable()
        var model: [(due: UInt64, order: Int, id: UInt64)] = []
        var order = 0, now: UInt64 = 0

        for step in 0..<20_000 {
            switch UInt64.random(in: 0..<10, using: &generator) {
            case 0..<5:
                // A new request's deadline, sometimes tied with others
                let raw = UInt64(step + 1)
                let due = now + UInt64.random(in: 0..<64, using: &generator) * 16
                order += 1
                _ = timetable.schedule(.deadline(id(raw)), at: due)
                model.append((due, order, raw))
            case 5..<8:
                // A request ends: a live one, or one that never had a deadline
                if let victim = model.indices.randomElement(using: &generator) {
                    timetable.cancelDeadline(of: id(model.remove(at: victim).id))
                } else {
                    timetable.cancelDeadline(of: id(UInt64.max))
                }
            default:
                // Time passes: what is due comes out earliest first, ties in scheduling order
                now += UInt64.random(in: 0..<200, using: &generator)
                let due = model.filter { $0.due <= now }.sorted { ($0.due, $0.order) < ($1.due, $1.order) }
                model.removeAll { $0.due <= now }
                let taken = timetable.takeDue(now: now)
                XCTAssertEqual(deadlines(taken.jobs), due.map(\.id), "step \(step)")
                XCTAssertEqual(taken.next, model.map(\.due).min(), "step \(step)")
            }
            XCTAssertEqual(timetable.deadlines, model.count, "step \(step)")
            XCTAssertLessThanOrEqual(timetable.stored, max(2 * timetable.count, timetable.count + 64), "step \(step)")
            if timetable.deadlines != model.count { return }
        }
    }
}
