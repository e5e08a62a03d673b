/// Where a memory store packs its responses (``PackedResponse``): ranges of large blocks the store
/// makes, one after the other, rather than an allocation of each response's own.
///
/// A full store evicts about one response for each it stores. Each in an allocation of its own,
/// the store's thousands of small long-lived allocations lie among the short-lived ones of the
/// thread that stores them (the curl loop's), so what that thread frees seldom merges and its
/// allocations sort through fragments: with the store full, the allocator took about 2.5 points
/// more of a miss's time at 16 in flight, more than the cache's own code (Benchmarks/ANALYSIS.md,
/// #20). In blocks of 256 KiB the store's bytes stay out of that heap. Responses never read are
/// evicted in the order they were stored, so blocks empty in order; a block is freed when the
/// last response in it goes (it is a reference-counted object that each range keeps alive).
///
/// Invariants: ranges are handed out once each, in order, never overlapping; the blocks held (in
/// use or not yet freed) take at most `limit` bytes (half the store's capacity and two blocks),
/// past which a response gets an allocation of its own, as one larger than ``largest`` always
/// does. A store smaller than ``smallestStore`` uses no blocks: a block would be a large part of it.
struct PackedBlocks {
    /// The size of a block.
    static let blockSize = 256 * 1024
    /// The largest response packed into a block; larger ones take an allocation of their own.
    static let largest = blockSize / 16
    /// The smallest store that packs into blocks.
    static let smallestStore = 16 * blockSize

    /// The most bytes of blocks held: half the store's capacity, and two blocks (the one being
    /// filled and the oldest being emptied). Packed responses take well under half their cost (a
    /// response's cost counts the objects it becomes when read) unless bodies are most of them;
    /// ranges of responses gone (read, so kept unpacked, or removed) are held until their block
    /// empties. So the store's memory stays within one and a half times its capacity and two
    /// blocks, however its responses come and go.
    let limit: Int
    /// The bytes of the blocks held, freed or not yet.
    let account = BlockAccount()
    private var current: ByteBlock?
    private var used = 0

    /// Blocks for a store of `capacity` bytes: none below ``smallestStore``.
    init(capacity: Int) {
        limit = capacity >= Self.smallestStore ? capacity / 2 + 2 * Self.blockSize : 0
    }

    /// A range of `length` bytes no other has: the next in the current block, or the first of a
    /// new one; nil when the response should have an allocation of its own (it is larger than
    /// ``largest``, or a new block would hold more than `limit`).
    mutating func reserve(_ length: Int) -> (block: ByteBlock, start: Int)? {
        guard length <= Self.largest else { return nil }
        if let current, length <= Self.blockSize - used {
            defer { used += length }
            return (current, used)
        }
        guard account.bytes + Self.blockSize <= limit else { return nil }
        let block = ByteBlock.make(size: Self.blockSize, account: account)
        current = block
        used = length
        return (block, 0)
    }
}
