import Foundation

/// The cache's store in memory: at most ``capacity`` bytes of ``StoredResponse/cost``, the least
/// recently used responses evicted first (storing a response and reading it are uses).
///
/// Every operation is O(1) but for the few variants of one URL (one per secondary key and
/// credential, usually one), in a ``UseOrder``. A response is kept packed (``PackedResponse``)
/// until it is first read, then as read: a hit after the first is one lookup, a few slot links
/// and a copy of the stored values' references, under one lock.
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

    private let entries = Locked(UseOrder<Entry>())

    init(capacity: Int) {
        self.capacity = capacity
    }

    var size: Int {
        entries.withLock { $0.size }
    }

    func responses(for url: String) -> [StoredResponse] {
        responses(for: url, hash: GroupIndex.hash(url), rememberingParsedFieldsAt: nil)
    }

    /// The responses stored for a URL whose ``GroupIndex/hash(_:)`` is `hash`; with `now`
    /// (seconds since 1970), each whose fields have not been read yet gets its freshness basis
    /// (read at `now`) and its `Vary`, which it keeps while it stays stored: a response's first
    /// use pays for reading its fields, the later ones do not.
    func responses(for url: String, hash: UInt32, rememberingParsedFieldsAt now: Double?) -> [StoredResponse] {
        entries.withLock { entries in
            let slots = entries.slots(of: url, hash: hash)
            // Most lookups find nothing: an empty array's capacity reserved would make a new one.
            if slots.isEmpty { return [] }
            // The oldest stored first, so that of variants read together the most recently
            // stored one ends up the most recently used.
            var found: [StoredResponse] = []
            found.reserveCapacity(slots.count)
            for slot in slots.reversed() {
                entries.use(slot)
                found.append(entries.update(slot) { $0.read(rememberingParsedFieldsAt: now) })
            }
            found.reverse()
            return found
        }
    }

    func store(_ response: StoredResponse) {
        store(PackedResponse(response), url: response.url, hash: GroupIndex.hash(response.url), costLimit: capacity)
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
        _ = entries.withLock { entries in
            let replaced = entries.insert(entry.take()!, in: url, hash: hash) {
                $0.isVariant(secondaryKey: secondaryKey, credentialKey: credentialKey)
            }.replaced
            let evicted = entries.evictOldest(ifOver: capacity)
            return (replaced, evicted, entries.evict(toFit: capacity))
        }
        return true
    }

    func removeResponses(for url: String) {
        entries.withLock { entries in
            for slot in entries.slots(of: url) { entries.remove(slot) }
        }
    }

    func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    func flush() {}
}
