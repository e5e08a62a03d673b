import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Every transition of `ServerSentEventConnection`, the state machine behind
/// `ServerSentEventStream.connectionState`.
final class ServerSentEventConnectionTests: XCTestCase {
    private let head = ResponseHead(status: 200, headerFields: ["Content-Type": "text/event-stream"],
                                    url: URL(string: "https://api.example.com/feed")!)
    private let lost = RequestError.transportFailed(URLError(.networkConnectionLost))
    private let refused = RequestError.transportFailed(URLError(.cannotConnectToHost))

    private func rejected(_ status: Int) -> RequestError {
        let response = HTTPURLResponse(url: URL(string: "https://api.example.com/feed")!, statusCode: status,
                                       httpVersion: "HTTP/1.1", headerFields: [:])!
        return .validationFailed(response, body: ResponseData(Data("status \(status)".utf8)))
    }

    /// A connection that was started and opened.
    private func openConnection(reconnects: Bool = true, maximumReconnections: Int? = nil) -> ServerSentEventConnection {
        var connection = ServerSentEventConnection(reconnects: reconnects, maximumReconnections: maximumReconnections)
        XCTAssertTrue(connection.connectionStarted())
        connection.opened(head)
        return connection
    }

    func testANewStreamIsConnectingItsFirstConnectionBeforeMakingIt() {
        // Given / When a new stream
        let connection = ServerSentEventConnection()

        // Then it is connecting connection 1, none made yet
        XCTAssertEqual(connection.state, .connecting(connection: 1))
        XCTAssertEqual(connection.connections, 0)
        XCTAssertEqual(connection.quietConnections, 0)
    }

    func testStartingTheFirstConnectionCountsIt() {
        // Given a new stream
        var connection = ServerSentEventConnection()

        // When its first connection starts
        let started = connection.connectionStarted()

        // Then it is connecting connection 1, which is counted
        XCTAssertTrue(started)
        XCTAssertEqual(connection.state, .connecting(connection: 1))
        XCTAssertEqual(connection.connections, 1)
    }

    func testTheServersAcceptanceOpensItWithTheHead() {
        // Given a connection being made
        var connection = ServerSentEventConnection()
        _ = connection.connectionStarted()

        // When the server accepts it
        connection.opened(head)

        // Then it is open with the server's head
        XCTAssertEqual(connection.state, .open(head))
    }

    func testTheServerEndingTheResponseReconnectsWithoutAnError() {
        // Given an open connection
        var connection = openConnection()

        // When the server ends the response
        connection.connectionEnded(nil, delay: 2.5)

        // Then it waits 2.5 s to reconnect, after no error
        XCTAssertEqual(connection.state, .reconnecting(after: nil, delay: 2.5))
        XCTAssertEqual(connection.quietConnections, 1)
    }

    func testAFailureOnTheWireReconnectsAfterThatError() {
        // Given an open connection
        var connection = openConnection()

        // When the connection is lost
        connection.connectionEnded(lost, delay: 3)

        // Then it waits 3 s to reconnect, after that error
        XCTAssertEqual(connection.state, .reconnecting(after: lost, delay: 3))
    }

    func testATimeoutBeforeTheHeadReconnects() {
        // Given a connection being made
        var connection = ServerSentEventConnection()
        _ = connection.connectionStarted()

        // When it times out
        connection.connectionEnded(.timedOut, delay: 1)

        // Then it waits to reconnect, after the timeout
        XCTAssertEqual(connection.state, .reconnecting(after: .timedOut, delay: 1))
    }

    func testReconnectingStartsTheNextConnectionWithItsNumber() {
        // Given a stream waiting to reconnect after its first connection
        var connection = openConnection()
        connection.connectionEnded(lost, delay: 0)

        // When the next connection starts
        let started = connection.connectionStarted()

        // Then it is connecting connection 2
        XCTAssertTrue(started)
        XCTAssertEqual(connection.state, .connecting(connection: 2))
        XCTAssertEqual(connection.connections, 2)
    }

    func testA204EndsItCleanly() {
        // Given a connection whose request rejected a 204
        var connection = ServerSentEventConnection()
        _ = connection.connectionStarted()

        // When it ends with that rejection
        connection.connectionEnded(rejected(204), delay: 1)

        // Then it ended with no content, and reading throws nothing
        XCTAssertEqual(connection.state, .ended(.noContent))
        XCTAssertNil(ServerSentEventConnectionState.Ending.noContent.error)
    }

