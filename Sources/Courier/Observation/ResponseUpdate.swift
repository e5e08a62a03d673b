/// One delivery to an observer that sees a request's stored response first and then its fresh
/// one: ``RequestQueue/load(_:priority:owner:handler:)`` and
/// ``RequestQueue/addObserver(ownedBy:updates:)``.
///
/// ```swift
/// queue.load(ProfileRequest(), owner: self) { [weak self] update in
///     if let profile = update.value { self?.profile = profile }        // cached at once, then fresh
///     if update.isFinal { self?.isRefreshing = false }
///     if let error = update.error, update.cachedValueStands { self?.banner = "Offline: \(error)" }
/// }
/// ```
/// A request with a stored response that is still fresh gets one update, final, from the cache;
/// one with a stale stored response gets that first (`isFinal` false, source `.cache(.stale)`),
/// then the final one: from the network, revalidated, or a failure (then ``cachedValueStands``).
public struct ResponseUpdate<Value: Sendable>: Sendable {
    /// The request.
    public let id: RequestID
    /// The value, or why there is none.
    public let result: Result<Value, RequestError>
    /// Where the value came from; `nil` for a failure.
    public let source: ResponseSource?
    /// Whether this is the request's result: nothing follows it. A non-final update is a stored
    /// response shown while the request goes on.
    public let isFinal: Bool
    /// For a final failure: whether the observer was shown a stored value first, which then
    /// stands (the screen keeps showing it, perhaps marked as not fresh).
    public let cachedValueStands: Bool

    /// The value, if this update has one.
    public var value: Value? { try? result.get() }

    /// The error, if this update is a failure.
    public var error: RequestError? {
        if case .failure(let error) = result { return error }
        return nil
    }
}

/// A ``ResponseUpdate`` before it is typed for its observer.
struct AnyUpdate: Sendable {
    let id: RequestID
    let result: AnyResult
    let source: ResponseSource?
    let isFinal: Bool
    let cachedValueStands: Bool

    func typed<R: Sendable>(as type: R.Type) -> ResponseUpdate<R> {
        let typed = result.typed(as: R.self)
        let source: ResponseSource? = if case .success = typed { self.source } else { nil }
        return ResponseUpdate(id: id, result: typed, source: source, isFinal: isFinal, cachedValueStands: cachedValueStands)
    }
}

/// Receives one request's updates, added with ``RequestQueue/load(_:priority:owner:handler:)``
/// or ``RequestQueue/load(_:priority:)``.
struct UpdateHandler: Sendable {
    let deliver: @Sendable (AnyUpdate) -> Void
    /// Whether it is called where the update is made rather than on the callback queue: an
    /// `async` consumer needs no thread of the queue's, and a program whose main queue never
    /// runs still gets its updates.
    var isDirect = false
}
