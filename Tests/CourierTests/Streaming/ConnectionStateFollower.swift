import Foundation
import XCTest
@testable import Courier

/// A follower of a `ServerSentEventStream`'s connection states, from the moment it was made until
/// they finish.
struct ConnectionStateFollower {
    let finished: XCTestExpectation
    let task: Task<[ServerSentEventConnectionState], Never>
}

extension XCTestCase {
    /// Follows `events.connectionStates` from now on (subscribed before this returns).
    func follow(_ events: ServerSentEventStream) -> ConnectionStateFollower {
        let states = events.connectionStates
        let finished = expectation(description: "the states finished")
        let task = Task {
            var seen: [ServerSentEventConnectionState] = []
            for await state in states { seen.append(state) }
            finished.fulfill()
            return seen
        }
        return ConnectionStateFollower(finished: finished, task: task)
    }

    /// Every state the follower saw, once its sequence finished (`timeout` seconds at most: then
    /// the test fails, and what it saw so far is returned).
    func seen(by follower: ConnectionStateFollower, timeout: TimeInterval = 30) async -> [ServerSentEventConnectionState] {
        await fulfillment(of: [follower.finished], timeout: timeout)
        follower.task.cancel()
        return await follower.task.value
    }
}
