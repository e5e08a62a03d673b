import Foundation

/// The cache's store in memory: at most ``capacity`` bytes of ``StoredResponse/cost``, the least
/// recently used responses evicted first (storing a response and reading it are uses).
///
/// Every operation is O(1) but for the few variants of one URL (one per secondary key and
/// credential, usually one), in a ``UseOrder``. A hit is one dictionary lookup, a few slot links
/// and a copy of the stored values' references, under one lock.
final class MemoryStore: CacheStore {
    let capacity: Int

    private struct Entry: UseOrderEntry {
        var response: StoredResponse
        /// ``StoredResponse/cost``, computed once.
        let cost: Int

        var group: String { response.url }
    }

    private let entries = Locked(UseOrder<Entry>())

    init(capacity: Int) {
        self.capacity = capacity
    }

    var size: Int {
        entries.withLock { $0.size }
    }

    func responses(for url: String) -> [StoredResponse] {
        responses(for: url, rememberingParsedFieldsAt: nil)
    }

    /// The responses stored for a URL; with `now` (seconds since 1970), each whose fields have
    /// not been read yet gets its freshness basis (read at `now`) and its `Vary`, which it keeps
    /// while it stays stored: a response's first use pays for reading its fields, the later ones
    /// do not.
    func responses(for url: String, rememberingParsedFieldsAt now: Double?) -> [StoredResponse] {
        entries.withLock { entries in
            let slots = entries.slots(of: url)
            // The oldest stored first, so that of variants read together the most recently
            // stored one ends up the most recently used.
            for slot in slots.reversed() {
                entries.use(slot)
                if let now, entries[slot].response.freshnessBasis == nil {
                    entries[slot].response.rememberParsedFields(now: now)
                }
            }
            return slots.map { entries[$0].response }
        }
    }

    func store(_ response: StoredResponse) {
        store(response, cost: response.cost)
    }

    /// ``store(_:)`` with the response's ``StoredResponse/cost``, which the caller has computed.
    func store(_ response: StoredResponse, cost: Int) {
        guard cost <= capacity else { return }
        // What this replaces and evicts is returned, so released after the lock: freeing a
        // response's storage under it would hold up every lookup meanwhile.
        _ = entries.withLock { entries in
            let replaced = entries.insert(Entry(response: response, cost: cost)) { $0.response.isSameVariant(as: response) }.replaced
            var released = entries.evict(toFit: capacity)
            if let replaced { released.append(replaced) }
            return released
        }
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

extension StoredResponse {
    /// Whether the two are the same variant of a URL: the same secondary key and credential.
    func isSameVariant(as other: StoredResponse) -> Bool {
        secondaryKey == other.secondaryKey && credentialKey == other.credentialKey
    }
}
