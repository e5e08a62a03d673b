/// The deadlines of running requests, earliest first (a binary min-heap).
///
/// Linux's URLSession ignores `URLRequest.timeoutInterval` (measured: a 0.5–2 s timeout on a
/// 4-second response never fired), so the queue enforces timeouts itself, with one timer for
/// the earliest deadline rather than one per request. Entries of requests that ended earlier
/// are dropped lazily, and purged when they outnumber the live ones.
struct Deadlines {
    private var heap: [(deadline: UInt64, id: RequestID)] = []

    var count: Int { heap.count }
    var earliest: UInt64? { heap.first?.deadline }

    mutating func insert(_ deadline: UInt64, for id: RequestID) {
        heap.append((deadline, id))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the IDs whose deadline is at or before `now`.
    mutating func popExpired(now: UInt64) -> [RequestID] {
        var expired: [RequestID] = []
        while let first = heap.first, first.deadline <= now {
            expired.append(first.id)
            removeFirst()
        }
        return expired
    }

    /// Keeps only the entries for which `isLive` holds, when dead ones are the majority.
    mutating func purge(liveCount: Int, isLive: (RequestID) -> Bool) {
        guard heap.count > 64, heap.count > liveCount * 2 else { return }
        let live = heap.filter { isLive($0.id) }
        heap = []
        heap.reserveCapacity(live.count)
        for entry in live { insert(entry.deadline, for: entry.id) }
    }

    private mutating func removeFirst() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
