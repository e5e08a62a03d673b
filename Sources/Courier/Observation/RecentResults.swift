import Dispatch

/// Finished results kept for observers added after their request finished, bounded in
/// count and age, so that `let id = queue.add(r); queue.addObserver(for: id) { … }` never
/// misses an instant response.
struct RecentResults {
    private struct Record {
        let id: RequestID
        let result: AnyResult
        let finishedAt: UInt64
    }

    private let limit: Int
    private let maximumAge: UInt64
    private var records: [RequestID: Record] = [:]
    /// Records in the order they finished; `head` is the oldest still kept.
    private var order: [RequestID] = []
    private var head = 0

    init(limit: Int, maximumAge: Double) {
        self.limit = max(0, limit)
        self.maximumAge = UInt64(max(0, maximumAge) * 1_000_000_000)
    }

    var count: Int { records.count }

    mutating func insert(_ result: AnyResult, for id: RequestID, now: UInt64) {
        guard limit > 0 else { return }
        records[id] = Record(id: id, result: result, finishedAt: now)
        order.append(id)
        evict(now: now)
    }

    mutating func result(for id: RequestID, now: UInt64) -> AnyResult? {
        evict(now: now)
        return records[id]?.result
    }

    private mutating func evict(now: UInt64) {
        while head < order.count {
            let id = order[head]
            guard let record = records[id] else { head += 1; continue }
            let tooMany = records.count > limit
            let tooOld = now &- record.finishedAt > maximumAge
            guard tooMany || tooOld else { break }
            records[id] = nil
            head += 1
        }
        // Compact once the dropped prefix dominates, keeping appends amortised O(1).
        if head > 1024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
