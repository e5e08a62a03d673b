import XCTest
@testable import Courier

final class ResultRetentionTests: XCTestCase {
    private func id(_ raw: UInt64) -> RequestID { RequestID(rawValue: raw) }
    private let seconds: UInt64 = 1_000_000_000

    private func kept(_ late: ResultRetention.Late) -> Bool {
        if case .kept = late { return true }
        return false
    }

    private func unavailable(_ late: ResultRetention.Late) -> Bool {
        if case .unavailable = late { return true }
        return false
    }

    func testObserversThatComeDuringDeliveryJoinItOnce() {
        var retention = ResultRetention(limit: 8, maximumAge: 30)
        retention.ended(id(1), with: .failure(.cancelled), now: 0)
        XCTAssertTrue(retention.isDelivering(id(1)))

        let calls = Recorder<String>()
        guard case .joined = retention.observe(id(1), with: { _ in calls.append("late") }, now: 0) else {
            return XCTFail("an observer during delivery must join it")
        }
        let joined = retention.delivered(id(1))
        XCTAssertEqual(joined.count, 1)
        joined.forEach { $0(.failure(.cancelled)) }
        XCTAssertEqual(calls.all, ["late"])

        // Afterwards it is delivered, and later observers get the kept result instead
        XCTAssertFalse(retention.isDelivering(id(1)))
        XCTAssertTrue(retention.delivered(id(1)).isEmpty)
        XCTAssertTrue(kept(retention.observe(id(1), with: { _ in }, now: 0)))
    }

    func testAtMostTheLimitIsKeptOldestFirstOut() {
        var retention = ResultRetention(limit: 2, maximumAge: 30)
        for raw: UInt64 in 1...3 {
            retention.ended(id(raw), with: .failure(.timedOut), now: raw)
            _ = retention.delivered(id(raw))
        }
        XCTAssertEqual(retention.keptCount, 2)
        XCTAssertTrue(unavailable(retention.observe(id(1), with: { _ in }, now: 4)))
        XCTAssertTrue(kept(retention.observe(id(2), with: { _ in }, now: 4)))
        XCTAssertTrue(kept(retention.observe(id(3), with: { _ in }, now: 4)))
    }

    func testAResultDisplacedFromAFullRingIsHandedBackToBeFreedOutsideTheLock() {
        // Given a ring of two, full
        var retention = ResultRetention(limit: 2, maximumAge: 30)
        XCTAssertNil(retention.ended(id(1), with: .failure(.timedOut), now: 1))
        XCTAssertNil(retention.ended(id(2), with: .failure(.cancelled), now: 2))
        // When a third result ends, then a fourth
        let third = retention.ended(id(3), with: .success(3), now: 3)
        let fourth = retention.ended(id(4), with: .success(4), now: 4)
        // Then each hands back the oldest kept result, which is no longer kept
        guard case .failure(.timedOut) = third, case .failure(.cancelled) = fourth else {
            return XCTFail("expected the results of 1 and 2, got \(String(describing: third)) and \(String(describing: fourth))")
        }
        for raw: UInt64 in 1...4 { _ = retention.delivered(id(raw)) }
        XCTAssertTrue(unavailable(retention.observe(id(1), with: { _ in }, now: 4)))
        XCTAssertTrue(unavailable(retention.observe(id(2), with: { _ in }, now: 4)))
        XCTAssertTrue(kept(retention.observe(id(4), with: { _ in }, now: 4)))
        // And a ring that keeps nothing, or that aged its results out, displaces none
        var none = ResultRetention(limit: 0, maximumAge: 30)
        XCTAssertNil(none.ended(id(1), with: .failure(.timedOut), now: 1))
        XCTAssertNil(retention.ended(id(5), with: .failure(.timedOut), now: 100 * seconds))
    }

    func testASeededRandomSequenceMatchesAModelThroughManyTurnsOfTheRing() {
        // Given a model: the IDs kept, oldest first, with the time each ended
        var generator = SeededGenerator(seed: 0x8E7A_1D)
        var retention = ResultRetention(limit: 5, maximumAge: 10)
        var model: [(id: UInt64, endedAt: UInt64)] = []
        var now: UInt64 = 0, next: UInt64 = 1

        for step in 0..<5_000 {
            now += UInt64.random(in: 0...3, using: &generator) * seconds
            model.removeAll { now - $0.endedAt > 10 * seconds }
            if Bool.random(using: &generator) {
                // A request ends and is delivered; the oldest beyond five go
                retention.ended(id(next), with: .failure(.timedOut), now: now)
                _ = retention.delivered(id(next))
                model.append((next, now))
                if model.count > 5 { model.removeFirst() }
                next += 1
            } else {
                // A late observer asks for a recent ID, kept or not
                let asked = next - UInt64.random(in: 1...min(next, 12), using: &generator)
                let late = retention.observe(id(asked), with: { _ in }, now: now)
                XCTAssertEqual(kept(late), model.contains { $0.id == asked }, "step \(step), #\(asked)")
            }
            XCTAssertEqual(retention.keptCount, model.count, "step \(step)")
        }
    }

    func testResultsOlderThanTheMaximumAgeAreDropped() {
        var retention = ResultRetention(limit: 8, maximumAge: 30)
        retention.ended(id(1), with: .failure(.timedOut), now: 0)
        _ = retention.delivered(id(1))
        XCTAssertTrue(kept(retention.observe(id(1), with: { _ in }, now: 30 * seconds)))
        XCTAssertTrue(unavailable(retention.observe(id(1), with: { _ in }, now: 30 * seconds + 1)))
        XCTAssertEqual(retention.keptCount, 0)
    }

    func testNoRetentionStillDeliversAndNeverLeavesAnObserverWaiting() {
        var retention = ResultRetention(limit: 0, maximumAge: 30)
        retention.ended(id(1), with: .failure(.cancelled), now: 0)
        XCTAssertTrue(retention.isDelivering(id(1)))
        _ = retention.delivered(id(1))
        XCTAssertTrue(unavailable(retention.observe(id(1), with: { _ in }, now: 0)))
        XCTAssertTrue(unavailable(retention.observe(id(77), with: { _ in }, now: 0)), "an unknown ID")
    }
}

final class ProgressWatchTests: XCTestCase {
    func testOnlyWatchedRequestsAreListedAndAnEndedOneIsForgottenWithItsObservers() {
        var watch = ProgressWatch()
        XCTAssertTrue(watch.isEmpty)
        let first = ProgressObserver(interval: 0) { _ in }
        let second = ProgressObserver(interval: 0) { _ in }
        watch.watch(RequestID(rawValue: 1), with: first)
        watch.watch(RequestID(rawValue: 1), with: second)
        watch.watch(RequestID(rawValue: 2), with: first)

        XCTAssertEqual(watch.watched.map(\.0.rawValue).sorted(), [1, 2])
        let forgotten = watch.forget(RequestID(rawValue: 1))
        XCTAssertEqual(forgotten.count, 2)
        XCTAssertTrue(forgotten[0] === first && forgotten[1] === second, "in the order they were added")
        XCTAssertEqual(watch.watched.map(\.0.rawValue), [2])
        XCTAssertTrue(watch.forget(RequestID(rawValue: 1)).isEmpty)
        _ = watch.forget(RequestID(rawValue: 2))
        XCTAssertTrue(watch.isEmpty, "the poll stops when nothing is watched")
    }
}
