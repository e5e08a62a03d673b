/// The active requests of one queue, by ID: an array indexed by the ID's distance from the
/// oldest active one, with a dictionary for the rare IDs far beyond it.
///
/// A queue draws most IDs in increasing order, with gaps only where other queues drew theirs, so
/// an array makes `add` cost the same at 100,000 waiting requests as at 10 (a hash table's random
/// probes into a table of megabytes do not). An ID further than the array's size (and at least
/// 1,024) past its end goes to the overflow dictionary instead of filling a run of empty slots.
struct EntryTable<Entry: AnyObject> {
    /// `slots[i]` holds the entry of ID `base + i`, or nil.
    private var slots: [Entry?] = []
    private var base: UInt64 = 0
    /// Slots before `head` are all empty; they are dropped in bulk.
    private var head = 0
    private var overflow: [UInt64: Entry] = [:]
    private(set) var count = 0

    subscript(id: RequestID) -> Entry? {
        // An empty slot may stand where an ID put in the overflow came to be covered by the array
        // later (an ID added out of order: a durable request's, drawn before its journal write).
        if let index = index(of: id.rawValue), let entry = slots[index] { return entry }
        return overflow.isEmpty ? nil : overflow[id.rawValue]
    }

    /// Adds an entry; `id` must not be in the table.
    mutating func insert(_ entry: Entry, for id: RequestID) {
        count += 1
        let raw = id.rawValue
        if head == slots.count, overflow.isEmpty {
            // Empty: start the array at this ID.
            slots.removeAll(keepingCapacity: true)
            head = 0
            base = raw
        }
        guard raw >= base else {
            overflow[raw] = entry
            return
        }
        let offset = raw - base
        if offset < UInt64(slots.count) {
            // Before the first live slot (an ID older than those removed since): a slot there is
            // out of reach of lookups, so the overflow holds it.
            if Int(offset) < head { overflow[raw] = entry } else { slots[Int(offset)] = entry }
            return
        }
        let gap = offset - UInt64(slots.count)
        guard gap <= UInt64(max(1_024, slots.count)) else {
            overflow[raw] = entry
            return
        }
        slots.append(contentsOf: repeatElement(nil, count: Int(gap)))
        slots.append(entry)
    }

    /// Removes and returns the entry of `id`, if any.
    @discardableResult
    mutating func remove(_ id: RequestID) -> Entry? {
        if let index = index(of: id.rawValue), let entry = slots[index] {
            slots[index] = nil
            count -= 1
            while head < slots.count, slots[head] == nil { head += 1 }
            if head > 4_096, head * 2 > slots.count {
                // Drop the empty front so that the array does not grow without end.
                slots.removeFirst(head)
                base += UInt64(head)
                head = 0
            }
            return entry
        }
        guard let entry = overflow.removeValue(forKey: id.rawValue) else { return nil }
        count -= 1
        return entry
    }

    /// The IDs whose entry satisfies `isIncluded`, oldest first.
    func ids(where isIncluded: (Entry) -> Bool) -> [RequestID] {
        var ids: [RequestID] = []
        for index in head..<slots.count {
            if let entry = slots[index], isIncluded(entry) { ids.append(RequestID(rawValue: base + UInt64(index))) }
        }
        for (raw, entry) in overflow where isIncluded(entry) { ids.append(RequestID(rawValue: raw)) }
        return ids.sorted()
    }

    private func index(of raw: UInt64) -> Int? {
        guard raw >= base else { return nil }
        let offset = raw - base
        guard offset < UInt64(slots.count), Int(offset) >= head else { return nil }
        return Int(offset)
    }
}
