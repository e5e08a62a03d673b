import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A ``Resource`` seen from its queue, which does not know its type.
protocol AnyResource: AnyObject, Sendable {
    func invalidate()
    /// The network, or the resource's origin, came back.
    func reconnected()
}

/// A queue's live resources, one per request key, held weakly; and the resources a write makes
/// stale.
///
/// Invariants, checked by `ResourceRegistryTests`:
/// - a key maps to at most one live resource, and asking again while it lives returns it;
/// - a resource that ends removes its own entry and never another's made since for its key;
/// - no resource is released while the lock is held (its `deinit` takes the lock again).
final class ResourceRegistry: Sendable {
    /// What makes two resources the same: the request as it goes on the wire (`METHOD URL`, then
    /// its header fields a line each), its type and the options. Its text and options are held
    /// once, by reference, shared by the table and the resource's registration.
    struct Key: Hashable, Sendable {
        private final class Storage: Sendable {
            let requestType: ObjectIdentifier
            let request: String
            let options: ResourceOptions

            init(requestType: ObjectIdentifier, request: String, options: ResourceOptions) {
                self.requestType = requestType
                self.request = request
                self.options = options
            }
        }

        private let storage: Storage

        init(requestType: ObjectIdentifier, request: String, options: ResourceOptions) {
            storage = Storage(requestType: requestType, request: request, options: options)
        }

        /// The options of the resources of this key: held here only, once per resource.
        var options: ResourceOptions { storage.options }

        /// The URL's cache key (which writes name, ``Invalidation``): the first line's after the method.
        var url: Substring {
            let line = storage.request.prefix { $0 != "\n" }
            return line.firstIndex(of: " ").map { line[line.index(after: $0)...] } ?? line
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.storage === rhs.storage || (lhs.storage.requestType == rhs.storage.requestType
                && lhs.storage.request == rhs.storage.request && lhs.storage.options == rhs.storage.options)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(storage.requestType)
            hasher.combine(storage.request)
            hasher.combine(storage.options)
        }

        /// Whether this is the very key `other` is, not only an equal one: each resource is
        /// registered under a key of its own, which tells its entry from a later resource's.
        func isSame(as other: Key) -> Bool { storage === other.storage }
    }

    private struct Entry {
        weak var resource: (any AnyResource)?
    }

    private struct Table {
        /// Keyed by the key each resource was registered with (an entry replaced is removed and
        /// added again, so that its key is the new resource's).
        var entries: [Key: Entry] = [:]
    }

    private let table = Locked(Table())
    /// Entries, read without the lock by every response so that a queue without resources
    /// pays one atomic load for them.
    private let count = Atomic<Int>(0)

    /// Lets a resource remove its own entry when it ends; the key holds its options. A resource
    /// that is not shared (``unshared(options:)``) has one too, without a registry.
    struct Registration: Sendable {
        fileprivate let registry: ResourceRegistry?
        let key: Key

        static func unshared(options: ResourceOptions) -> Registration {
            Registration(registry: nil, key: Key(requestType: ObjectIdentifier(Registration.self), request: "", options: options))
        }

        func remove() {
            registry?.remove(key)
        }
    }

    /// The live resource for `key`, or the one `make` makes.
    func resource<Made: AnyResource>(for key: Key, make: (Registration) -> Made) -> Made {
        // Kept until the lock is released: if it was the last reference, its deinit takes the lock.
        var existing: (any AnyResource)?
        let made: Made = table.withLock { table in
            existing = table.entries[key]?.resource
            if let existing = existing as? Made { return existing }
            let made = make(Registration(registry: self, key: key))
            // An entry whose resource is ending (it has not removed it yet) goes with its key.
            if table.entries.removeValue(forKey: key) == nil { count.add(1, ordering: .relaxed) }
            table.entries[key] = Entry(resource: made)
            return made
        }
        existing = nil
        return made
    }

    private func remove(_ key: Key) {
        table.withLock { table in
            guard let index = table.entries.index(forKey: key), table.entries.keys[index].isSame(as: key) else { return }
            table.entries.remove(at: index)
            count.subtract(1, ordering: .relaxed)
        }
    }

    var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    /// Invalidates the resources whose URL `matches` accepts.
    func invalidate(where matches: (Substring) -> Bool) {
        let stale = table.withLock { table in table.entries.compactMap { matches($0.key.url) ? $0.value.resource : nil } }
        for resource in stale { resource.invalidate() }
    }

    /// Tells the resources of `origin` (of every origin: `nil`, the network came back) that it is
    /// back: watched ones that failed or went stale load again.
    func reconnected(_ origin: Connectivity.Origin?) {
        guard !isEmpty else { return }
        let back = table.withLock { table in
            table.entries.compactMap { key, entry in
                origin == nil || URL(string: String(key.url)).flatMap(Connectivity.Origin.init) == origin ? entry.resource : nil
            }
        }
        for resource in back { resource.reconnected() }
    }

    /// Invalidates what a response to a request with an unsafe method made stale: its URL, and
    /// its `Location` and `Content-Location` on the same origin (RFC 9111 §4.4, as the cache).
    func invalidate(after head: ResponseHead, to request: URLRequest) {
        guard !isEmpty, let method = request.httpMethod, !Invalidation.safeMethods.contains(method),
              let url = request.url else { return }
        let keys = Invalidation.invalidatedKeys(method: method, requestURL: url, statusCode: head.status,
                                                responseHeaders: head.fieldDictionary)
        guard !keys.isEmpty else { return }
        invalidate { url in keys.contains { $0 == url } }
    }

    /// The key of a resource URL with the cache's spelling, without its query: what
    /// ``RequestQueue/invalidateResources(under:)`` matches paths against.
    static func prefixMatcher(for url: URL) -> ((Substring) -> Bool)? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        components.query = nil
        components.fragment = nil
        guard let base = components.url, var prefix = CacheKey.make(for: base) else { return nil }
        if prefix.hasSuffix("/") { prefix.removeLast() }
        return { key in
            guard key.hasPrefix(prefix) else { return false }
            let rest = key.utf8.dropFirst(prefix.utf8.count)
            // A whole path segment: /posts names /posts, /posts/7 and /posts?page=2, not /postscript.
            return rest.first.map { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? true
        }
    }
}
