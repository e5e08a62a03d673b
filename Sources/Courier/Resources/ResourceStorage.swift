import Foundation
#if canImport(Glibc)
import Glibc
#endif

// The parts of a ``Resource`` that are not generic (so that its changes cost no type lookups):
// what it holds under its lock, what a change changed, and a watcher's wait.

/// What a ``Resource`` holds under its lock (``ResourceCore``).
/// Not nested in the generic class, so that it is not generic itself.
struct ResourceStorage {
    // In this order for size: the state's tail takes the narrow fields.
    var state: ResourceState
    /// Whether a change is being made (a call made from an observer then waits for it to end).
    var changing = false
    /// The key of the next caller waiting for the load to end.
    var nextWaiter: UInt32 = 0
    /// The thread of the change running its effects, whose answers may come at once on it (a
    /// fresh hit in memory): they are then part of the change. A thread, not the context: the
    /// queue's start loop runs inside a block of its own start queue, where the context's
    /// queue-specific marker does not show.
    /// The thread as a number, 0 for none: 8 bytes, where Linux's `pthread_t?` takes 9 (and 16
    /// with its alignment).
    var effectsThread: UInt = 0

    var isRunningEffectsHere: Bool { effectsThread == Self.currentThread }

    static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
    /// Updates that came during a change from elsewhere, applied after it (in order).
    var afterChange: [@Sendable () -> Void] = []
    var timer: ResourceClock.Timer?
    /// The callers waiting for the load to end.
    var waiters: [UInt32: CheckedContinuation<Result<any Sendable, RequestError>, Never>] = [:]

    /// The waiting callers, who are no longer waiting.
    mutating func takeWaiters() -> [UInt32: CheckedContinuation<Result<any Sendable, RequestError>, Never>] {
        defer { waiters = [:] }
        return waiters
    }
}

/// What observers see of a state, to tell what a change changed: small and without references,
/// so that a change compares these rather than copies of the whole state (a copy retains its
/// value, head and error, twice a change).
struct ResourceMarks {
    let valueRevision, errorRevision: UInt32
    let receivedAt: Double?
    let source: ResponseSource?
    let isStale, isLoading, hasValue: Bool
}

/// What an event changed, as observers are told: everything a resource shows but `isLoading`
/// under one name (a value arrives with its source, its time, its staleness, the error cleared;
/// see ``ResourceObservation/Property``), and `isLoading`. The phase is read under the first
/// name only, so a change of `isLoading` that changes the phase (there is no value yet) changes
/// the first name too.
struct ResourceChanges {
    let content, isLoading: Bool

    init(_ old: ResourceMarks, _ new: ResourceMarks) {
        isLoading = old.isLoading != new.isLoading
        content = old.valueRevision != new.valueRevision || old.source != new.source || old.receivedAt != new.receivedAt
            || old.errorRevision != new.errorRevision || old.isStale != new.isStale || (isLoading && !new.hasValue)
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
