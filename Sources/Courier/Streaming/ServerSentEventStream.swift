import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Server-sent events as they arrive, parsed as the WHATWG HTML standard's `EventSource` does,
/// with reconnection. Made by ``RequestQueue/events(_:priority:options:)``.
///
/// ```swift
/// for try await event in queue.events(TickerRequest()) {
///     let tick = try event.decode(Tick.self)      // each event's data, as JSON
///     print(event.type, tick)
/// }
/// ```
///
/// Each connection is a request of the queue (a ``ResponseStream`` under the hood), with the
/// request's headers plus `Accept: text/event-stream`, `Cache-Control: no-store` and, once an
/// event had an `id`, `Last-Event-ID`. When a connection ends or fails on the wire, the stream
/// waits for the reconnection delay (the server's `retry:` or
/// ``ServerSentEventOptions/reconnectionDelay``) and connects again, unless
/// ``ServerSentEventOptions/reconnects`` is off. It finishes on a `204 No Content`, and throws
/// on any other status than 200 (``RequestError/validationFailed(_:body:)``), on a response that is
/// not `text/event-stream`, on an event over ``ServerSentEventOptions/maximumEventSize``, and
/// with ``RequestError/cancelled`` when cancelled (``cancel()`` or the consuming task).
///
/// It is read once, by one consumer; letting go of it stops its connection.
public final class ServerSentEventStream: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent
    public typealias Failure = RequestError

    private struct State {
        var lastEventID: String
        var reconnectionTime: TimeInterval
        /// The server's last `retry:`, in seconds; nil until it sent one.
        var serverRetry: TimeInterval?
        var current: ResponseStream?
        /// The wait before a reconnection, which ``cancel()`` cuts short.
        var delay: Task<Void, any Error>?
        var cancelled = false
        var connections = 0
    }

    private let state: Locked<State>
    private let connect: @Sendable (_ lastEventID: String) -> ResponseStream?
    /// The options it follows.
    public let options: ServerSentEventOptions

    init(options: ServerSentEventOptions, connect: @escaping @Sendable (_ lastEventID: String) -> ResponseStream?) {
        self.options = options
        self.connect = connect
        state = Locked(State(lastEventID: options.lastEventID ?? "", reconnectionTime: Swift.max(0, options.reconnectionDelay)))
    }

    deinit {
        state.withLock { $0.current }?.cancel()
    }

    /// The ID of the last event that had one (sent as `Last-Event-ID` when reconnecting); keep it
    /// to resume a later stream (``ServerSentEventOptions/lastEventID``). Empty when none.
    public var lastEventID: String {
        state.withLock { $0.lastEventID }
    }

    /// The delay before the next reconnection, in seconds: the server's last `retry:`, else the
    /// options'.
    public var reconnectionDelay: TimeInterval {
        state.withLock { $0.reconnectionTime }
    }

    /// The reconnection time the server last asked for with `retry:`, in seconds; `nil` until it
    /// sends one (``reconnectionDelay`` is then the options').
    public var serverRetry: TimeInterval? {
        state.withLock { $0.serverRetry }
    }

    /// How many connections were made so far.
    public var connectionCount: Int {
        state.withLock { $0.connections }
    }

    /// Stops the stream and its connection; reading then throws ``RequestError/cancelled``.
    public func cancel() {
        let (current, delay) = state.withLock { state in
            state.cancelled = true
            return (state.current, state.delay)
        }
        current?.cancel()
        delay?.cancel()
    }

    /// Waits `seconds` before a reconnection; throws ``RequestError/cancelled`` at once when the
    /// stream or the consuming task is cancelled meanwhile.
    fileprivate func wait(_ seconds: TimeInterval) async throws(RequestError) {
        let delay = Task { try await Task.sleep(nanoseconds: UInt64(seconds * 1e9)) }
        let cancelled = state.withLock { state in
            state.delay = delay
            return state.cancelled
        }
        if cancelled { delay.cancel() }
        do {
            try await withTaskCancellationHandler {
                try await delay.value
            } onCancel: {
                delay.cancel()
            }
        } catch {
            throw RequestError.cancelled
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(events: self)
    }

    /// Reads the events one by one, connecting and reconnecting as needed.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let events: ServerSentEventStream
        private var chunks: ResponseStream.AsyncIterator?
        private var parser: ServerSentEventParser?
        private var pending: [ServerSentEvent] = []
        private var quietConnections = 0
        private var finished = false

        init(events: ServerSentEventStream) {
            self.events = events
        }

        /// The next event; `nil` once the server ended the stream with a 204 (or, without
        /// reconnection, when the connection ended).
        public mutating func next() async throws(RequestError) -> ServerSentEvent? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(RequestError) -> ServerSentEvent? {
            while true {
                if !pending.isEmpty { return pending.removeFirst() }
                if finished { return nil }
                if chunks == nil {
                    guard try await open(isolation: actor) else {
                        finished = true
                        return nil
                    }
                    continue
                }
                do {
                    guard let chunk = try await chunks!.next(isolation: actor) else {
                        try await connectionEnded(nil, isolation: actor)
                        continue
                    }
                    try consume(chunk)
                } catch {
                    try await connectionEnded(error, isolation: actor)
                }
            }
        }

        /// Connects (after the delay when reconnecting); false when the server said to stop (204).
        private mutating func open(isolation actor: isolated (any Actor)?) async throws(RequestError) -> Bool {
            let events = self.events
            if events.connectionCount > 0 {
                let delay = events.reconnectionDelay
                if delay > 0 { try await events.wait(delay) }
            }
            let lastEventID = events.lastEventID
            let opened = events.state.withLock { state -> Bool in
                guard !state.cancelled else { return false }
                state.connections += 1
                return true
            }
            guard opened, let stream = events.connect(lastEventID) else { throw RequestError.cancelled }
            let isCancelled = events.state.withLock { state -> Bool in
                state.current = stream
                return state.cancelled
            }
            if isCancelled { stream.cancel() }
            let head: HTTPURLResponse
            do {
                head = try await stream.response
            } catch {
                try await connectionEnded(error, isolation: actor)
                return !finished
            }
            if head.statusCode == 204 {
                stream.cancel()
                return false
            }
            guard head.statusCode == 200 else {
                stream.cancel()
                throw RequestError.validationFailed(head, body: ResponseData(Data()))
            }
            let type = head.value(forHTTPHeaderField: "Content-Type") ?? ""
            guard type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() == "text/event-stream" else {
                stream.cancel()
                throw RequestError.transportFailed(URLError(.badServerResponse, userInfo: [
                    NSLocalizedDescriptionKey: "the response is \(type.isEmpty ? "without a Content-Type" : "of type \(type)"), "
                        + "not text/event-stream: the URL does not serve server-sent events",
                    NSURLErrorFailingURLErrorKey: head.url as Any,
                ]))
            }
            chunks = stream.makeAsyncIterator()
            parser = ServerSentEventParser(lastEventID: lastEventID, maximumEventSize: events.options.maximumEventSize)
            return true
        }

        private mutating func consume(_ chunk: Data) throws(RequestError) {
            do {
                pending += try parser!.consume(chunk)
            } catch {
                let failure = RequestError.streamLimitExceeded(.eventSize(events.options.maximumEventSize))
                chunks?.stream.channel.consumerFailed(failure)
                throw failure
            }
            let (lastEventID, retry) = (parser!.lastEventID, parser!.reconnectionTime)
            events.state.withLock { state in
                state.lastEventID = lastEventID
                if let retry {
                    state.reconnectionTime = TimeInterval(retry) / 1000
                    state.serverRetry = state.reconnectionTime
                }
            }
            if !pending.isEmpty { quietConnections = 0 }
        }

        /// A connection ended (`nil`: the server closed it) or failed: reconnect, or end the
        /// stream with the error. Only failures on the wire are reconnected.
        private mutating func connectionEnded(_ error: RequestError?, isolation actor: isolated (any Actor)?) async throws(RequestError) {
            chunks = nil
            parser = nil
            events.state.withLock { $0.current = nil }
            if let error {
                switch error {
                case .transportFailed, .timedOut:
                    break
                case .validationFailed(let response, _) where response.statusCode == 204:
                    finished = true
                    return
                default:
                    throw error
                }
            }
            guard events.options.reconnects else {
                if let error { throw error }
                finished = true
                return
            }
            quietConnections += 1
            if let maximum = events.options.maximumReconnections, quietConnections > maximum {
                if let error { throw error }
                finished = true
            }
        }
    }
}
