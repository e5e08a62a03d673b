#if os(Linux)
import XCTest
@testable import Courier

/// The curl loop's choice between waiting awake for a lone transfer's response head and
/// sleeping for it.
final class HeadWaitTests: XCTestCase {
    private let quick = HeadWait.awakeWait - 1
    private let slow = HeadWait.awakeWait

    func testItWaitsAwakeOnlyForAHeadAndOnlyWhileHeadsComeQuickly() {
        // Given a loop that has not waited yet
        var wait = HeadWait()
        // Then it waits awake for a head, and never when no lone transfer awaits one
        XCTAssertTrue(wait.waitsAwake(awaitsHead: true))
        XCTAssertFalse(wait.waitsAwake(awaitsHead: false))
        // When an awake wait ends without the head
        wait.awakeWaitEndedEmpty()
        // Then it sleeps for the next ones
        XCTAssertFalse(wait.waitsAwake(awaitsHead: true))
        XCTAssertFalse(wait.headsComeQuickly)
    }

    func testASleepThatEndsWithinTheAwakeWaitBringsWaitingAwakeBack() {
        // Given a loop that sleeps for heads (a far server)
        var wait = HeadWait()
        wait.awakeWaitEndedEmpty()
        // When it sleeps for one as long as the awake wait, or longer
        wait.slept(from: 1_000, to: 1_000 + slow)
        // Then it still sleeps
        XCTAssertFalse(wait.waitsAwake(awaitsHead: true))
        // When a head it slept for came within the awake wait
        wait.slept(from: 5_000, to: 5_000 + quick)
        // Then it waits awake again
        XCTAssertTrue(wait.waitsAwake(awaitsHead: true))
        // And one slow head sends it back to sleeping
        wait.slept(from: 9_000, to: 9_000 + 10 * slow)
        XCTAssertFalse(wait.waitsAwake(awaitsHead: true))
    }
}
#endif
