import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier's HTTP cache: a private cache as RFC 9111 defines it, the same on every platform and
/// transport, kept in memory and, when given a folder, on disk.
///
/// Every queue has one by default, in memory only (``RequestQueueConfiguration/cache``); give
/// it a folder to keep responses across launches and to work offline:
/// ```swift
/// var configuration = RequestQueueConfiguration.default
/// configuration.cache = try ResponseCache(directory: ResponseCache.standardDirectory(named: "api"))
/// ```
/// What it stores and serves is what the responses' headers allow (`Cache-Control`, `Expires`,
/// `Last-Modified`, `ETag`, `Vary`); a request chooses how to use it with ``Request/cachePolicy``.
/// Both stores are bounded in bytes and drop the least recently used responses first. Queues may
/// share one cache; a cache folder belongs to one process at a time.
public final class ResponseCache: Sendable {
    /// The default ``memoryCapacity``: 16 MiB.
    public static let defaultMemoryCapacity = 16 << 20
    /// The default ``diskCapacity``: 256 MiB.
    public static let defaultDiskCapacity = 256 << 20
    /// The default ``heuristicFreshnessLimit``: one day.
    public static let defaultHeuristicFreshnessLimit: TimeInterval = 86_400

    /// The most bytes kept in memory, by the responses' cost (an estimate of what each takes once
    /// read; one not yet read takes less). A response costing more than an eighth of it is kept on
    /// disk only. A capacity of 4 MiB or more packs responses into blocks, which may hold up to
    /// half of it again while responses read or removed share a block with others still kept.
    public let memoryCapacity: Int
    /// The most bytes kept on disk (0 without a folder). A response larger than an eighth of it is not stored.
    public let diskCapacity: Int
    /// The folder of the disk store, if any.
    public let directory: URL?
    /// The longest a response without explicit freshness (`max-age`, `Expires`) stays fresh by
    /// the heuristic of RFC 9111 §4.2.2 (a tenth of the time since its `Last-Modified`).
    public let heuristicFreshnessLimit: TimeInterval

    let memory: MemoryStore?
    let disk: DiskStore?
    /// Seconds since 1970; tests set the clock.
    let clock: @Sendable () -> Double

    /// A cache in memory only.
    /// - Parameters:
    ///   - memoryCapacity: The most bytes to keep. Default: ``defaultMemoryCapacity`` (16 MiB).
    ///   - heuristicFreshnessLimit: See ``heuristicFreshnessLimit``. Default: one day.
    public convenience init(memoryCapacity: Int = ResponseCache.defaultMemoryCapacity,
                            heuristicFreshnessLimit: TimeInterval = ResponseCache.defaultHeuristicFreshnessLimit) {
        self.init(memory: memoryCapacity > 0 ? MemoryStore(capacity: memoryCapacity) : nil, disk: nil,
                  directory: nil, heuristicFreshnessLimit: heuristicFreshnessLimit)
    }

    /// A cache in memory and in a folder on disk, which keeps responses across launches.
    ///
    /// Writes to disk happen in the background; a crash or a kill never leaves a torn response
    /// that would be served (each is written whole to a temporary file, renamed into place, and
    /// verified when read). Opening the same folder twice in one process gives the same store.
    /// - Parameters:
    ///   - memoryCapacity: The most bytes to keep in memory. Default: 16 MiB.
    ///   - directory: The folder, created if needed; ``standardDirectory(named:)`` names the
    ///     platform's place for caches.
    ///   - diskCapacity: The most bytes to keep on disk. Default: ``defaultDiskCapacity`` (256 MiB).
    ///   - heuristicFreshnessLimit: See ``heuristicFreshnessLimit``. Default: one day.
    /// - Throws: ``ResponseCacheError`` when the folder cannot be created or written, or another
    ///   process uses it.
    public convenience init(memoryCapacity: Int = ResponseCache.defaultMemoryCapacity, directory: URL,
                            diskCapacity: Int = ResponseCache.defaultDiskCapacity,
                            heuristicFreshnessLimit: TimeInterval = ResponseCache.defaultHeuristicFreshnessLimit) throws(ResponseCacheError) {
        let disk: DiskStore
        do {
            disk = try DiskStore.open(directory: directory, capacity: max(0, diskCapacity))
        } catch {
            throw ResponseCacheError(directory: directory, reason: "\(error)")
        }
        self.init(memory: memoryCapacity > 0 ? MemoryStore(capacity: memoryCapacity) : nil, disk: disk,
                  directory: directory, heuristicFreshnessLimit: heuristicFreshnessLimit)
    }

    init(memory: MemoryStore?, disk: DiskStore?, directory: URL?, heuristicFreshnessLimit: TimeInterval,
         clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.memory = memory
        self.disk = disk
        self.directory = directory
        memoryCapacity = memory?.capacity ?? 0
        diskCapacity = disk?.capacity ?? 0
        self.heuristicFreshnessLimit = heuristicFreshnessLimit
        self.clock = clock
    }

