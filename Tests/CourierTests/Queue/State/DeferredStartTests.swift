import XCTest
@testable import Courier

final class DeferredStartTests: XCTestCase {
    private final class Scope {}
    private let a = Scope(), b = Scope()
    private func id(_ raw: UInt64) -> RequestID { RequestID(rawValue: raw) }
    private func held(_ raws: UInt64..., priority: RequestPriority = .normal) -> [DeferredStart.Held] {
        raws.map { DeferredStart.Held(id: id($0), priority: priority) }
    }

    func testABlockReleasesWhatItHeldOnceInTheOrderAdded() {
        var deferred = DeferredStart()
        XCTAssertTrue(deferred.hold(id(1), priority: .normal, scope: ObjectIdentifier(a), now: 100), "the block's first")
        XCTAssertFalse(deferred.hold(id(2), priority: .high, scope: ObjectIdentifier(a), now: 101))
        XCTAssertTrue(deferred.hold(id(3), priority: .normal, scope: ObjectIdentifier(b), now: 102), "another block's first")
        XCTAssertEqual(deferred.count, 3)

        XCTAssertEqual(deferred.release(scope: ObjectIdentifier(a)),
                       [DeferredStart.Held(id: id(1), priority: .normal), DeferredStart.Held(id: id(2), priority: .high)])
        XCTAssertEqual(deferred.release(scope: ObjectIdentifier(a)), [], "released once")
        XCTAssertEqual(deferred.count, 1, "the other block's request is still held")
        XCTAssertEqual(deferred.release(scope: ObjectIdentifier(b)), held(3))
        // The watchdog then finds nothing and stops
        let look = deferred.releaseOverdue(now: 1_000, patience: 10)
        XCTAssertEqual(look.released, [])
        XCTAssertNil(look.lookAgainAt)
    }

    func testTheWatchdogWaitsForEachBlocksWholePatienceThenReleasesItsRequests() {
        var deferred = DeferredStart()
        _ = deferred.hold(id(1), priority: .normal, scope: ObjectIdentifier(a), now: 100)
        _ = deferred.hold(id(2), priority: .normal, scope: ObjectIdentifier(b), now: 105)
        _ = deferred.hold(id(3), priority: .normal, scope: ObjectIdentifier(a), now: 108)

        // Too early for both: look again when the first block's patience is over
        var look = deferred.releaseOverdue(now: 109, patience: 10)
        XCTAssertEqual(look.released, [])
        XCTAssertEqual(look.lookAgainAt, 110)

        // The first block's patience counts from its first request
        look = deferred.releaseOverdue(now: 110, patience: 10)
        XCTAssertEqual(look.released, held(1, 3))
        XCTAssertEqual(look.lookAgainAt, 115)

        // Then the block that ends late finds nothing to release
        XCTAssertEqual(deferred.release(scope: ObjectIdentifier(a)), [])
        look = deferred.releaseOverdue(now: 115, patience: 10)
        XCTAssertEqual(look.released, held(2))
        XCTAssertNil(look.lookAgainAt)
    }

    func testAWatchdogThatLooksBeforeTheHoldWasMadeReleasesNothing() {
        // The watchdog reads the clock before it takes the lock; a hold made in between is newer.
        var deferred = DeferredStart()
        _ = deferred.hold(id(1), priority: .normal, scope: ObjectIdentifier(a), now: 100)
        let look = deferred.releaseOverdue(now: 99, patience: 10)
        XCTAssertEqual(look.released, [])
        XCTAssertEqual(look.lookAgainAt, 110)
    }

    func testANewHoldOfTheSameBlockAfterItsReleaseRestartsThePatience() {
        var deferred = DeferredStart()
        _ = deferred.hold(id(1), priority: .normal, scope: ObjectIdentifier(a), now: 100)
        _ = deferred.release(scope: ObjectIdentifier(a))
        XCTAssertTrue(deferred.hold(id(2), priority: .normal, scope: ObjectIdentifier(a), now: 150))
        XCTAssertEqual(deferred.releaseOverdue(now: 155, patience: 10).released, [])
        XCTAssertEqual(deferred.releaseOverdue(now: 160, patience: 10).released, held(2))
    }
}
