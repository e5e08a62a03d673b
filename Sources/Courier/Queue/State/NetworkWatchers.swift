import Synchronization

/// Who watches a queue's ``NetworkStatus`` (``RequestQueue/networkStatusUpdates``), told of every
/// change in order: they are told under the queue's lock, which a continuation's `yield` never
/// waits on (it only enqueues).
///
/// Invariants: a watcher is told the status at once, then each change once; one whose stream
/// ended is dropped the next time anything is told.
struct NetworkWatchers {
    private var continuations: [UInt64: AsyncStream<NetworkStatus>.Continuation] = [:]
    private static let tokens = Atomic<UInt64>(0)

    var count: Int { continuations.count }

    static func nextToken() -> UInt64 {
        tokens.add(1, ordering: .relaxed).newValue
    }

    mutating func add(_ continuation: AsyncStream<NetworkStatus>.Continuation, token: UInt64, current: NetworkStatus) {
        guard case .enqueued = continuation.yield(current) else { return }
        continuations[token] = continuation
    }

    mutating func remove(_ token: UInt64) {
        continuations[token] = nil
    }

    mutating func tell(_ status: NetworkStatus) {
        for (token, continuation) in continuations {
            if case .terminated = continuation.yield(status) { continuations[token] = nil }
        }
    }

    /// Takes every watcher out, for the queue's end: the caller finishes them, outside the lock
    /// (finishing runs their termination handlers, which take it).
    mutating func takeAll() -> [AsyncStream<NetworkStatus>.Continuation] {
        defer { continuations = [:] }
        return Array(continuations.values)
    }
}
