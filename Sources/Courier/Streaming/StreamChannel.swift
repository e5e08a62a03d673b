import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sink of a ``ResponseStream``: the transport's side writes the body into a ``StreamBuffer``,
/// the consumer's side waits for it.
///
/// Consumers wait without a thread: each wait is a continuation, resumed whenever something
/// changes (a chunk, the head, the end), after which the consumer looks again.
final class StreamChannel: ResponseSink {
    private struct State {
        var buffer: StreamBuffer
        var head: ResponseHead?
        /// The error the request ended with before its head arrived.
        var failure: RequestError?
        /// Consumers waiting for the body, and for the head: told apart so that the head does not
        /// wake a reader of the body for nothing (a wake-up is a thread switch).
        var waiters: [UnsafeContinuation<Void, Never>] = []
        var headWaiters: [UnsafeContinuation<Void, Never>] = []
        /// Counts changes, so that a consumer waits only if nothing changed since it looked.
        var version: UInt64 = 0
        var resumeTransfer: (@Sendable () -> Void)?
        /// Cancels the request; set once it has an ID.
        var cancelRequest: (@Sendable () -> Void)?

        /// Records a change and returns the consumers to wake for it: those of the body, of the
        /// head, or both.
        mutating func takeWaiters(body: Bool = true, head: Bool = true) -> [UnsafeContinuation<Void, Never>] {
            version &+= 1
            var woken: [UnsafeContinuation<Void, Never>] = []
            if body { swap(&woken, &waiters) }
            if head {
                woken += headWaiters
                headWaiters = []
            }
            return woken
        }
    }

    private let state: Locked<State>

    init(options: StreamOptions) {
        state = Locked(State(buffer: StreamBuffer(bufferSize: options.bufferSize, maximumBufferSize: options.maximumBufferSize)))
    }

    /// Sets how the consumer cancels the request (by its ID, once it has one).
    func setCancel(_ cancel: @escaping @Sendable () -> Void) {
        state.withLock { $0.cancelRequest = cancel }
    }

    // MARK: - The transport's side (ResponseSink)

    func accepts(_ head: ResponseHead) -> Bool {
        head.isSuccess
    }

    func open(_ head: ResponseHead, resumeTransfer: @escaping @Sendable () -> Void) -> RequestError? {
        let waiters = state.withLock { state in
            state.head = head
            state.resumeTransfer = resumeTransfer
            return state.takeWaiters(body: false)
        }
        for waiter in waiters { waiter.resume() }
        return nil
    }

    func write(_ chunk: Data) -> SinkDemand {
        let (appended, waiters) = state.withLock { state in
            (state.buffer.append(chunk), state.takeWaiters(head: false))
        }
        for waiter in waiters { waiter.resume() }
        switch appended {
        case .more, .ended: return .more
        case .pause: return .pause
        case .overflow(let error): return .fail(error)
        }
    }

    func close(_ error: RequestError?) -> AnyResult {
        let (result, waiters) = state.withLock { state -> (AnyResult, [UnsafeContinuation<Void, Never>]) in
            state.buffer.finish(error)
            let result: AnyResult
            if let head = state.head, case .some(let ending) = state.buffer.end {
                result = .success(StreamedResponse(head: head, bytesReceived: state.buffer.received, endedWith: ending))
            } else {
                result = .failure(error ?? .cancelled)
            }
            return (result, state.takeWaiters())
        }
        for waiter in waiters { waiter.resume() }
        return result
    }

    func settle(_ result: AnyResult) -> AnyResult {
        guard case .failure(let error) = result else { return result }
        return state.withLock { state in
            guard let head = state.head else { return result }
            // The first end stands: a stream that overflowed and was then cancelled failed.
            let ending = state.buffer.end ?? error
            return .success(StreamedResponse(head: head, bytesReceived: state.buffer.received, endedWith: ending))
        }
    }

    func requestEnded(_ result: AnyResult) {
        let waiters = state.withLock { state in
            let error = result.endingError
            if state.head == nil { state.failure = state.failure ?? error ?? .cancelled }
            state.buffer.finish(error)
            state.cancelRequest = nil
            state.resumeTransfer = nil
            return state.takeWaiters()
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - The consumer's side

    /// The response head, once it is accepted; throws how the request ended if it ended without one.
    func head() async throws(RequestError) -> ResponseHead {
        while true {
            let (step, version) = state.withLock { state -> (Result<ResponseHead, RequestError>?, UInt64) in
                if let head = state.head { return (.success(head), state.version) }
                if let failure = state.failure { return (.failure(failure), state.version) }
                return (nil, state.version)
            }
            if let step { return try step.get() }
            await waitForChange(since: version, forHead: true)
        }
    }

    /// The next chunk, or nil at the end of a complete body.
    func next() async throws(RequestError) -> Data? {
        while true {
            let (taken, resume, version) = state.withLock { state -> (StreamBuffer.Taken, (@Sendable () -> Void)?, UInt64) in
                if let failure = state.failure, state.head == nil { return (.end(failure), nil, state.version) }
                let taken = state.buffer.take()
                if case .chunk(_, true) = taken { return (taken, state.resumeTransfer, state.version) }
                return (taken, nil, state.version)
            }
            switch taken {
            case .chunk(let chunk, _):
                resume?()
                return chunk
            case .end(let error):
                if let error { throw error }
                return nil
            case .wait:
                await waitForChange(since: version)
            }
        }
    }

    /// The consumer gave up (its task was cancelled, or it let go of the stream): the body ends
    /// with ``RequestError/cancelled`` at once, and the request is cancelled.
    func consumerCancelled() {
        consumerFailed(.cancelled)
    }

    /// The consumer stops the stream with `error` (a line over its limit): the body ends with it,
    /// and the request is cancelled, its result saying why.
    func consumerFailed(_ error: RequestError) {
        let (cancel, waiters) = state.withLock { state in
            if state.head == nil { state.failure = state.failure ?? error }
            state.buffer.finish(error)
            return (state.cancelRequest, state.takeWaiters())
        }
        for waiter in waiters { waiter.resume() }
        cancel?()
    }

    /// Whether the body has ended (completely or not).
    var hasEnded: Bool {
        state.withLock { $0.buffer.hasEnded || $0.failure != nil }
    }

    /// Suspends until something changes after `version`, or returns at once if the task is
    /// cancelled (which ends the stream).
    private func waitForChange(since version: UInt64, forHead: Bool = false) async {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                // Checked under the lock: a change since the caller looked resumes it at once.
                let resumeNow = state.withLock { state -> Bool in
                    if Task.isCancelled || state.version != version { return true }
                    if forHead {
                        state.headWaiters.append(continuation)
                    } else {
                        state.waiters.append(continuation)
                    }
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            consumerCancelled()
        }
    }
}
