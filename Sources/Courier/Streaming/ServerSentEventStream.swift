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
/// ``connectionState`` says whether it is connected, waiting to reconnect (after which error, for
/// how long) or ended (and why); ``connectionStates`` follows it:
///
/// ```swift
/// for await state in events.connectionStates {
///     if case .reconnecting(let error, let delay) = state { print("reconnecting in", delay, error as Any) }
/// }
/// ```
///
/// It is read once, by one consumer; letting go of it stops its connection.
public final class ServerSentEventStream: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent
    public typealias Failure = RequestError

    fileprivate struct State {
        var lastEventID: String
        var reconnectionTime: TimeInterval
        /// The server's last `retry:`, in seconds; nil until it sent one.
        var serverRetry: TimeInterval?
        /// The connections being read, which ``cancel()`` stops: one, unless two iterators read
        /// the stream at once (unsupported, but then cancelling stops both).
        var current: [ObjectIdentifier: ResponseStream] = [:]
        /// The wait before a reconnection, which ``cancel()`` cuts short.
        var delay: Task<Void, any Error>?
        /// Every change of the connection's state is made by it.
        var connection: ServerSentEventConnection
        /// The sequences of ``connectionStates`` still followed, by their number.
        var observers: [Int: AsyncStream<ServerSentEventConnectionState>.Continuation] = [:]
        var nextObserver = 0
    }

    /// How many state changes wait for a slow follower of ``connectionStates``; older ones are dropped.
    static let stateBufferSize = 16

    private let state: Locked<State>
    private let connect: @Sendable (_ lastEventID: String) -> ResponseStream?
    /// The options it follows.
    public let options: ServerSentEventOptions

    init(options: ServerSentEventOptions, connect: @escaping @Sendable (_ lastEventID: String) -> ResponseStream?) {
        self.options = options
        self.connect = connect
        state = Locked(State(lastEventID: options.lastEventID ?? "", reconnectionTime: Swift.max(0, options.reconnectionDelay),
                             connection: ServerSentEventConnection(options: options)))
    }

    deinit {
        // Nobody can read it any more: its connection stops, and its followers see it end.
        let current = transition { state in
            state.connection.end(.cancelled)
            return state.current.values
        }
        for stream in current { stream.cancel() }
    }

    /// Changes the state with `body`, under the lock; a change of the connection's state is
    /// yielded to every follower in the same critical section, so that all see the changes in
    /// order, and an ending finishes them (outside the lock: finishing runs their termination
    /// handlers, which take it).
    @discardableResult
    fileprivate func transition<T>(_ body: (inout State) -> T) -> T {
        let (result, finished) = state.withLock { state -> (T, [AsyncStream<ServerSentEventConnectionState>.Continuation]) in
            let before = state.connection.state
            let result = body(&state)
            let after = state.connection.state
            guard after != before else { return (result, []) }
            for observer in state.observers.values { observer.yield(after) }
            guard after.hasEnded else { return (result, []) }
            defer { state.observers = [:] }
            return (result, Array(state.observers.values))
        }
        for observer in finished { observer.finish() }
        return result
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
        state.withLock { $0.connection.connections }
    }

    /// Where the stream is now: connecting, open, waiting to reconnect, or ended and why. Before the
    /// first read, `.connecting(connection: 1)`: the stream connects when it is read.
    public var connectionState: ServerSentEventConnectionState {
        state.withLock { $0.connection.state }
    }

    /// The stream's ``connectionState``, now and at each change, for a screen that shows whether
    /// events are live.
    ///
    /// ```swift
    /// for await state in events.connectionStates {
    ///     statusLabel = "\(state)"
    /// }
    /// ```
    ///
    /// Each sequence yields the current state first, then every change, and finishes after
    /// ``ServerSentEventConnectionState/ended(_:)`` (also when the stream is cancelled or released:
    /// it does not keep the stream alive). Make as many as needed; each has its own buffer, where
    /// a follower slower than the changes finds the 16 latest (the ending is never dropped).
    public var connectionStates: AsyncStream<ServerSentEventConnectionState> {
        let (stream, continuation) = AsyncStream.makeStream(of: ServerSentEventConnectionState.self,
                                                            bufferingPolicy: .bufferingNewest(Self.stateBufferSize))
        let ended = state.withLock { state -> Bool in
            continuation.yield(state.connection.state)
            guard !state.connection.hasEnded else { return true }
            let number = state.nextObserver
            state.nextObserver += 1
            state.observers[number] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { state in state.observers[number] = nil }
            }
            return false
        }
        if ended { continuation.finish() }
        return stream
    }

    /// How many sequences of ``connectionStates`` are followed now (for tests: a follower that
    /// stops is let go).
    var connectionStateFollowers: Int {
        state.withLock { $0.observers.count }
    }

    /// Stops the stream and its connection; reading then throws ``RequestError/cancelled``, and the
    /// state is ``ServerSentEventConnectionState/Ending/cancelled`` (unless it had already ended).
    public func cancel() {
        let (current, delay) = transition { state in
            state.connection.end(.cancelled)
            return (state.current.values, state.delay)
        }
        for stream in current { stream.cancel() }
        delay?.cancel()
    }

    /// Waits `seconds` before a reconnection; throws ``RequestError/cancelled`` at once when the
    /// stream or the consuming task is cancelled meanwhile.
    fileprivate func wait(_ seconds: TimeInterval) async throws(RequestError) {
        let delay = Task { try await Task.sleep(nanoseconds: UInt64(seconds * 1e9)) }
        let ended = state.withLock { state in
            state.delay = delay
            return state.connection.hasEnded
        }
        if ended { delay.cancel() }
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
        /// This iterator's connection, from its start to its end.
        private var response: ResponseStream?
        private var chunks: ResponseStream.AsyncIterator?
        private var parser: ServerSentEventParser?
        private var pending: [ServerSentEvent] = []
        private var finished = false

        init(events: ServerSentEventStream) {
            self.events = events
        }

        /// The next event; `nil` once the stream ended without an error (the server's 204, or,
        /// without reconnection, the end of the connection: see
        /// ``ServerSentEventConnectionState/Ending``).
        public mutating func next() async throws(RequestError) -> ServerSentEvent? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(RequestError) -> ServerSentEvent? {
            guard !finished else { return nil }
            do {
                return try await step(isolation: actor)
            } catch {
                // Whatever ended the stream first is its ending, and what reading throws.
                finished = true
                let response = self.response.map(ObjectIdentifier.init)
                self.response = nil
                let ending = events.transition { state -> ServerSentEventConnectionState.Ending? in
                    if let response { state.current[response] = nil }
                    state.connection.fail(error)
                    guard case .ended(let ending) = state.connection.state else { return nil }
                    return ending
                }
                throw ending?.error ?? error
            }
        }

        /// Delivers what was parsed, reads on, and connects or reconnects as the state says.
        private mutating func step(isolation actor: isolated (any Actor)?) async throws(RequestError) -> ServerSentEvent? {
            while true {
                if !pending.isEmpty { return pending.removeFirst() }
                guard chunks != nil else {
                    switch events.connectionState {
                    case .ended(let ending):
                        if let error = ending.error { throw error }
                        finished = true
                        return nil
                    case .reconnecting(_, let delay):
                        if delay > 0 { try await events.wait(delay) }
                    case .connecting, .open:
                        break
                    }
                    try await open(isolation: actor)
                    continue
                }
                let chunk: Data?
                do {
                    chunk = try await chunks!.next(isolation: actor)
                } catch {
                    connectionEnded(error)
                    continue
                }
                guard let chunk else {
                    connectionEnded(nil)
                    continue
                }
                try consume(chunk)
            }
        }

        /// Makes a connection and, once the server accepted it, reads from it; when the stream
        /// ended meanwhile, or the server answered 204, only the state changes.
        private mutating func open(isolation actor: isolated (any Actor)?) async throws(RequestError) {
            let events = self.events
            let started = events.transition { state -> String? in
                state.connection.connectionStarted() ? state.lastEventID : nil
            }
            guard let lastEventID = started else { return }
            guard let stream = events.connect(lastEventID) else { throw RequestError.cancelled }
            response = stream
            let hasEnded = events.state.withLock { state -> Bool in
                state.current[ObjectIdentifier(stream)] = stream
                return state.connection.hasEnded
            }
            if hasEnded { stream.cancel() }
            let head: ResponseHead
            do {
                head = try await stream.head
            } catch {
                connectionEnded(error)
                return
            }
            if head.status == 204 {
                stream.cancel()
                response = nil
                events.transition { state in
                    state.current[ObjectIdentifier(stream)] = nil
                    state.connection.end(.noContent)
                }
                return
            }
            guard head.status == 200 else {
                stream.cancel()
                throw RequestError.validationFailed(head.httpURLResponse, body: ResponseData(Data()))
            }
            let type = head.headerFields["Content-Type"] ?? ""
            guard type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() == "text/event-stream" else {
                stream.cancel()
                throw RequestError.transportFailed(URLError(.badServerResponse, userInfo: [
                    NSLocalizedDescriptionKey: "the response is \(type.isEmpty ? "without a Content-Type" : "of type \(type)"), "
                        + "not text/event-stream: the URL does not serve server-sent events",
                    NSURLErrorFailingURLErrorKey: head.url as Any,
                ]))
            }
            events.transition { $0.connection.opened(head) }
            chunks = stream.makeAsyncIterator()
            parser = ServerSentEventParser(lastEventID: lastEventID, maximumEventSize: events.options.maximumEventSize)
        }

        private mutating func consume(_ chunk: Data) throws(RequestError) {
            do {
                pending += try parser!.consume(chunk)
            } catch {
                let failure = RequestError.streamLimitExceeded(.eventSize(events.options.maximumEventSize))
                chunks?.stream.channel.consumerFailed(failure)
                throw failure
            }
            let (lastEventID, retry, received) = (parser!.lastEventID, parser!.reconnectionTime, !pending.isEmpty)
            events.state.withLock { state in
                state.lastEventID = lastEventID
                if let retry {
                    state.reconnectionTime = TimeInterval(retry) / 1000
                    state.serverRetry = state.reconnectionTime
                }
                if received { state.connection.eventsReceived() }
            }
        }

        /// The connection ended (`error` `nil`: the server ended the response) or failed: the
        /// state decides between reconnecting and ending (``ServerSentEventConnection``).
        private mutating func connectionEnded(_ error: RequestError?) {
            chunks = nil
            parser = nil
            let ended = response.map(ObjectIdentifier.init)
            response = nil
            events.transition { state in
                if let ended { state.current[ended] = nil }
                state.connection.connectionEnded(error, delay: state.reconnectionTime)
            }
        }
    }
}
