/// A request's result that async code waits for: set once when the request ends, read by any
/// number of waiters, before or after.
///
/// A waiter is not woken by its task's cancellation (like `Task.value`): the result comes when
/// the request ends, and cancelling the request is the way to end it sooner.
final class AwaitedResult: Sendable {
    private struct State {
        var result: AnyResult?
        var waiters: [CheckedContinuation<AnyResult, Never>] = []
    }

    private let state = Locked(State())

    /// Sets the result and wakes the waiters; later calls do nothing.
    func resolve(_ result: AnyResult) {
        let waiters = state.withLock { state -> [CheckedContinuation<AnyResult, Never>] in
            guard state.result == nil else { return [] }
            state.result = result
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// The result, once there is one.
    func value() async -> AnyResult {
        await withCheckedContinuation { (continuation: CheckedContinuation<AnyResult, Never>) in
            let result = state.withLock { state -> AnyResult? in
                if state.result == nil { state.waiters.append(continuation) }
                return state.result
            }
            if let result { continuation.resume(returning: result) }
        }
    }
}
