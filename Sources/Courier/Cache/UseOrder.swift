/// What a ``UseOrder`` keeps: values grouped by a key (the URL of a stored response, or its
/// hash), each with a cost in bytes.
protocol UseOrderEntry {
    associatedtype Group: Hashable
    var cost: Int { get }
    /// Whether the entry is of `group`. Asked instead of the entry's group, which an entry need
    /// not keep as a value (a memory store's packed response has its URL only as bytes).
    func isIn(_ group: Group) -> Bool
}

/// An entry that keeps its group as a value (the disk store's, by its file name).
protocol GroupedUseOrderEntry: UseOrderEntry {
    var group: Group { get }
}

extension GroupedUseOrderEntry {
    func isIn(_ group: Group) -> Bool { self.group == group }
}

/// The entries of a store in the order of their last use, grouped by URL, with their total cost:
/// what both stores evict by.
///
/// A doubly linked list threaded through an array of slots, so that inserting, using (moving to
/// the newest end), removing and finding the oldest are O(1) with no allocation per node and no
/// reference counting of nodes; an index from group to its newest slot (``GroupIndex``), and a
/// list through the slots of each group, find a URL's variants (usually one) with one lookup and
/// no array per group. A slot number stays valid until its entry is removed; a later insert
/// reuses it. Each slot keeps its group's hash, so that removing an entry hashes nothing.
struct UseOrder<Entry: UseOrderEntry> {
    private struct Slot {
        var entry: Entry?
        /// The slot used just before this one, or -1.
        var older: Int
        /// The slot used just after this one, or -1.
        var newer: Int
        /// The next slot of the same group (inserted before this one), or -1.
        var nextInGroup: Int
        /// The group's hash in the index.
        var groupHash: UInt32
    }

    private var slots: [Slot] = []
    private var free: [Int] = []
    private var newest = -1
    private var oldest = -1
    /// The most recently inserted slot of each group; the others follow through `nextInGroup`.
    private var groups = GroupIndex()

    /// The entries' total cost.
    private(set) var size = 0

    /// The entry in a slot that holds one. An entry set here keeps its group and cost.
    subscript(slot: Int) -> Entry {
        get { slots[slot].entry! }
        set { slots[slot].entry = newValue }
    }

    /// Changes the entry in a slot that holds one, in place. The entry keeps its group and cost.
    mutating func update<Result>(_ slot: Int, _ change: (inout Entry) -> Result) -> Result {
        change(&slots[slot].entry!)
    }

    /// A group's slots, the most recently inserted first; empty for a group with none.
    func slots(of group: Entry.Group) -> [Int] {
        slots(of: group, hash: GroupIndex.hash(group))
    }

    /// ``slots(of:)`` with the group's ``GroupIndex/hash(_:)``, which the caller has.
    func slots(of group: Entry.Group, hash: UInt32) -> [Int] {
        var slot = groups.bucket(hash: hash) { slots[$0].entry!.isIn(group) }
            .map(groups.slot(inBucket:)) ?? -1
        var found: [Int] = []
        while slot >= 0 {
            found.append(slot)
            slot = slots[slot].nextInGroup
        }
        return found
    }

    /// Adds an entry as the most recently used one, and the first of `group` (the entry's, whose
    /// ``GroupIndex/hash(_:)`` is `hash`), and removes the entry of that group that `isReplaced`
    /// picks (a stored variant the new one replaces), with one lookup of the group for both;
    /// returns the new slot and the removed entry.
    mutating func insert(_ entry: consuming Entry, in group: Entry.Group, hash: UInt32,
                         replacing isReplaced: (Entry) -> Bool) -> (slot: Int, replaced: Entry?) {
        let slot = free.popLast() ?? slots.count
        let next: Int
        if let bucket = groups.bucket(hash: hash, where: { slots[$0].entry!.isIn(group) }) {
            next = groups.slot(inBucket: bucket)
            groups.setSlot(slot, inBucket: bucket)
        } else {
            next = -1
            groups.insert(slot, hash: hash)
        }
        size += entry.cost
        // The entry moved into its slot field by field: a whole `Slot` made first and assigned
        // would copy the entry twice and destroy it once more.
        if slot == slots.count {
            slots.append(Slot(entry: entry, older: -1, newer: -1, nextInGroup: next, groupHash: hash))
        } else {
            slots[slot].entry = entry
            slots[slot].nextInGroup = next
            slots[slot].groupHash = hash
        }
        link(slot)
        var previous = slot
        var current = next
        while current >= 0 {
            if isReplaced(slots[current].entry!) {
                slots[previous].nextInGroup = slots[current].nextInGroup
                return (slot, release(current))
            }
            previous = current
            current = slots[current].nextInGroup
        }
        return (slot, nil)
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
        let next = slots[slot].nextInGroup
        // The group's head is found by the hash the slot keeps and by walking the groups of that
        // hash (usually one) for the slot: its entry, cold when it is evicted, is not read.
        if let head = groups.bucket(hash: slots[slot].groupHash, where: { contains(slot, from: $0) }) {
            if groups.slot(inBucket: head) == slot {
                // The group's newest: its next becomes the head, or the group goes.
                if next >= 0 { groups.setSlot(next, inBucket: head) } else { groups.remove(bucket: head) }
            } else {
                var previous = groups.slot(inBucket: head)
                while slots[previous].nextInGroup != slot { previous = slots[previous].nextInGroup }
                slots[previous].nextInGroup = next
            }
        }
        return release(slot)
    }

    /// Whether `slot` is in the group list that starts at `head`.
    private func contains(_ slot: Int, from head: Int) -> Bool {
        var current = head
        while current >= 0 {
            if current == slot { return true }
            current = slots[current].nextInGroup
        }
        return false
    }

    /// Takes a slot's entry out of the use order and frees the slot; its group's list is the
    /// caller's to mend.
    private mutating func release(_ slot: Int) -> Entry {
        unlink(slot)
        // Moved out, not copied: an evicted entry's storage is cold, and a copy would touch each
        // of its objects once more to retain them.
        let entry = slots[slot].entry.take()!
        free.append(slot)
        size -= entry.cost
        return entry
    }

    /// Removes the least recently used entries until the rest cost `capacity` at most; returns them.
    mutating func evict(toFit capacity: Int) -> [Entry] {
        var evicted: [Entry] = []
        while let entry = evictOldest(ifOver: capacity) { evicted.append(entry) }
        return evicted
    }

    /// Removes the least recently used entry if the entries cost more than `capacity`; returns it.
    mutating func evictOldest(ifOver capacity: Int) -> Entry? {
        guard size > capacity, oldest >= 0 else { return nil }
        return remove(oldest)
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

extension UseOrder where Entry: GroupedUseOrderEntry {
    /// Adds an entry as the most recently used one, and the first of its group; returns its slot.
    @discardableResult
    mutating func insert(_ entry: Entry) -> Int {
        insert(entry, in: entry.group, hash: GroupIndex.hash(entry.group), replacing: { _ in false }).slot
    }

    /// ``insert(_:in:hash:replacing:)`` in the entry's own group.
    mutating func insert(_ entry: Entry, replacing isReplaced: (Entry) -> Bool) -> (slot: Int, replaced: Entry?) {
        insert(entry, in: entry.group, hash: GroupIndex.hash(entry.group), replacing: isReplaced)
    }
}
