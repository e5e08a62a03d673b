/// Where a ``Resource`` stands, for a view to switch on.
///
/// ```swift
/// switch profile.phase {
/// case .idle, .loading: ProgressView()
/// case .loaded(let user): ProfileView(user: user)
/// case .failed(let error): ErrorView(error)
/// }
/// ```
/// A value, once there, stays: a later failure keeps the phase at ``loaded(_:)`` and shows in
/// ``Resource/error``; a later load shows in ``Resource/isLoading``; a value past its freshness
/// shows in ``Resource/isStale``.
public enum ResourcePhase<Value: Sendable>: Sendable {
    /// Nothing loaded yet, and no load running.
    case idle
    /// The first load is running: there is no value yet.
    case loading
    /// There is a value (perhaps stale, perhaps being loaded again, perhaps with a later error).
    case loaded(Value)
    /// The last load failed and there has never been a value.
    case failed(RequestError)

    /// The value, when the phase is ``loaded(_:)``.
    public var value: Value? {
        if case .loaded(let value) = self { return value }
        return nil
    }
}
