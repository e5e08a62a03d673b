import Foundation

/// The cache's store in memory: at most ``capacity`` bytes of ``StoredResponse/cost``, the least
/// recently used responses evicted first (storing a response and reading it are uses).
///
/// Every operation is O(1) but for the few variants of one URL (one per secondary key and
/// credential, usually one), in a ``UseOrder``. A response is kept packed (``PackedResponse``)
/// until it is first read, then as read: a hit after the first is one lookup, a few slot links
/// and a copy of the stored values' references, under one lock. Packed responses are ranges of
/// large blocks the store makes (``PackedBlocks``), not allocations of their own; the blocks hold
/// at most half the capacity (and two blocks) more than the responses' cost says.
final class MemoryStore: CacheStore {
    let capacity: Int

    private struct Entry: UseOrderEntry {
        /// Packed until it is first read (most stored responses never are), then as read.
        var form: Form
        /// ``StoredResponse/cost``, computed once: of the response as read, so that the capacity
        /// bounds memory whichever form the responses are in.
        let cost: Int

        enum Form {
            case packed(PackedResponse)
            case read(StoredResponse)
        }

        func isIn(_ url: String) -> Bool {
            switch form {
            case .packed(let packed): packed.hasURL(url)
            case .read(let response): response.url == url
            }
        }

        /// Whether it is the variant of its URL with this secondary key and credential.
        func isVariant(secondaryKey: [String?], credentialKey: String?) -> Bool {
            let own = switch form {
            case .packed(let packed): (packed.secondaryKey, packed.credentialKey)
            case .read(let stored): (stored.secondaryKey, stored.credentialKey)
            }
            return own.0 == secondaryKey && own.1 == credentialKey
        }

        /// The response, unpacked and kept so if it was packed; with `now`, its fields read (see
        /// ``StoredResponse/rememberParsedFields(now:)``).
        mutating func read(rememberingParsedFieldsAt now: Double?) -> StoredResponse {
            var response: StoredResponse
            switch form {
            case .packed(let packed): response = packed.unpacked
            case .read(let read):
                guard now != nil, !read.hasParsedFields else { return read }
                response = read
            }
            if let now { response.rememberParsedFields(now: now) }
            form = .read(response)
            return response
        }
    }

    private struct State {
        var entries = UseOrder<Entry>()
        /// Where the responses are packed.
        var blocks: PackedBlocks
    }

    private let state: Locked<State>

    init(capacity: Int) {
        self.capacity = capacity
        state = Locked(State(blocks: PackedBlocks(capacity: capacity)))
    }

    var size: Int {
        state.withLock { $0.entries.size }
    }

    /// The bytes of the blocks the store packs responses into (``PackedBlocks``), held now.
    var blockBytes: Int {
        state.withLock { $0.blocks.account.bytes }
    }

    func responses(for url: String) -> [StoredResponse] {
        responses(for: url, hash: GroupIndex.hash(url), rememberingParsedFieldsAt: nil)
    }

    /// The responses stored for a URL whose ``GroupIndex/hash(_:)`` is `hash`; with `now`
    /// (seconds since 1970), each whose fields have not been read yet gets its freshness basis
    /// (read at `now`) and its `Vary`, which it keeps while it stays stored: a response's first
    /// use pays for reading its fields, the later ones do not.
    func responses(for url: String, hash: UInt32, rememberingParsedFieldsAt now: Double?) -> [StoredResponse] {
        state.withLock { state in
            let slots = state.entries.slots(of: url, hash: hash)
            // Most lookups find nothing: an empty array's capacity reserved would make a new one.
            if slots.isEmpty { return [] }
            // The oldest stored first, so that of variants read together the most recently
            // stored one ends up the most recently used.
            var found: [StoredResponse] = []
            found.reserveCapacity(slots.count)
            for slot in slots.reversed() {
                state.entries.use(slot)
                found.append(state.entries.update(slot) { $0.read(rememberingParsedFieldsAt: now) })
            }
            found.reverse()
            return found
        }
    }

    func store(_ response: StoredResponse) {
        store(PackedResponse(response, reserving: reserve), url: response.url, hash: GroupIndex.hash(response.url),
              costLimit: capacity)
    }

    /// A range of a block to pack a response of `length` bytes into, reserved under the lock and
    /// written outside it (packing under it would hold up every lookup meanwhile); nil when the
    /// response takes storage of its own (``PackedBlocks/reserve(_:)``).
    func reserve(_ length: Int) -> (block: ByteBlock, start: Int)? {
        state.withLock { $0.blocks.reserve(length) }
    }

    /// Stores a packed response for `url` (whose ``GroupIndex/hash(_:)`` is `hash`) if its cost
    /// (counted by the packing) is at most `costLimit` (and the capacity); returns whether it did.
    @discardableResult
    func store(_ packed: consuming PackedResponse, url: String, hash: UInt32, costLimit: Int) -> Bool {
        let cost = packed.cost
        guard cost <= min(costLimit, capacity) else { return false }
        // Only what the closure needs: capturing the entry would copy it.
        let secondaryKey = packed.secondaryKey, credentialKey = packed.credentialKey
        // Taken out of an optional inside the lock: an entry the closure captured would be copied.
        var entry: Entry? = Entry(form: .packed(consume packed), cost: cost)
        // What this replaces and evicts is returned, so released after the lock: freeing a
        // response's storage under it would hold up every lookup meanwhile. The first evicted
        // is kept apart, so that the usual store (one in, one out) makes no array.
        _ = state.withLock { state in
            let replaced = state.entries.insert(entry.take()!, in: url, hash: hash) {
                $0.isVariant(secondaryKey: secondaryKey, credentialKey: credentialKey)
            }.replaced
            let evicted = state.entries.evictOldest(ifOver: capacity)
            return (replaced, evicted, state.entries.evict(toFit: capacity))
        }
        return true
    }

    func removeResponses(for url: String) {
        state.withLock { state in
            for slot in state.entries.slots(of: url) { state.entries.remove(slot) }
        }
    }

    func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }

    func flush() {}
}