    func testAnErrorThatReconnectingCannotMendEndsItAsFailed() {
        // Given a connection being made
        var connection = ServerSentEventConnection()
        _ = connection.connectionStarted()

        // When the server answers 503
        connection.connectionEnded(rejected(503), delay: 1)

        // Then it failed with that error, without reconnecting
        XCTAssertEqual(connection.state, .ended(.failed(rejected(503))))
        XCTAssertEqual(connection.quietConnections, 0)
    }

    func testACancelledConnectionEndsItAsCancelled() {
        // Given an open connection
        var connection = openConnection()

        // When the connection ends cancelled (the reading task was)
        connection.connectionEnded(.cancelled, delay: 1)

        // Then it ended cancelled
        XCTAssertEqual(connection.state, .ended(.cancelled))
    }

    func testWithoutReconnectionTheServersEndClosesIt() {
        // Given an open connection that does not reconnect
        var connection = openConnection(reconnects: false)

        // When the server ends the response
        connection.connectionEnded(nil, delay: 1)

        // Then it is closed, and reading throws nothing
        XCTAssertEqual(connection.state, .ended(.closed))
        XCTAssertNil(ServerSentEventConnectionState.Ending.closed.error)
    }

    func testWithoutReconnectionAFailureOnTheWireFailsIt() {
        // Given an open connection that does not reconnect
        var connection = openConnection(reconnects: false)

        // When the connection is lost
        connection.connectionEnded(lost, delay: 1)

        // Then it failed with that error
        XCTAssertEqual(connection.state, .ended(.failed(lost)))
    }

    func testMoreQuietConnectionsThanTheMaximumEndWithTheLastError() {
        // Given at most 1 reconnection without an event, and a first connection refused
        var connection = ServerSentEventConnection(maximumReconnections: 1)
        _ = connection.connectionStarted()
        connection.connectionEnded(refused, delay: 0)
        XCTAssertEqual(connection.state, .reconnecting(after: refused, delay: 0))

        // When the second is lost too
        _ = connection.connectionStarted()
        connection.connectionEnded(lost, delay: 0)

        // Then it gave up with the last error, which reading throws
        XCTAssertEqual(connection.state, .ended(.reconnectionLimitReached(lastError: lost)))
        XCTAssertEqual(connection.quietConnections, 2)
        XCTAssertTrue(RequestError.same(ServerSentEventConnectionState.Ending.reconnectionLimitReached(lastError: lost).error, lost))
    }

    func testTheLimitReachedByConnectionsTheServerEndedHasNoError() {
        // Given no reconnection allowed without an event
        var connection = openConnection(maximumReconnections: 0)

        // When the server ends the response before any event
        connection.connectionEnded(nil, delay: 0)

        // Then it gave up, without an error
        XCTAssertEqual(connection.state, .ended(.reconnectionLimitReached(lastError: nil)))
        XCTAssertNil(ServerSentEventConnectionState.Ending.reconnectionLimitReached(lastError: nil).error)
    }

    func testAnEventStartsTheCountOfQuietConnectionsOver() {
        // Given at most 1 reconnection without an event, and one quiet connection already
        var connection = openConnection(maximumReconnections: 1)
        connection.connectionEnded(lost, delay: 0)
        _ = connection.connectionStarted()
        connection.opened(head)

        // When the second delivers an event before it is lost
        connection.eventsReceived()
        XCTAssertEqual(connection.quietConnections, 0)
        connection.connectionEnded(lost, delay: 0)

        // Then it reconnects again rather than giving up
        XCTAssertEqual(connection.state, .reconnecting(after: lost, delay: 0))
        XCTAssertEqual(connection.quietConnections, 1)
    }

    func testEventsCountOnlyWhileOpen() {
        // Given a stream waiting to reconnect after a quiet connection
        var connection = openConnection()
        connection.connectionEnded(nil, delay: 0)

        // When events are reported meanwhile
        connection.eventsReceived()

        // Then the quiet connection still counts
        XCTAssertEqual(connection.quietConnections, 1)
    }

    func testFailingWithCancelledEndsItAsCancelledAndWithAnyOtherErrorAsFailed() {
        // Given two open connections
        var cancelled = openConnection()
        var failed = openConnection()

        // When one fails cancelled and the other with an event over the limit
        cancelled.fail(.cancelled)
        failed.fail(.streamLimitExceeded(.eventSize(16)))

        // Then they ended cancelled and failed, throwing those errors
        XCTAssertEqual(cancelled.state, .ended(.cancelled))
        XCTAssertEqual(failed.state, .ended(.failed(.streamLimitExceeded(.eventSize(16)))))
        guard case .cancelled? = ServerSentEventConnectionState.Ending.cancelled.error else { return XCTFail("not cancelled") }
    }

