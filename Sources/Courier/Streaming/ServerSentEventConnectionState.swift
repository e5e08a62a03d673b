import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a ``ServerSentEventStream`` is in its life: connecting, open, waiting to reconnect, or
/// ended, and why. Read it with ``ServerSentEventStream/connectionState``, or follow it with
/// ``ServerSentEventStream/connectionStates``, to show the user whether events are live.
///
/// ```swift
/// switch events.connectionState {
/// case .connecting: status = "Connecting…"
/// case .open: status = "Live"
/// case .reconnecting(after: nil, let delay): status = "Reconnecting in \(delay) s"
/// case .reconnecting(after: .some, let delay): status = "Reconnecting in \(delay) s (connection lost)"
/// case .ended(.failed(let error)): status = "Failed: \(error)"
/// case .ended: status = "Ended"
/// }
/// ```
///
/// A stream goes from ``connecting(connection:)`` to ``open(_:)``; when a connection ends, or
/// cannot be made, to ``reconnecting(after:delay:)`` and then ``connecting(connection:)`` with the
/// next number; from any of them to ``ended(_:)``, which it never leaves. Two states are equal when their values are; errors are
/// equal when they are the same case with equal values (errors of other types inside them, such
/// as a decoding error, by their descriptions).
public enum ServerSentEventConnectionState: Sendable, Equatable, CustomStringConvertible {
    /// Connection number `connection` (1 for the first) is being made, waiting for the server's
    /// answer. A stream connects when it is first read, and is `.connecting(connection: 1)` until
    /// then, as the WHATWG `EventSource` starts in its `CONNECTING` state.
    case connecting(connection: Int)

    /// The server accepted the connection (status 200, `text/event-stream`): events flow. The
    /// head is the server's answer, for its header fields.
    case open(ResponseHead)

    /// The connection ended and the stream waits `delay` seconds (the server's `retry:`, else
    /// ``ServerSentEventOptions/reconnectionDelay``) before connecting again. `error` is the failure
    /// on the wire that ended it (``RequestError/transportFailed(_:)`` or
    /// ``RequestError/timedOut``), `nil` when the server ended the response itself.
    case reconnecting(after: RequestError?, delay: TimeInterval)

    /// The stream will not connect again; the ending says why. Reading it then ends: without an
    /// error when the ending's ``Ending/error`` is `nil`, else throwing that error.
    case ended(Ending)

    /// Why a ``ServerSentEventStream`` ended.
    public enum Ending: Sendable, Equatable, CustomStringConvertible {
        /// The server answered `204 No Content`: the standard's way to say there will be no more
        /// events. Reading ends without an error.
        case noContent

        /// More connections in a row than ``ServerSentEventOptions/maximumReconnections`` ended
        /// without an event (with a maximum of 2, the third). `lastError` is the failure that ended the last one, which reading throws; `nil`
        /// when the server ended that response itself (reading then ends without an error).
        case reconnectionLimitReached(lastError: RequestError?)

        /// The server ended the response and ``ServerSentEventOptions/reconnects`` is off. Reading
        /// ends without an error.
        case closed

        /// ``ServerSentEventStream/cancel()``, the reading task's cancellation, or the stream or its
        /// queue being released stopped it. Reading throws ``RequestError/cancelled``.
        case cancelled

        /// It failed with an error that reconnecting cannot mend, which reading throws: a status
        /// other than 200 or 204, a response that is not `text/event-stream`, an event over
        /// ``ServerSentEventOptions/maximumEventSize``, or, without reconnection, a failure on the
        /// wire.
        case failed(RequestError)

        /// The error reading the stream throws after this ending; `nil` when it ends without one.
        public var error: RequestError? {
            switch self {
            case .noContent, .closed: return nil
            case .reconnectionLimitReached(let lastError): return lastError
            case .cancelled: return .cancelled
            case .failed(let error): return error
            }
        }

        public var description: String {
            switch self {
            case .noContent: return "ended by the server (204 No Content)"
            case .reconnectionLimitReached(let lastError):
                return "gave up reconnecting (maximumReconnections reached)" + (lastError.map { ": \($0)" } ?? "")
            case .closed: return "closed by the server, without reconnection"
            case .cancelled: return "cancelled"
            case .failed(let error): return "failed: \(error)"
            }
        }

