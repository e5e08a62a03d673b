import Foundation

/// Why a ``DiskStore`` could not open its directory. The cache then keeps responses in memory
/// only; the description says what to change.
enum CacheStoreError: Error, Equatable, CustomStringConvertible {
    /// The directory does not exist and cannot be created.
    case cannotCreateDirectory(String, reason: String)
    /// The directory exists but this process cannot create files in it.
    case cannotWrite(String, reason: String)
    /// Another process holds the directory's lock: it has its own store on this directory.
    case usedByAnotherProcess(String)

    var description: String {
        switch self {
        case .cannotCreateDirectory(let path, let reason):
            "Cannot create the cache directory \(path) (\(reason)). Give the cache a directory this process can "
                + "create, such as one in the user's caches directory; until then responses are cached in memory only."
        case .cannotWrite(let path, let reason):
            "Cannot write in the cache directory \(path) (\(reason)). Make it writable by this process or give the "
                + "cache another directory; until then responses are cached in memory only."
        case .usedByAnotherProcess(let path):
            "The cache directory \(path) is in use by another process (it holds \(CacheDirectory.lockFileName) "
                + "there). Give each process a cache directory of its own; until then responses are cached in "
                + "memory only."
        }
    }
}

/// The cache's store on disk: one file per stored response in a directory this process owns, at
/// most ``capacity`` bytes of files, the least recently used evicted first.
///
/// - Files: see ``CacheEntryFile`` for the names and the format. Reads check everything and
///   delete a file that fails (torn, corrupt, of another version, or not the file its name says);
///   it is never served.
/// - Writes: ``store(_:)`` updates the index and returns; the file is written on the store's own
///   serial queue, to a temporary file renamed over the final name, so no reader ever sees part of
///   one. Until then ``responses(for:)`` answers with the response held in memory. A write that
///   fails drops the entry. ``flush()`` waits for the writes. Nothing is `fsync`ed: see
///   ``CacheDirectory``.
/// - Index: opening lists the directory (names, sizes, modification times; it reads no file) and
///   removes temporary files a crash left. The index maps each URL's hash to its variants'
///   files and keeps them in the order of their last use, which eviction follows.
/// - Last use: kept in memory and written to disk as each file's modification time, so that the
///   order survives a restart: a write sets it, and the reads of a second are set together a
///   second later on the write queue (one `utimensat` per file read; ``flush()`` and releasing the
///   store write them at once). A crash may lose the latest of these times, which only makes
///   eviction a little less exact.
/// - Ownership: one process per directory. Opening takes an exclusive `flock` on a lock file in
///   the directory, and fails with ``CacheStoreError/usedByAnotherProcess(_:)`` while another
///   process holds it. In one process, opening a directory that already has a store returns that
///   store (with the capacity it was opened with), so several queues can share a directory.
final class DiskStore: CacheStore {
    let capacity: Int
    let directory: CacheDirectory

    private struct Pending {
        var response: StoredResponse
        var storedAt: Double
    }

    private struct Entry: GroupedUseOrderEntry {
        let name: CacheEntryFile.Name
        /// The file's size.
        let cost: Int
        /// The response while its file is being written.
        var pending: Pending?
        var lastUse: Double
        /// Unique to one store of the entry: tells a later store of the same variant apart.
        let version: Int

        typealias Group = UInt64
        var group: UInt64 { name.urlHash }
    }

    private struct State {
        var entries = UseOrder<Entry>()
        /// The latest time handed out: times only increase, so uses are ordered even when the
        /// clock does not move between them or goes back.
        var clock: Double = 0
        var versions = 0
        /// Last uses to write as modification times (of files that may have gone since: then
        /// writing the time does nothing).
        var uses: [CacheEntryFile.Name: Double] = [:]
        var usesScheduled = false

        mutating func now() -> Double {
            clock = max(Date().timeIntervalSince1970, clock + 1e-6)
            return clock
        }

        mutating func nextVersion() -> Int {
            versions += 1
            return versions
        }

        func slot(named name: CacheEntryFile.Name) -> Int? {
            entries.slots(of: name.urlHash).first { entries[$0].name == name }
        }

