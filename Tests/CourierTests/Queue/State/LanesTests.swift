import XCTest
@testable import Courier

/// The lanes of durable requests, event by event: one request out per lane, the next in the
/// order added once it ends, and requests that end before their turn.
final class LanesTests: XCTestCase {
    private func id(_ number: UInt64) -> RequestID { RequestID(rawValue: number) }

    func testOnlyALanesFirstRequestIsOutAndTheNextFollowsInOrder() {
        // Given three requests added to one lane and one to another
        var lanes = Lanes()
        let admitted = [lanes.add(id(1), to: "a"), lanes.add(id(2), to: "a"), lanes.add(id(3), to: "b"), lanes.add(id(4), to: "a")]
        // Then only each lane's first may go
        XCTAssertEqual(admitted, [true, false, true, false])
        XCTAssertEqual(lanes.count, 4)
        XCTAssertEqual(lanes.waitingCount, 2)
        // When the first ends, the second is next; when that ends, the fourth
        XCTAssertEqual(lanes.end(id(1), in: "a"), id(2))
        XCTAssertEqual(lanes.first(of: "a"), id(2))
        XCTAssertEqual(lanes.end(id(2), in: "a"), id(4))
        // And the other lane is untouched, and an emptied lane is forgotten
        XCTAssertEqual(lanes.end(id(3), in: "b"), nil)
        XCTAssertEqual(lanes.first(of: "b"), nil)
        XCTAssertEqual(lanes.end(id(4), in: "a"), nil)
        XCTAssertEqual(lanes.count, 0)
    }

    func testARequestThatEndsBeforeItsTurnLeavesWithoutChangingTheTurn() {
        // Given a lane of three
        var lanes = Lanes()
        _ = [lanes.add(id(1), to: "a"), lanes.add(id(2), to: "a"), lanes.add(id(3), to: "a")]
        // When the second is cancelled while the first is out
        XCTAssertEqual(lanes.end(id(2), in: "a"), nil)
        // Then the first is still out, and the third comes after it
        XCTAssertEqual(lanes.first(of: "a"), id(1))
        XCTAssertEqual(lanes.end(id(1), in: "a"), id(3))
        // And ending an ID twice, or one of no lane, changes nothing
        XCTAssertEqual(lanes.end(id(1), in: "a"), nil)
        XCTAssertEqual(lanes.end(id(9), in: "z"), nil)
        XCTAssertEqual(lanes.first(of: "a"), id(3))
        // And a request added to the lane after it emptied goes at once
        XCTAssertEqual(lanes.end(id(3), in: "a"), nil)
        XCTAssertTrue(lanes.add(id(5), to: "a"))
    }
}
