extension RequestQueue {
    /// Every result of response type `R` from now on, as an asynchronous sequence.
    ///
    /// ```swift
    /// for await result in queue.results(of: Profile.self) {
    ///     if case .success(let profile) = result { show(profile) }
    /// }
    /// ```
    /// The sequence ends when the consumer stops iterating (a `break`, or its task is cancelled);
    /// the queue then drops its observer, so nothing is left behind. Results are buffered while
    /// the consumer is busy, so none is lost. They do not go through the callback queue.
    public func results<R: Sendable>(of type: R.Type) -> AsyncStream<Result<R, RequestError>> {
        let (stream, continuation) = AsyncStream.makeStream(of: Result<R, RequestError>.self, bufferingPolicy: .unbounded)
        let owner = StreamOwner()
        let observer = TypeObserver(owner: owner, isDirect: true) { continuation.yield($0.result.typed(as: R.self)) }
        state.withLock { $0.addTypeObserver(observer, for: ObjectIdentifier(R.self), now: Self.now()) }
        let weakSelf = WeakRequestQueue(self)
        continuation.onTermination = { _ in
            // The stream holds the owner until it ends; then the observer goes with it.
            observer.remove()
            weakSelf.queue?.removeObservers(ownedBy: owner)
        }
        return stream
    }
}

/// The owner of a results stream's observer, alive exactly as long as the stream.
private final class StreamOwner: Sendable {}