        /// The slot of exactly this store of an entry: nil once it was replaced or removed.
        func slot(of name: CacheEntryFile.Name, version: Int) -> Int? {
            slot(named: name).flatMap { entries[$0].version == version ? $0 : nil }
        }
    }

    private let state = Locked(State())
    /// Every file operation but reads, in the order the index changed.
    private let queue = DispatchQueue(label: "Courier.DiskStore")
    /// How long last uses wait in memory before they are written.
    private static let useDelay = DispatchTimeInterval.seconds(1)

    // MARK: - Opening

    private struct Registration {
        weak var store: DiskStore?
        /// The descriptor that holds the directory's lock; it outlives a store that is being
        /// released while another opens the directory.
        let lock: Int32
    }

    /// The open stores of this process, by standardised directory path.
    private static let registry = Locked<[String: Registration]>([:])

    /// The store of a directory (created if need be), at most `capacity` bytes. Returns the
    /// directory's store if this process has one open already.
    static func open(directory url: URL, capacity: Int) throws(CacheStoreError) -> DiskStore {
        let requested = url.standardizedFileURL.path
        do {
            try FileManager.default.createDirectory(atPath: requested, withIntermediateDirectories: true)
        } catch {
            throw .cannotCreateDirectory(requested, reason: (error as NSError).localizedDescription)
        }
        let path = URL(fileURLWithPath: requested).resolvingSymlinksInPath().standardizedFileURL.path
        let opened = registry.withLock { registry in
            Result { () throws(CacheStoreError) -> DiskStore in
                if let store = registry[path]?.store { return store }
                let directory = CacheDirectory(path: path)
                let heldLock = registry[path]?.lock
                let lock: Int32
                if let heldLock { lock = heldLock } else { lock = try directory.lock() }
                do throws(CacheStoreError) {
                    try directory.checkWritable()
                } catch {
                    if heldLock == nil { CacheDirectory.unlock(lock) }
                    throw error
                }
                let store = DiskStore(directory: directory, capacity: capacity)
                registry[path] = Registration(store: store, lock: lock)
                return store
            }
        }
        return try opened.get()
    }

    /// Builds the index from the directory: removes temporary files, indexes entry files by their
    /// modification time, and evicts what does not fit.
    private init(directory: CacheDirectory, capacity: Int) {
        self.directory = directory
        self.capacity = capacity
        var files: [(name: CacheEntryFile.Name, file: CacheDirectory.File)] = []
        for file in directory.files() {
            if file.name.hasPrefix(CacheEntryFile.temporaryPrefix) {
                directory.remove(file.name)
            } else if let name = CacheEntryFile.Name(fileName: file.name) {
                files.append((name, file))
            }
        }
        files.sort { ($0.file.modified, $0.file.name) < ($1.file.modified, $1.file.name) }
        let evicted = state.withLock { state in
            for (name, file) in files {
                state.entries.insert(Entry(name: name, cost: file.size, lastUse: file.modified, version: state.nextVersion()))
                state.clock = max(state.clock, file.modified)
            }
            return state.entries.evict(toFit: capacity)
        }
        for entry in evicted { directory.remove(entry.name.fileName) }
    }

    deinit {
        // Every block on the queue but the delayed writing of uses holds the store: none is
        // left. Write the uses, and give the lock back unless a new store of the directory took
        // it over meanwhile.
        writeUses()
        let path = directory.path
        Self.registry.withLock { registry in
            guard let registration = registry[path], registration.store == nil else { return }
            CacheDirectory.unlock(registration.lock)
            registry[path] = nil
        }
    }

    // MARK: - CacheStore

    var size: Int {
        state.withLock { $0.entries.size }
    }

