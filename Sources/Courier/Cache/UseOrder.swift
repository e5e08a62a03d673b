/// What a ``UseOrder`` keeps: values grouped by a key (the URL of a stored response, or its
/// hash), each with a cost in bytes.
protocol UseOrderEntry {
    associatedtype Group: Hashable
    var group: Group { get }
    var cost: Int { get }
}

/// The entries of a store in the order of their last use, grouped by URL, with their total cost:
/// what both stores evict by.
///
/// A doubly linked list threaded through an array of slots, so that inserting, using (moving to
/// the newest end), removing and finding the oldest are O(1) with no allocation per node and no
/// reference counting of nodes; a dictionary from group to slots finds a URL's variants. A slot
/// number stays valid until its entry is removed; a later insert reuses it.
struct UseOrder<Entry: UseOrderEntry> {
    private struct Slot {
        var entry: Entry?
        /// The slot used just before this one, or -1.
        var older: Int
        /// The slot used just after this one, or -1.
        var newer: Int
    }

    private var slots: [Slot] = []
    private var free: [Int] = []
    private var newest = -1
    private var oldest = -1
    /// The slots of each group, the most recently inserted first.
    private var groups: [Entry.Group: [Int]] = [:]

    /// The entries' total cost.
    private(set) var size = 0

    /// The entry in a slot that holds one. An entry set here keeps its group and cost.
    subscript(slot: Int) -> Entry {
        get { slots[slot].entry! }
        set { slots[slot].entry = newValue }
    }

    /// A group's slots, the most recently inserted first; empty for a group with none.
    func slots(of group: Entry.Group) -> [Int] {
        groups[group] ?? []
    }

    /// Adds an entry as the most recently used one, and the first of its group; returns its slot.
    @discardableResult
    mutating func insert(_ entry: Entry) -> Int {
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            slots[slot] = Slot(entry: entry, older: -1, newer: -1)
        } else {
            slot = slots.count
            slots.append(Slot(entry: entry, older: -1, newer: -1))
        }
        link(slot)
        groups[entry.group, default: []].insert(slot, at: 0)
        size += entry.cost
        return slot
    }

    /// Makes a slot's entry the most recently used one.
    mutating func use(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        link(slot)
    }

    /// Removes a slot's entry and returns it.
    @discardableResult
    mutating func remove(_ slot: Int) -> Entry {
        unlink(slot)
        let entry = slots[slot].entry!
        slots[slot].entry = nil
        free.append(slot)
        size -= entry.cost
        // In place: copying the list out of the dictionary would copy it on every removal.
        groups[entry.group]?.removeAll { $0 == slot }
        if groups[entry.group]?.isEmpty == true { groups[entry.group] = nil }
        return entry
    }

    /// Removes the least recently used entries until the rest cost `capacity` at most; returns them.
    mutating func evict(toFit capacity: Int) -> [Entry] {
        var evicted: [Entry] = []
        while size > capacity, oldest >= 0 {
            evicted.append(remove(oldest))
        }
        return evicted
    }

    /// Removes everything.
    mutating func removeAll() {
        self = UseOrder()
    }

    /// Puts a slot that is in no list at the newest end.
    private mutating func link(_ slot: Int) {
        slots[slot].older = newest
        slots[slot].newer = -1
        if newest >= 0 { slots[newest].newer = slot } else { oldest = slot }
        newest = slot
    }

    /// Takes a slot out of the list, joining its neighbours.
    private mutating func unlink(_ slot: Int) {
        let older = slots[slot].older
        let newer = slots[slot].newer
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        if newer >= 0 { slots[newer].older = older } else { newest = older }
    }
}
