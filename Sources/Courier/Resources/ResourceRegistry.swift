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
/// - a name maps to at most one live resource, and asking again while it lives returns it;
/// - a resource that ends removes its own entry and never another's made since for its key;
/// - a request's text and a set of options are held once, while the key of a live resource uses them;
/// - no resource is released while the lock is held (its `deinit` takes the lock again).
final class ResourceRegistry: Sendable {
    /// What makes two resources the same: the request as it goes on the wire (`METHOD URL`, then
    /// its header fields a line each), its type and the options.
    struct Name: Hashable, Sendable {
        let request: RequestName
        let options: ResourceOptions

        init(requestType: ObjectIdentifier, request: String, options: ResourceOptions) {
            self.request = RequestName(type: requestType, text: request)
            self.options = options
        }
    }

    struct RequestName: Hashable, Sendable {
        let type: ObjectIdentifier
        let text: String
    }

    /// A ``Name`` as the registry holds it: its request and its options each held once by the
    /// registry however many live resources share them (ten screens' resources of one URL with
    /// different options share the URL's text; a thousand resources share their options), so
    /// that a key is two references, compared by identity.
    struct Key: Hashable, Sendable {
        fileprivate let request: Shared<RequestName>
        fileprivate let sharedOptions: Shared<ResourceOptions>

        /// The options of the resources of this key.
        var options: ResourceOptions { sharedOptions.value }

        /// The URL's cache key (which writes name, ``Invalidation``): the first line's after the method.
        var url: Substring {
            let line = request.value.text.prefix { $0 != "\n" }
            return line.firstIndex(of: " ").map { line[line.index(after: $0)...] } ?? line
        }

        /// The key of a resource that is not shared (its request is prepared for each load, or
        /// cannot be prepared), which no registry holds.
        static func unregistered(options: ResourceOptions) -> Key {
            Key(request: Shared(RequestName(type: ObjectIdentifier(Unregistered.self), text: "")), sharedOptions: Shared(options))
        }

        private enum Unregistered {}

        var isRegistered: Bool { request.value.type != ObjectIdentifier(Unregistered.self) }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.request === rhs.request && lhs.sharedOptions === rhs.sharedOptions
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(request))
            hasher.combine(ObjectIdentifier(sharedOptions))
        }
    }

    /// One value, held by reference by the keys that share it.
    final class Shared<Value: Sendable>: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// The shared values of the live keys, each with how many keys hold it: the last to
    /// go removes it.
    private struct Interned<Value: Hashable & Sendable> {
        private var table: [Value: (shared: Shared<Value>, holders: Int)] = [:]

        func find(_ value: Value) -> Shared<Value>? { table[value]?.shared }

        mutating func hold(_ value: Value) -> Shared<Value> {
            if let index = table.index(forKey: value) {
                table.values[index].holders += 1
                return table.values[index].shared
            }
            let shared = Shared(value)
            table[value] = (shared, 1)
            return shared
        }

        mutating func release(_ shared: Shared<Value>) {
            guard let index = table.index(forKey: shared.value), table.values[index].shared === shared else { return }
            table.values[index].holders -= 1
            if table.values[index].holders == 0 { table.remove(at: index) }
        }

        var count: Int { table.count }
    }

    private struct Table {
        var entries: [Key: Entry] = [:]
        var requests = Interned<RequestName>()
        var options = Interned<ResourceOptions>()

        /// The key of `name` if a live key holds its parts.
        func key(of name: Name) -> Key? {
            guard let request = requests.find(name.request), let options = options.find(name.options) else { return nil }
            return Key(request: request, sharedOptions: options)
        }
    }

    private struct Entry {
        /// Not `any AnyResource`: a weak existential takes its witness table too, 16 bytes a
        /// slot where this takes 8. Cast on invalidation, which is rare.
        weak var object: AnyObject?
        var resource: (any AnyResource)? { object as? any AnyResource }
    }

    private let table = Locked(Table())
    /// Entries, read without the lock by every response so that a queue without resources
    /// pays one atomic load for them.
    private let count = Atomic<Int>(0)

    /// The live resource named `name`, or the one `make` makes with its key, which its `deinit`
    /// gives to ``remove(_:)``.
    func resource<Made: AnyResource>(for name: Name, make: (Key) -> Made) -> Made {
        // Kept until the lock is released: if it was the last reference, its deinit takes the lock.
        var existing: (any AnyResource)?
        let made: Made = table.withLock { table in
            if let key = table.key(of: name) {
                existing = table.entries[key]?.object as? any AnyResource
                if let existing = existing as? Made { return existing }
            }
            let key = Key(request: table.requests.hold(name.request), sharedOptions: table.options.hold(name.options))
            let made = make(key)
            // An entry whose resource is ending (it has not removed it yet) is replaced: that
            // resource's removal then finds a live resource in it, and leaves it.
            if table.entries.updateValue(Entry(object: made), forKey: key) == nil { count.add(1, ordering: .relaxed) }
            return made
        }
        existing = nil
        return made
    }

    /// A resource made with `key` ended (its `deinit`, once): the key's entry goes if its
    /// resource has gone (this one, or one that replaced it and ended since, whose own removal
    /// then finds nothing), and the key's shared parts with their last holder.
    func remove(_ key: Key) {
        guard key.isRegistered else { return }
        table.withLock { table in
            if let index = table.entries.index(forKey: key), table.entries.values[index].object == nil {
                table.entries.remove(at: index)
                count.subtract(1, ordering: .relaxed)
            }
            table.requests.release(key.request)
            table.options.release(key.sharedOptions)
        }
    }

    /// How many requests and options the live keys share (tests).
    var sharedCounts: (requests: Int, options: Int) { table.withLock { ($0.requests.count, $0.options.count) } }

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
        guard !isEmpty, let method = request.httpMethod, !Invalidation.isSafe(method),
              let url = request.url else { return }
        let keys = Invalidation.invalidatedKeys(method: method, requestURL: url, statusCode: head.status,
                                                responseHeaders: head.headerFields)
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
