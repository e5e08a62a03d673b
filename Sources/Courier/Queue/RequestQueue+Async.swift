import Synchronization

extension RequestQueue {
    /// Sends a request and returns its response.
    ///
    /// ```swift
    /// let profile = try await queue.send(ProfileRequest(userID: 42))
    /// ```
    /// The request goes through the queue like any other: it waits for a free slot, delegates
    /// see it, and observers of its response type get its result too. Cancelling the calling
    /// `Task` cancels the request, which then throws ``RequestError/cancelled``.
    /// The result does not go through the callback queue, so this works in command-line
    /// programs whose main queue never runs.
    /// - Parameters:
    ///   - request: The request.
    ///   - priority: Its place among waiting requests. Default: `.normal`.
    @discardableResult
    public func send<R: Request>(_ request: R, priority: RequestPriority = .normal) async throws(RequestError) -> R.ResponseType {
        try await send(request, priority: priority, as: R.ResponseType.self)
    }

    /// Sends a request and returns its value with the response it came from: the status, the
    /// header fields, the final URL, and the metrics that say where it came from.
    ///
    /// ```swift
    /// let reply = try await queue.reply(to: PostsRequest(page: 2))
    /// let posts = reply.value
    /// let next = reply.headerFields["Link"]
    /// let fromCache = reply.source != .network
    /// ```
    /// It works as ``send(_:priority:)`` does, cancellation included.
    /// - Parameters:
    ///   - request: The request.
    ///   - priority: Its place among waiting requests. Default: `.normal`.
    public func reply<R: Request>(to request: R, priority: RequestPriority = .normal) async throws(RequestError) -> Reply<R.ResponseType> {
        try await send(request, priority: priority, as: Reply<R.ResponseType>.self)
    }

    /// Sends a request and returns its result typed as `T`: the response type, or a ``Reply`` of it.
    private func send<R: Request, T: Sendable>(_ request: R, priority: RequestPriority, as type: T.Type) async throws(RequestError) -> T {
        let handle = SendHandle()
        let result: AnyResult = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<AnyResult, Never>) in
                // Started on this thread (the caller's task, which waits anyway) rather than by
                // waking the start queue's; never on the main thread.
                let (id, mustStart) = enqueue(request, priority: priority, completion: {
                    continuation.resume(returning: $0)
                }, startsHere: true)
                if !handle.started(id) { cancel(id) }
                if mustStart { runClaimedStartLoopHere() }
            }
        } onCancel: {
            if let id = handle.cancelled() { cancel(id) }
        }
        return try result.typed(as: T.self).get()
    }
}

/// Links an `async` send to its request ID, whichever of "added" and "Task cancelled" comes first.
///
/// One atomic word rather than a lock (one per `send`): 0 before the request is added, its ID's
/// raw value once added (IDs start at 1), `UInt64.max` once the Task is cancelled.
private final class SendHandle: Sendable {
    private static let notAdded: UInt64 = 0
    private static let cancelledMark = UInt64.max
    private let stage = Atomic<UInt64>(SendHandle.notAdded)

    /// Records the ID; returns false when the Task was cancelled before the request was added.
    func started(_ id: RequestID) -> Bool {
        stage.compareExchange(expected: Self.notAdded, desired: id.rawValue, ordering: .acquiringAndReleasing).exchanged
    }

    /// Records the cancellation; returns the ID to cancel if the request was already added.
    func cancelled() -> RequestID? {
        let previous = stage.exchange(Self.cancelledMark, ordering: .acquiringAndReleasing)
        return previous == Self.notAdded || previous == Self.cancelledMark ? nil : RequestID(rawValue: previous)
    }
}