    func testEndingIsFinalTheFirstEndingStays() {
        // Given a stream the server ended with a 204
        var connection = openConnection()
        connection.end(.noContent)

        // When cancel, a failure, a connection's end, an open and a new connection follow
        connection.end(.cancelled)
        connection.fail(lost)
        connection.connectionEnded(lost, delay: 0)
        connection.opened(head)
        let started = connection.connectionStarted()

        // Then it stays ended with no content, and no connection starts
        XCTAssertFalse(started)
        XCTAssertEqual(connection.state, .ended(.noContent))
        XCTAssertEqual(connection.connections, 1)
    }

    func testCancellingBeforeTheFirstConnectionEndsItWithoutOne() {
        // Given a new stream
        var connection = ServerSentEventConnection()

        // When it is cancelled before being read
        connection.end(.cancelled)

        // Then it ended cancelled and makes no connection
        XCTAssertFalse(connection.connectionStarted())
        XCTAssertEqual(connection.state, .ended(.cancelled))
        XCTAssertEqual(connection.connections, 0)
    }

    func testStatesAreEqualWhenTheirValuesAre() {
        // Given / When / Then equal values are equal states, and any difference tells them apart
        XCTAssertEqual(ServerSentEventConnectionState.reconnecting(after: lost, delay: 1),
                       .reconnecting(after: .transportFailed(URLError(.networkConnectionLost)), delay: 1))
        XCTAssertNotEqual(ServerSentEventConnectionState.reconnecting(after: lost, delay: 1), .reconnecting(after: lost, delay: 2))
        XCTAssertNotEqual(ServerSentEventConnectionState.reconnecting(after: lost, delay: 1), .reconnecting(after: refused, delay: 1))
        XCTAssertNotEqual(ServerSentEventConnectionState.reconnecting(after: lost, delay: 1), .reconnecting(after: nil, delay: 1))
        XCTAssertEqual(ServerSentEventConnectionState.ended(.failed(rejected(503))), .ended(.failed(rejected(503))))
        XCTAssertNotEqual(ServerSentEventConnectionState.ended(.failed(rejected(503))), .ended(.failed(rejected(502))))
        XCTAssertNotEqual(ServerSentEventConnectionState.connecting(connection: 1), .connecting(connection: 2))
        XCTAssertNotEqual(ServerSentEventConnectionState.open(head), .connecting(connection: 1))
        XCTAssertNotEqual(ServerSentEventConnectionState.ended(.closed), .ended(.noContent))
    }

    func testDescriptionsSayWhereItIs() {
        // Given / When / Then each state describes itself for a log
        XCTAssertEqual(ServerSentEventConnectionState.connecting(connection: 2).description, "connecting (connection 2)")
        XCTAssertEqual(ServerSentEventConnectionState.open(head).description, "open (200)")
        XCTAssertEqual(ServerSentEventConnectionState.reconnecting(after: nil, delay: 2).description,
                       "reconnecting in 2.0 s after the server ended the response")
        XCTAssertEqual(ServerSentEventConnectionState.ended(.noContent).description, "ended: ended by the server (204 No Content)")
        XCTAssertEqual(ServerSentEventConnectionState.ended(.cancelled).description, "ended: cancelled")
    }

    func testTheArticlesSwitchCoversEveryState() {
        // Given the switch of the DocC article's sample
        func status(_ state: ServerSentEventConnectionState) -> String {
            switch state {
            case .connecting: return "Connecting…"
            case .open: return "Live"
            case .reconnecting(after: nil, let delay): return "Reconnecting in \(delay) s"
            case .reconnecting(after: .some, let delay): return "Reconnecting in \(delay) s (connection lost)"
            case .ended(.failed(let error)): return "Failed: \(error.statusCode ?? 0)"
            case .ended: return "Ended"
            }
        }

        // When / Then it names each state as the screen shows it
        XCTAssertEqual(status(.connecting(connection: 1)), "Connecting…")
        XCTAssertEqual(status(.open(head)), "Live")
        XCTAssertEqual(status(.reconnecting(after: nil, delay: 2)), "Reconnecting in 2.0 s")
        XCTAssertEqual(status(.reconnecting(after: lost, delay: 2)), "Reconnecting in 2.0 s (connection lost)")
        XCTAssertEqual(status(.ended(.failed(rejected(503)))), "Failed: 503")
        XCTAssertEqual(status(.ended(.noContent)), "Ended")
    }
}
