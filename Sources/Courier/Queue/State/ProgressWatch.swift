/// The requests whose transfer progress is observed, read by the queue's periodic poll.
///
/// Progress is polled rather than pushed so that transports keep their fastest path (on Linux,
/// URLSession's completion-handler tasks report nothing as they go).
///
/// Invariants, checked by `ProgressWatchTests`:
/// - only active requests are watched: a request that ends is forgotten with its observers;
/// - the poll runs while, and only while, something is watched (`isEmpty` tells the poll to stop).
struct ProgressWatch {
    private var observers: [RequestID: [ProgressObserver]] = [:]

    var isEmpty: Bool { observers.isEmpty }

    /// Watches a request.
    mutating func watch(_ id: RequestID, with observer: ProgressObserver) {
        observers[id, default: []].append(observer)
    }

    /// Stops watching a request that ended; returns its observers, for their final report.
    mutating func forget(_ id: RequestID) -> [ProgressObserver] {
        // Most requests have no observer of their progress: no key to hash then.
        guard !observers.isEmpty else { return [] }
        return observers.removeValue(forKey: id) ?? []
    }

    /// The watched requests with their observers.
    var watched: [(RequestID, [ProgressObserver])] {
        observers.map { ($0.key, $0.value) }
    }
}
