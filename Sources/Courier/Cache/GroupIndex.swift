/// The newest slot of each group of a ``UseOrder``, found by the group's hash: an
/// open-addressing table (linear probing, at most half full) that keeps each group's hash beside
/// its slot, and leaves comparing groups to its caller.
///
/// A `Dictionary` from group to slot did this before, but removing a key from a `Dictionary`
/// hashes again each key stored after it in its run, to see whether it may move back; a full
/// store removes a group for every response it stores, and with the 12,000 small responses of a
/// full 16 MiB memory store (the dictionary three-quarters full) that was about ten hashes of
/// URLs nobody had read for a while, 4,000 instructions, for every miss. Here a removal moves
/// entries back by the hashes they keep: nothing is hashed but the group looked up or inserted.
///
/// Hashes are the groups' `hashValue`s (seeded per process, as `Dictionary`'s are, so that URLs
/// chosen to collide cannot be made in advance), of which the table keeps 32 bits.
struct GroupIndex {
    /// A group's hash and its slot; an empty bucket has slot 0, an occupied one the slot + 1.
    private struct Bucket {
        var hash: UInt32
        var slot: UInt32

        static let empty = Bucket(hash: 0, slot: 0)
    }

    /// A power of two of buckets (or none), at most half of them occupied.
    private var buckets: [Bucket] = []

    /// The groups stored.
    private(set) var count = 0

    /// The hash the index keeps of a group.
    static func hash(_ group: some Hashable) -> UInt32 {
        UInt32(truncatingIfNeeded: group.hashValue)
    }

    /// The bucket of the group with `hash` for which `isGroup` (given the bucket's slot) is true,
    /// or nil when there is none.
    func bucket(hash: UInt32, where isGroup: (Int) -> Bool) -> Int? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var index = Int(hash) & mask
        while buckets[index].slot != 0 {
            if buckets[index].hash == hash, isGroup(Int(buckets[index].slot) - 1) { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    /// The slot stored in a bucket that ``bucket(hash:where:)`` found.
    func slot(inBucket bucket: Int) -> Int {
        Int(buckets[bucket].slot) - 1
    }

    /// Stores another slot for the group of a bucket that ``bucket(hash:where:)`` found.
    mutating func setSlot(_ slot: Int, inBucket bucket: Int) {
        buckets[bucket].slot = UInt32(slot + 1)
    }

    /// Adds a group that is not stored yet, with its slot.
    mutating func insert(_ slot: Int, hash: UInt32) {
        if (count + 1) * 2 > buckets.count { grow() }
        let mask = buckets.count - 1
        var index = Int(hash) & mask
        while buckets[index].slot != 0 { index = (index + 1) & mask }
        buckets[index] = Bucket(hash: hash, slot: UInt32(slot + 1))
        count += 1
    }

    /// Removes the group of a bucket that ``bucket(hash:where:)`` found. The buckets after it
    /// in its run move back where their hashes allow, so that every group stays reachable from
    /// its home bucket without gaps.
    mutating func remove(bucket: Int) {
        let mask = buckets.count - 1
        var hole = bucket
        var index = (bucket + 1) & mask
        while buckets[index].slot != 0 {
            let home = Int(buckets[index].hash) & mask
            // It may fill the hole when the hole lies between its home and where it is.
            if (index - home) & mask >= (index - hole) & mask {
                buckets[hole] = buckets[index]
                hole = index
            }
            index = (index + 1) & mask
        }
        buckets[hole] = .empty
        count -= 1
    }

    /// Doubles the table (16 buckets at first), placing each group by the hash it keeps.
    private mutating func grow() {
        let old = buckets
        buckets = Array(repeating: .empty, count: max(16, old.count * 2))
        let mask = buckets.count - 1
        for bucket in old where bucket.slot != 0 {
            var index = Int(bucket.hash) & mask
            while buckets[index].slot != 0 { index = (index + 1) & mask }
            buckets[index] = bucket
        }
    }
}
