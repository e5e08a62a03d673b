import Foundation

extension RequestQueue {
    /// Adds a request whose handler sees a stored response at once, then the fresh one: what
    /// makes a screen show data the moment it opens and refresh it behind the user's back.
    ///
    /// ```swift
    /// @MainActor final class ProfileModel {
    ///     var profile: Profile?
    ///     var isStale = false
    ///     func refresh(queue: RequestQueue) {
    ///         queue.load(ProfileRequest(), owner: self) { [weak self] update in
    ///             if let profile = update.value { self?.profile = profile }
    ///             self?.isStale = update.source == .cache(.stale) || update.cachedValueStands
    ///         }
    ///     }
    /// }
    /// ```
    /// The handler runs on the callback queue:
    /// - with a fresh stored response: once, final, from the cache (nothing is sent);
    /// - with a stale one (or any, for ``CachePolicy/reload``): that first (`isFinal` false,
    ///   source `.cache(.stale)`), then the result: from the network, revalidated (`304`), or a
    ///   failure with ``ResponseUpdate/cachedValueStands``;
    /// - with nothing stored: once, with the result.
    ///
    /// The request is otherwise like any other: its ``RequestID`` works with `cancel` and
    /// `addObserver(for:)` (which see the result only), and type observers see its result.
    /// - Parameters:
    ///   - request: The request (a `GET`; others have nothing stored to show).
    ///   - priority: Its place among waiting requests. Default: `.normal`.
    ///   - owner: Names a cancel group for ``cancelAll(ownedBy:)``, held weakly. Default: none.
    ///   - handler: Called once or twice with the request's updates.
    /// - Returns: The request's ID.
    @discardableResult
    public func load<R: Request>(_ request: R, priority: RequestPriority = .normal, owner: AnyObject? = nil,
                                 handler: @escaping @Sendable (ResponseUpdate<R.ResponseType>) -> Void) -> RequestID {
        enqueue(box: RequestBox(request: request, showsCachedFirst: true), priority: priority, owner: owner,
                completion: nil, updates: UpdateHandler(deliver: { handler($0.typed(as: R.ResponseType.self)) })).0
    }

    /// Sends a request and returns its updates as an asynchronous sequence: a stored response at
    /// once, then the fresh one, as ``load(_:priority:owner:handler:)`` delivers them.
    ///
    /// ```swift
    /// for await update in queue.load(ProfileRequest()) {
    ///     if let profile = update.value { show(profile, stale: update.source == .cache(.stale)) }
    ///     if let error = update.error, update.cachedValueStands { showOfflineBanner(error) }
    /// }
    /// ```
    /// The sequence ends after the final update. A consumer that stops iterating before (a
    /// `break`, or its task cancelled) cancels the request. Updates do not go through the
    /// callback queue, so this works in command-line programs whose main queue never runs.
    /// - Parameters:
    ///   - request: The request (a `GET`; others have nothing stored to show).
    ///   - priority: Its place among waiting requests. Default: `.normal`.
    public func load<R: Request>(_ request: R, priority: RequestPriority = .normal) -> AsyncStream<ResponseUpdate<R.ResponseType>> {
        let (stream, continuation) = AsyncStream.makeStream(of: ResponseUpdate<R.ResponseType>.self, bufferingPolicy: .unbounded)
        // AsyncStream calls onTermination before it stops taking elements, so the cancellation
        // that it causes could still be yielded to a consumer that left: this says it left.
        let consumerLeft = Locked(false)
        let updates = UpdateHandler(deliver: { update in
            guard !consumerLeft.withLock({ $0 }) else { return }
            let typed = update.typed(as: R.ResponseType.self)
            continuation.yield(typed)
            if typed.isFinal { continuation.finish() }
        }, isDirect: true)
        let id = enqueue(box: RequestBox(request: request, showsCachedFirst: true), priority: priority, owner: nil,
                         completion: nil, updates: updates).0
        let weakSelf = WeakRequestQueue(self)
        continuation.onTermination = { termination in
            // After the final update this finds the request ended and does nothing.
            guard case .cancelled = termination else { return }
            consumerLeft.withLock { $0 = true }
            weakSelf.queue?.cancel(id)
        }
        return stream
    }

    /// Registers a handler for every update of response type `R`, for as long as `owner` lives:
    /// the stored responses shown first by ``load(_:priority:owner:handler:)`` (`isFinal` false)
    /// and every request's result, each marked with where it came from.
    ///
    /// ```swift
    /// queue.addObserver(ownedBy: self, updates: { [weak self] (update: ResponseUpdate<Profile>) in
    ///     self?.show(update.value, stale: update.source == .cache(.stale))
    /// })
    /// ```
    /// Like ``addObserver(ownedBy:handler:)``, the queue holds `owner` weakly.
    public func addObserver<R: Sendable>(ownedBy owner: AnyObject,
                                         updates handler: @escaping @Sendable (ResponseUpdate<R>) -> Void) {
        let observer = TypeObserver(owner: owner, wantsUpdates: true) { handler($0.typed(as: R.self)) }
        state.withLock { $0.addTypeObserver(observer, for: ObjectIdentifier(R.self), now: Self.now()) }
    }

    /// Shows a stored response to a request's update observers before the request goes on: the
    /// cache layer calls it, on the thread that starts the request, before anything is sent.
    func showCachedFirst(_ response: TransportResponse, of attempt: Attempt) {
        // A stored response that does not make a value (it fails validation or decoding) is not shown.
        guard case .success(let value) = attempt.box.makeResponse(from: response, decoding: configuration.decoding),
              let (handlers, typeObservers) = state.withLock({ $0.showCachedValue(attempt.id) }),
              !handlers.isEmpty || !typeObservers.isEmpty else { return }
        let update = AnyUpdate(id: attempt.id, result: .success(value), source: response.source, isFinal: false,
                               cachedValueStands: false)
        for observer in typeObservers where observer.isDirect { observer.deliver(update) }
        for handler in handlers where handler.isDirect { handler.deliver(update) }
        guard handlers.contains(where: { !$0.isDirect }) || typeObservers.contains(where: { !$0.isDirect }) else { return }
        configuration.callbackQueue.async {
            DeliveryScope.run {
                for handler in handlers where !handler.isDirect { handler.deliver(update) }
                for observer in typeObservers where !observer.isDirect { observer.deliver(update) }
            }
        }
    }
}