    /// The platform's folder for caches with `name` appended: `Library/Caches` on Apple
    /// platforms, `$XDG_CACHE_HOME` or `~/.cache` on Linux.
    public static func standardDirectory(named name: String = "Courier") -> URL {
        StandardFolder.base(.cachesDirectory, xdg: "XDG_CACHE_HOME", fallback: ".cache").appendingPathComponent(name, isDirectory: true)
    }

    /// The bytes the responses in memory take.
    public var memoryUsage: Int { memory?.size ?? 0 }
    /// The bytes the responses on disk take.
    public var diskUsage: Int { disk?.size ?? 0 }

    /// Removes every stored response, in memory and on disk.
    public func removeAll() {
        memory?.removeAll()
        disk?.removeAll()
    }

    /// Removes the responses stored for a URL (every variant).
    public func removeResponses(for url: URL) {
        if let key = CacheKey.make(for: url) { remove(key) }
    }

    /// Waits until responses stored so far are written to disk (writes happen in the background).
    public func flush() {
        disk?.flush()
    }

    // MARK: - For the cache layer

    /// The responses stored for a request's key: from memory when one there matches `request`,
    /// else from disk (then kept in memory too). Those in memory keep what their fields say
    /// (their freshness basis, read at `now`, and their `Vary`) from their first use.
    func responses(matching request: CacheRequest, now: Double) -> [StoredResponse] {
        let key = request.url
        let inMemory = memory?.responses(for: key, hash: request.urlHash, rememberingParsedFieldsAt: now) ?? []
        guard let disk else { return inMemory }
        if !inMemory.isEmpty && CacheLookup.bestMatch(in: inMemory, for: request) != nil { return inMemory }
        let found = disk.responses(for: key)
        if let memory {
            for response in found.reversed() where response.cost <= memory.capacity / 8 { memory.store(response) }
        }
        return found
    }

    /// Stores a response in each store it fits (an eighth of the store at most); `urlHash`, when
    /// the caller has it, is its URL's ``GroupIndex/hash(_:)``.
    func store(_ response: StoredResponse, urlHash: UInt32? = nil) {
        store(url: response.url, urlHash: urlHash, bodyCount: response.body.count,
              packed: { reserve in PackedResponse(response, reserving: reserve) }, response: { response })
    }

    /// Stores what the origin sent for `request` (as ``store(_:urlHash:)``; `headers` are the
    /// response's). The memory store packs it straight from the transport's response: a
    /// ``StoredResponse`` is made only for a disk store, since making one copies the response's
    /// references, which most stored responses (never read) have no use for.
    func store(_ response: borrowing TransportResponse, headers: borrowing HTTPFields, for request: CacheRequest,
               requestTime: Double, responseTime: Double, secondaryKey: [String?], credentialKey: String?) {
        store(url: request.url, urlHash: request.urlHash, bodyCount: response.body.count,
              packed: { reserve in
                  PackedResponse(url: request.url, statusCode: response.head.status, headers: headers, body: response.body,
                                 requestTime: requestTime, responseTime: responseTime, secondaryKey: secondaryKey,
                                 credentialKey: credentialKey, reserving: reserve)
              },
              response: {
                  StoredResponse(url: request.url, statusCode: response.head.status, headers: copy headers,
                                 body: response.body, requestTime: requestTime, responseTime: responseTime,
                                 secondaryKey: secondaryKey, credentialKey: credentialKey)
              })
    }

    /// Stores a response for `url` whose body has `bodyCount` bytes, packed for the memory store
    /// (into its blocks, given the function that reserves a range of them) and made whole for the
    /// disk store, each only if that store is there.
    private func store(url: String, urlHash: UInt32?, bodyCount: Int,
                       packed: ((Int) -> (block: ByteBlock, start: Int)?) -> PackedResponse,
                       response: () -> StoredResponse) {
        var cost: Int?
        if let memory {
            let limit = memory.capacity / 8
            var stored = false
            if bodyCount <= limit {
                let packed = packed(memory.reserve)
                cost = packed.cost
                stored = memory.store(consume packed, url: url, hash: urlHash ?? GroupIndex.hash(url), costLimit: limit)
            }
            // A smaller variant stored earlier must not outlive the one replacing it.
            if !stored { memory.removeResponses(for: url) }
        }
        if let disk {
            let response = response()
            if (cost ?? response.cost) <= disk.capacity / 8 { disk.store(response) }
        }
    }

    func remove(_ key: String) {
        memory?.removeResponses(for: key)
        disk?.removeResponses(for: key)
    }
}

/// Why a ``ResponseCache`` cannot use its folder.
public struct ResponseCacheError: Error, Sendable, CustomStringConvertible {
    /// The folder.
    public let directory: URL
    /// What went wrong.
    public let reason: String

    public var description: String {
        "Cannot keep a response cache in \(directory.path): \(reason). Choose another folder, "
            + "or use a cache in memory only (ResponseCache(memoryCapacity:))."
    }
}