    func responses(for url: String) -> [StoredResponse] {
        let urlHash = CacheEntryFile.urlHash(url)
        let entries = state.withLock { state -> [Entry] in
            let slots = state.entries.slots(of: urlHash)
            guard !slots.isEmpty else { return [] }
            let time = state.now()
            var entries: [Entry] = []
            for slot in slots.reversed() {
                state.entries.use(slot)
                state.entries[slot].lastUse = time
                let entry = state.entries[slot]
                if entry.pending == nil { state.uses[entry.name] = time }
                entries.append(entry)
            }
            if !state.uses.isEmpty, !state.usesScheduled {
                state.usesScheduled = true
                // A second later, so that the reads meanwhile wake no thread and cost one
                // `utimensat` per file; a store released before then writes them as it goes.
                queue.asyncAfter(deadline: .now() + Self.useDelay) { [weak self] in self?.writeUses() }
            }
            return entries
        }
        var found: [Pending] = []
        for entry in entries {
            if let pending = entry.pending {
                if pending.response.url == url { found.append(pending) }
                continue
            }
            // A file that does not decode, or whose contents are not what its name says, is
            // removed; a sound file of another URL with the same hash is only passed over.
            guard let contents = directory.read(entry.name.fileName).flatMap(CacheEntryFile.decode),
                  contents.name == entry.name
            else {
                discard(entry)
                continue
            }
            if contents.response.url == url { found.append(Pending(response: contents.response, storedAt: contents.storedAt)) }
        }
        if found.count > 1 { found.sort { $0.storedAt > $1.storedAt } }
        return found.map(\.response)
    }

    func store(_ response: StoredResponse) {
        guard let size = CacheEntryFile.encodedSize(of: response), size <= capacity else { return }
        let name = CacheEntryFile.Name(of: response)
        state.withLock { state in
            let time = state.now()
            let version = state.nextVersion()
            // The new file replaces the old one by its rename: nothing to remove.
            if let slot = state.slot(named: name) { state.entries.remove(slot) }
            state.entries.insert(Entry(name: name, cost: size, pending: Pending(response: response, storedAt: time),
                                       lastUse: time, version: version))
            let evicted = state.entries.evict(toFit: capacity).map(\.name)
            state.uses[name] = nil  // an older read's time would come after the write's
            // Queued under the lock, so that the queue sees the changes in the index's order.
            queue.async {
                self.removeFiles(evicted)
                self.write(response, name: name, version: version, storedAt: time)
            }
        }
    }

    func removeResponses(for url: String) {
        let urlHash = CacheEntryFile.urlHash(url)
        state.withLock { state in
            // Every variant with the URL's hash: another URL with the same hash (one chance in
            // 2^64) loses its entries too, which a cache may do.
            let names = state.entries.slots(of: urlHash).map { state.entries.remove($0).name }
            queue.async { self.removeFiles(names) }
        }
    }

    func removeAll() {
        state.withLock { state in
            state.entries.removeAll()
            state.uses = [:]
            queue.async {
                for file in self.directory.files()
                where CacheEntryFile.Name(fileName: file.name) != nil || file.name.hasPrefix(CacheEntryFile.temporaryPrefix) {
                    self.directory.remove(file.name)
                }
            }
        }
    }

    /// Waits until every file operation asked so far is done, the last uses written too. Not to
    /// be called on the store's queue.
    func flush() {
        queue.sync { writeUses() }
    }

    // MARK: - On the queue

    private func write(_ response: StoredResponse, name: CacheEntryFile.Name, version: Int, storedAt: Double) {
        let lastUse = state.withLock { state in state.slot(of: name, version: version).map { state.entries[$0].lastUse } }
        // Replaced or removed since: a later block writes the new one or removes the file.
        guard let lastUse else { return }
        let written = directory.write(CacheEntryFile.encode(response, storedAt: storedAt), to: name.fileName, modified: lastUse)
        state.withLock { state in
            guard let slot = state.slot(of: name, version: version) else { return }
            if written { state.entries[slot].pending = nil } else { state.entries.remove(slot) }
        }
        // A failed write drops the entry: an older file of the same variant must not come back.
        if !written { directory.remove(name.fileName) }
    }

    private func writeUses() {
        let uses = state.withLock { state in
            defer {
                state.uses = [:]
                state.usesScheduled = false
            }
            return state.uses
        }
        for (name, time) in uses { directory.setModificationTime(of: name.fileName, to: time) }
    }

    private func removeFiles(_ names: [CacheEntryFile.Name]) {
        for name in names { directory.remove(name.fileName) }
    }

    /// Drops an entry whose file could not be read or failed its checks, and deletes the file,
    /// unless the entry was stored again meanwhile.
    private func discard(_ entry: Entry) {
        state.withLock { state in
            guard let slot = state.slot(of: entry.name, version: entry.version) else { return }
            state.entries.remove(slot)
            queue.async { self.directory.remove(entry.name.fileName) }
        }
    }
}
