import XCTest
@testable import Courier

final class DeferredStartTests: XCTestCase {
    func testTheBlockTakesItsRunBackOnce() {
        var deferred = DeferredStart()
        deferred.deferRun(now: 100)
        XCTAssertTrue(deferred.take())
        XCTAssertFalse(deferred.take(), "a run is taken once")
        // The watchdog then finds nothing and stops
        XCTAssertEqual(deferred.check(now: 1_000, patience: 10), .stop)
    }

    func testTheWatchdogWaitsForThePatienceThenTakesTheRunOver() {
        var deferred = DeferredStart()
        deferred.deferRun(now: 100)

        XCTAssertEqual(deferred.check(now: 105, patience: 10), .lookAgain)
        XCTAssertEqual(deferred.check(now: 110, patience: 10), .takeOver)

        // Then the block that ends late finds its run gone, and the watchdog stops
        XCTAssertFalse(deferred.take())
        XCTAssertEqual(deferred.check(now: 200, patience: 10), .stop)
    }

    func testANewDeferralRestartsThePatience() {
        var deferred = DeferredStart()
        deferred.deferRun(now: 100)
        XCTAssertTrue(deferred.take())
        deferred.deferRun(now: 150)
        XCTAssertEqual(deferred.check(now: 155, patience: 10), .lookAgain)
        XCTAssertEqual(deferred.check(now: 160, patience: 10), .takeOver)
    }
}
