import Foundation

/// The state machine of a ``ServerSentEventStream``'s connections: every change of its
/// ``ServerSentEventConnectionState``, and the decision to reconnect or to end, happens here.
///
/// Invariants:
/// - `.ended` is final: once there, every transition leaves the value as it is (a
///   ``ServerSentEventStream/cancel()`` racing the reading task's own ending keeps the first).
/// - `.connecting(connection: n)` has `n == connections` once the connection was started (and
///   `n == 1`, `connections == 0` before the first).
/// - `.open` only follows `.connecting`; `.reconnecting` only follows `.connecting` or `.open`.
/// - `quietConnections` counts the connections in a row that ended without an event; more than
///   `maximumReconnections` end the stream.
///
/// One iterator drives it, one step after the other. A stream read by two iterators at once (which
/// ``ServerSentEventStream`` does not support) interleaves their steps: each is then applied as
/// it comes, without a crash or a hang, but the states may not follow the order above.
struct ServerSentEventConnection: Sendable, Equatable {
    private(set) var state = ServerSentEventConnectionState.connecting(connection: 1)
    /// The connections started so far.
    private(set) var connections = 0
    /// The connections in a row that ended without delivering an event.
    private(set) var quietConnections = 0
    let reconnects: Bool
    let maximumReconnections: Int?

    init(reconnects: Bool = true, maximumReconnections: Int? = nil) {
        self.reconnects = reconnects
        self.maximumReconnections = maximumReconnections
    }

    init(options: ServerSentEventOptions) {
        self.init(reconnects: options.reconnects, maximumReconnections: options.maximumReconnections)
    }

    var hasEnded: Bool { state.hasEnded }

    /// A connection starts: `.connecting` with its number. False, and nothing changes, when the
    /// stream has ended (it was cancelled meanwhile).
    mutating func connectionStarted() -> Bool {
        guard !hasEnded else { return false }
        connections += 1
        state = .connecting(connection: connections)
        return true
    }

    /// The server accepted the connection.
    mutating func opened(_ head: ResponseHead) {
        guard case .connecting = state else { return }
        state = .open(head)
    }

    /// The open connection delivered at least one event: the count of quiet connections starts over.
    mutating func eventsReceived() {
        guard case .open = state else { return }
        quietConnections = 0
    }

    /// The connection ended: `error` is what ended it, `nil` when the server ended the response.
    /// Failures on the wire (``RequestError/transportFailed(_:)``, ``RequestError/timedOut``) and
    /// the server's end are reconnected after `delay` seconds when ``reconnects`` is on and the
    /// limit allows; a 204 ends the stream cleanly; any other error ends it as failed.
    mutating func connectionEnded(_ error: RequestError?, delay: TimeInterval) {
        guard !hasEnded else { return }
        switch error {
        case nil, .transportFailed?, .timedOut?:
            break
        case let error? where error.statusCode == 204:
            return end(.noContent)
        case let error?:
            return fail(error)
        }
        guard reconnects else { return end(error.map { .failed($0) } ?? .closed) }
        quietConnections += 1
        if let maximum = maximumReconnections, quietConnections > maximum {
            return end(.reconnectionLimitReached(lastError: error))
        }
        state = .reconnecting(after: error, delay: delay)
    }

    /// The stream failed with `error`: ended as cancelled for ``RequestError/cancelled``, else
    /// as failed. Nothing changes when it had already ended.
    mutating func fail(_ error: RequestError) {
        if case .cancelled = error {
            end(.cancelled)
        } else {
            end(.failed(error))
        }
    }

    /// The stream ends, unless it already had.
    mutating func end(_ ending: ServerSentEventConnectionState.Ending) {
        guard !hasEnded else { return }
        state = .ended(ending)
    }
}
