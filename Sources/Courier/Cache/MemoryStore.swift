import Foundation

/// The cache's store in memory: at most ``capacity`` bytes of ``StoredResponse/cost``, the least
/// recently used responses evicted first (storing a response and reading it are uses).
///
/// Every operation is O(1) but for the few variants of one URL (one per secondary key and
/// credential, usually one): a dictionary from URL to the slots of its variants, and a
/// ``UseOrder`` for the eviction order. A hit is one dictionary lookup, a few slot links and a
/// copy of the stored values' references, under one uncontended lock.
final class MemoryStore: CacheStore {
    let capacity: Int

    private struct Entry {
        var response: StoredResponse
        /// ``StoredResponse/cost``, computed once.
        var cost: Int
    }

    private struct State {
        var order = UseOrder<Entry>()
        /// The slots of each URL's variants, the most recently stored first.
        var variants: [String: [Int]] = [:]
        var size = 0

        mutating func remove(_ slot: Int) {
            let entry = order.remove(slot)
            size -= entry.cost
            let url = entry.response.url
            guard var slots = variants[url] else { return }
            slots.removeAll { $0 == slot }
            variants[url] = slots.isEmpty ? nil : slots
        }
    }

    private let state = Locked(State())

    init(capacity: Int) {
        self.capacity = capacity
    }

    var size: Int {
        state.withLock { $0.size }
    }

    func responses(for url: String) -> [StoredResponse] {
        state.withLock { state in
            guard let slots = state.variants[url] else { return [] }
            // The oldest stored first, so that of variants read together the most recently
            // stored one ends up the most recently used.
            for slot in slots.reversed() { state.order.use(slot) }
            return slots.map { state.order[$0].response }
        }
    }

    func store(_ response: StoredResponse) {
        let cost = response.cost
        guard cost <= capacity else { return }
        state.withLock { state in
            if let slots = state.variants[response.url],
               let same = slots.first(where: { state.order[$0].response.isSameVariant(as: response) }) {
                state.remove(same)
            }
            let slot = state.order.insert(Entry(response: response, cost: cost))
            state.variants[response.url, default: []].insert(slot, at: 0)
            state.size += cost
            while state.size > capacity, let oldest = state.order.oldest {
                state.remove(oldest)
            }
        }
    }

    func removeResponses(for url: String) {
        state.withLock { state in
            for slot in state.variants[url] ?? [] { state.remove(slot) }
        }
    }

    func removeAll() {
        state.withLock { $0 = State() }
    }

    func flush() {}
}

extension StoredResponse {
    /// Whether the two are the same variant of a URL: the same secondary key and credential.
    func isSameVariant(as other: StoredResponse) -> Bool {
        secondaryKey == other.secondaryKey && credentialKey == other.credentialKey
    }
}
