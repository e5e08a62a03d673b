import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Observation

// The parts of a ``Resource`` that are not generic (so that its changes cost no type lookups):
// what it holds under its lock, what a change changed, and a watcher's wait.

/// What a ``Resource`` holds under its lock (one of ``LockStripes``: thousands may live at once).
/// Not nested in the generic class, so that it is not generic itself.
struct ResourceStorage {
    var state: ResourceState
    /// Whether a change is being made (a call made from an observer then waits for it to end).
    var changing = false
    /// The thread of the change running its effects, whose answers may come at once on it (a
    /// fresh hit in memory): they are then part of the change. A thread, not the context: the
    /// queue's start loop runs inside a block of its own start queue, where the context's
    /// queue-specific marker does not show.
    var effectsThread: pthread_t?

    var isRunningEffectsHere: Bool {
        effectsThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }
    /// Updates that came during a change from elsewhere, applied after it (in order).
    var afterChange: [@Sendable () -> Void] = []
    var timer: ResourceClock.Timer?
    /// The callers waiting for the load to end.
    var nextWaiter = 0
    var waiters: [Int: CheckedContinuation<Result<any Sendable, RequestError>, Never>] = [:]
}

/// The published properties an event changed, told to the registrar before and after.
struct ResourceChanges {
    let value, source, updatedAt, error, isLoading, isStale: Bool

    init(_ old: ResourceState, _ new: ResourceState) {
        value = old.valueRevision != new.valueRevision
        source = old.source != new.source
        updatedAt = old.receivedAt != new.receivedAt
        error = old.errorRevision != new.errorRevision
        isLoading = old.isLoading != new.isLoading
        isStale = old.isStale != new.isStale
    }

    func notify(_ observation: ResourceObservation, before: Bool) {
        func tell(_ property: ResourceObservation.Property) {
            if before { observation.willSet(property) } else { observation.didSet(property) }
        }
        // `.value` stands for everything but `isLoading` (see ResourceObservation.Property).
        if value || source || updatedAt || error || isStale { tell(.value) }  // a new head comes with a new value
        if isLoading { tell(.isLoading) }
    }
}

/// Ends a ``Resource/watch()`` when its task is cancelled, whichever of waiting and cancelling
/// comes first.
final class ResourceWatching: Sendable {
    private let state = Locked<(ended: Bool, continuation: CheckedContinuation<Void, Never>?)>((false, nil))

    func wait(_ continuation: CheckedContinuation<Void, Never>) {
        let ended = state.withLock { state in
            if !state.ended { state.continuation = continuation }
            return state.ended
        }
        if ended { continuation.resume() }
    }

    func end() {
        state.withLock { state in
            state.ended = true
            defer { state.continuation = nil }
            return state.continuation
        }?.resume()
    }
}
