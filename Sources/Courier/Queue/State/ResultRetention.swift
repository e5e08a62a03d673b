/// What an ID observer added after its request ended gets: the result still on its way to the
/// observers, or a result kept for a while, bounded in count and age, so that
/// `let id = queue.add(r); queue.addObserver(for: id) { … }` never misses an instant response.
///
/// Invariants, checked by `ResultRetentionTests`:
/// - between `ended` and `delivered`, observers that come join the delivery and are handed back
///   by `delivered`, once;
/// - at most `limit` results are kept, none older than `maximumAge`; the oldest go first;
/// - an observer of a result that is gone, or never was, is told so (`.unavailable`), never left
///   waiting.
struct ResultRetention {
    private struct Record {
        let result: AnyResult
        let endedAt: UInt64
    }

    private let limit: Int
    private let maximumAge: UInt64
    /// Results ended but not yet handed to their observers, with the observers added meanwhile.
    private var undelivered: [RequestID: [IDObserver]] = [:]
    /// Kept results in a ring of at most `limit` slots, in the order their requests ended: `count`
    /// of them from `oldest` on, wrapping. Not a dictionary: every request that ends is kept, and
    /// only a late observer looks one up, by a scan of at most `limit` (256 by default) IDs, which
    /// costs less than hashing each ID as it comes and goes. The slots are made as results come,
    /// up to `limit`, and reused from then on.
    private var keptIDs: [RequestID] = []
    private var kept: [Record?] = []
    private var oldest = 0
    private var count = 0

    init(limit: Int, maximumAge: Double) {
        self.limit = max(0, limit)
        self.maximumAge = UInt64(max(0, maximumAge) * 1_000_000_000)
    }

    var keptCount: Int { count }
    var undeliveredCount: Int { undelivered.count }

    /// Whether the result of `id` is on its way to its observers.
    func isDelivering(_ id: RequestID) -> Bool {
        undelivered[id] != nil
    }

    /// Records a request's result as it ends; it is being delivered until `delivered(_:)`.
    /// Returns the result this one displaced when all `limit` slots were taken, for the caller to
    /// let go of after its lock: it was made `limit` requests ago, and freeing a response's values
    /// (its fields, its body, what was decoded) cost a request 2,600 instructions under the queue's
    /// state lock.
    @discardableResult
    mutating func ended(_ id: RequestID, with result: AnyResult, now: UInt64) -> AnyResult? {
        undelivered[id] = []
        guard limit > 0 else { return nil }
        evict(now: now)
        let record = Record(result: result, endedAt: now)
        if count == limit {
            // Full: the oldest makes room.
            let displaced = kept[oldest].take()
            kept[oldest] = record
            keptIDs[oldest] = id
            oldest = slot(after: oldest)
            return displaced?.result
        } else if kept.count < limit {
            // Not yet wrapped: the ring's end is the array's.
            kept.append(record)
            keptIDs.append(id)
            count += 1
        } else {
            let end = (oldest + count) % limit
            kept[end] = record
            keptIDs[end] = id
            count += 1
        }
        return nil
    }

    /// Marks a result as delivered; returns the observers that came while it was on its way.
    mutating func delivered(_ id: RequestID) -> [IDObserver] {
        undelivered.removeValue(forKey: id) ?? []
    }

    enum Late {
        /// The observer joined the delivery under way.
        case joined
        /// The kept result, to hand to the observer now.
        case kept(AnyResult)
        /// No result is kept for this ID.
        case unavailable
    }

    /// An observer added for a request that is no longer active.
    mutating func observe(_ id: RequestID, with observer: @escaping IDObserver, now: UInt64) -> Late {
        if undelivered[id] != nil {
            undelivered[id]?.append(observer)
            return .joined
        }
        evict(now: now)
        // The newest first: an ID ends once, but were it kept twice, its last result counts.
        for age in stride(from: count - 1, through: 0, by: -1) {
            let index = (oldest + age) % limit
            if keptIDs[index] == id, let record = kept[index] { return .kept(record.result) }
        }
        return .unavailable
    }

    /// Drops the results older than the maximum age, the oldest first.
    private mutating func evict(now: UInt64) {
        while count > 0, let record = kept[oldest], now &- record.endedAt > maximumAge {
            kept[oldest] = nil
            oldest = slot(after: oldest)
            count -= 1
        }
    }

    private func slot(after index: Int) -> Int {
        index + 1 == limit ? 0 : index + 1
    }
}