        public static func == (lhs: Ending, rhs: Ending) -> Bool {
            switch (lhs, rhs) {
            case (.noContent, .noContent), (.closed, .closed), (.cancelled, .cancelled):
                return true
            case (.reconnectionLimitReached(let left), .reconnectionLimitReached(let right)):
                return RequestError.same(left, right)
            case (.failed(let left), .failed(let right)):
                return RequestError.same(left, right)
            case (.noContent, _), (.reconnectionLimitReached, _), (.closed, _), (.cancelled, _), (.failed, _):
                return false
            }
        }
    }

    /// Whether the stream ended: no state follows.
    public var hasEnded: Bool {
        if case .ended = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .connecting(let connection): return "connecting (connection \(connection))"
        case .open(let head): return "open (\(head.status))"
        case .reconnecting(let error, let delay):
            return "reconnecting in \(delay) s after " + (error.map { "\($0)" } ?? "the server ended the response")
        case .ended(let ending): return "ended: \(ending)"
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.connecting(let left), .connecting(let right)):
            return left == right
        case (.open(let left), .open(let right)):
            return left == right
        case (.reconnecting(let leftError, let leftDelay), .reconnecting(let rightError, let rightDelay)):
            return leftDelay == rightDelay && RequestError.same(leftError, rightError)
        case (.ended(let left), .ended(let right)):
            return left == right
        case (.connecting, _), (.open, _), (.reconnecting, _), (.ended, _):
            return false
        }
    }
}

extension RequestError {
    /// Whether two errors are the same case with equal values, for the states that carry one
    /// (`RequestError` is not `Equatable`: some cases hold an `any Error`, compared here by
    /// description). Responses compare as ``ResponseHead``s, bodies by their bytes.
    static func same(_ lhs: RequestError?, _ rhs: RequestError?) -> Bool {
        guard let lhs, let rhs else { return lhs == nil && rhs == nil }
        switch lhs {
        case .invalidURL(let text, let reason):
            guard case .invalidURL(text, reason) = rhs else { return false }
        case .invalidParameters(let keyPath, let reason):
            guard case .invalidParameters(keyPath, reason) = rhs else { return false }
        case .invalidHeader(let name, let reason):
            guard case .invalidHeader(name, reason) = rhs else { return false }
        case .transportFailed(let error):
            guard case .transportFailed(let other) = rhs else { return false }
            return error.code == other.code && error.failingURL == other.failingURL
                && error.userInfo[NSLocalizedDescriptionKey] as? String == other.userInfo[NSLocalizedDescriptionKey] as? String
        case .validationFailed(let response, let body):
            guard case .validationFailed(let otherResponse, let otherBody) = rhs else { return false }
            return ResponseHead(response) == ResponseHead(otherResponse) && body.data == otherBody.data
        case .serializationFailed(let type, let underlying):
            guard case .serializationFailed(type, let other) = rhs else { return false }
            return "\(underlying)" == "\(other)"
        case .cancelled:
            guard case .cancelled = rhs else { return false }
        case .timedOut:
            guard case .timedOut = rhs else { return false }
        case .noFixture(let request, let nearest):
            guard case .noFixture(request, nearest) = rhs else { return false }
        case .responseTooLarge(let limit):
            guard case .responseTooLarge(limit) = rhs else { return false }
        case .tooManyRedirects(let count):
            guard case .tooManyRedirects(count) = rhs else { return false }
        case .streamLimitExceeded(let limit):
            guard case .streamLimitExceeded(limit) = rhs else { return false }
        case .authenticationFailed(let underlying):
            guard case .authenticationFailed(let other) = rhs else { return false }
            return "\(underlying)" == "\(other)"
        case .resultUnavailable(let id):
            guard case .resultUnavailable(id) = rhs else { return false }
        case .responseTypeMismatch(let expected, let actual):
            guard case .responseTypeMismatch(expected, actual) = rhs else { return false }
        case .notCached(let url):
            guard case .notCached(url) = rhs else { return false }
        case .responseTypeNotRegistered(let name, let response, let body):
            guard case .responseTypeNotRegistered(name, let other, let otherBody) = rhs,
                  response.statusCode == other.statusCode, body.data == otherBody.data else { return false }
        case .failedBeforeRestart(let text):
            guard case .failedBeforeRestart(text) = rhs else { return false }
        }
        return true
    }
}
