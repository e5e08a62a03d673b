/// Values in the order of their last use: a doubly linked list threaded through an array of
/// slots, so that inserting, using (moving to the newest end), removing and finding the oldest
/// are each O(1) with no allocation per node and no reference counting of nodes.
///
/// A slot number stays valid until its value is removed; the stores keep slot numbers in their
/// own dictionaries. A removed slot's number is reused by a later insert.
struct UseOrder<Value> {
    private struct Slot {
        var value: Value?
        /// The slot used just before this one, or -1.
        var older: Int
        /// The slot used just after this one, or -1.
        var newer: Int
    }

    private var slots: [Slot] = []
    private var free: [Int] = []
    private var newest = -1
    private var oldestSlot = -1

    /// How many values there are.
    private(set) var count = 0

    /// The least recently used value's slot; nil when there is none.
    var oldest: Int? { oldestSlot < 0 ? nil : oldestSlot }

    /// The value in a slot that holds one.
    subscript(slot: Int) -> Value {
        get { slots[slot].value! }
        set { slots[slot].value = newValue }
    }

    /// Adds a value as the most recently used one and returns its slot.
    mutating func insert(_ value: Value) -> Int {
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            slots[slot] = Slot(value: value, older: -1, newer: -1)
        } else {
            slot = slots.count
            slots.append(Slot(value: value, older: -1, newer: -1))
        }
        link(slot)
        count += 1
        return slot
    }

    /// Makes a slot's value the most recently used one.
    mutating func use(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        link(slot)
    }

    /// Removes a slot's value and returns it.
    @discardableResult
    mutating func remove(_ slot: Int) -> Value {
        unlink(slot)
        let value = slots[slot].value!
        slots[slot].value = nil
        free.append(slot)
        count -= 1
        return value
    }

    /// Removes everything.
    mutating func removeAll() {
        self = UseOrder()
    }

    /// The slots from the most recently used to the least (O(n): for tests and the model check).
    var slotsFromNewest: [Int] {
        var result: [Int] = []
        var slot = newest
        while slot >= 0 {
            result.append(slot)
            slot = slots[slot].older
        }
        return result
    }

    /// Puts a slot that is in no list at the newest end.
    private mutating func link(_ slot: Int) {
        slots[slot].older = newest
        slots[slot].newer = -1
        if newest >= 0 { slots[newest].newer = slot } else { oldestSlot = slot }
        newest = slot
    }

    /// Takes a slot out of the list, joining its neighbours.
    private mutating func unlink(_ slot: Int) {
        let older = slots[slot].older
        let newer = slots[slot].newer
        if older >= 0 { slots[older].newer = newer } else { oldestSlot = newer }
        if newer >= 0 { slots[newer].older = older } else { newest = older }
    }
}
