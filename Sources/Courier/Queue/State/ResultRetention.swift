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
    /// Kept results in the order their requests ended, from `head` (the oldest still kept; those
    /// before it are dropped). Not a dictionary: every request that ends is kept, and only a late
    /// observer looks one up, by a scan of at most `limit` (256 by default) IDs, which costs less
    /// than hashing each ID as it comes and goes.
    private var keptIDs: [RequestID] = []
    private var kept: [Record?] = []
    private var head = 0

    init(limit: Int, maximumAge: Double) {
        self.limit = max(0, limit)
        self.maximumAge = UInt64(max(0, maximumAge) * 1_000_000_000)
    }

    var keptCount: Int { kept.count - head }
    var undeliveredCount: Int { undelivered.count }

    /// Whether the result of `id` is on its way to its observers.
    func isDelivering(_ id: RequestID) -> Bool {
        undelivered[id] != nil
    }

    /// Records a request's result as it ends; it is being delivered until `delivered(_:)`.
    mutating func ended(_ id: RequestID, with result: AnyResult, now: UInt64) {
        undelivered[id] = []
        guard limit > 0 else { return }
        keptIDs.append(id)
        kept.append(Record(result: result, endedAt: now))
        evict(now: now)
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
        guard let index = keptIDs[head...].lastIndex(of: id), let record = kept[index] else { return .unavailable }
        return .kept(record.result)
    }

    private mutating func evict(now: UInt64) {
        while head < kept.count, let record = kept[head] {
            let tooMany = kept.count - head > limit
            let tooOld = now &- record.endedAt > maximumAge
            guard tooMany || tooOld else { break }
            kept[head] = nil
            head += 1
        }
        // Compact once the dropped prefix dominates, keeping appends amortised O(1).
        if head > 1024, head * 2 > kept.count {
            kept.removeFirst(head)
            keptIDs.removeFirst(head)
            head = 0
        }
    }
}
