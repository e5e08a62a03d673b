import Foundation

/// The journal of durable requests: an SQLite database in a folder of the app's, which a request
/// queue writes each durable request to before `add` returns, and reads back after a restart.
///
/// Every change is a committed transaction flushed to stable storage (WAL, `synchronous=FULL`)
/// before the call returns; concurrent appends, results and notes of results seen share one
/// transaction and one flush (`GroupCommit`). The file is held with an exclusive lock while the journal is open, so a second
/// process (or a second journal on the same folder) gets `JournalError.Kind.heldElsewhere` at
/// once. At open SQLite checks the file (`quick_check`, or `integrity_check` when configured); a
/// damaged file or one that is not a journal is reported (`.corrupt`), never replayed.
final class Journal: Sendable {
    /// The database file's name in the journal's folder.
    static let fileName = "journal.sqlite"
    /// The folder, inside the journal's, of the copies of body files.
    static let bodiesFolderName = "bodies"

    let folder: URL
    let path: String
    let configuration: JournalConfiguration
    private let store: Locked<JournalStore>
    /// Appends, results and delivery notes, grouped: what many threads write at once shares a flush.
    private let writes: GroupCommit<JournalStore.Write, JournalStore.Written>

    /// Opens the journal in `folder` (created when missing), or creates it.
    ///
    /// `library` and the two group-commit seams are for tests: SQLite's availability, the number
    /// of appends waiting after each one queues, and the size of each group before its commit.
    init(folder: URL, configuration: JournalConfiguration = JournalConfiguration(),
         library: Result<String, SQLiteUnavailable> = SQLiteLibrary.availability,
         didQueueAppend: (@Sendable (Int) -> Void)? = nil,
         willCommitAppends: (@Sendable (Int) -> Void)? = nil) throws(JournalError) {
        self.folder = folder
        let path = folder.appendingPathComponent(Self.fileName).path
        self.path = path
        self.configuration = configuration
        if case .failure(let unavailable) = library {
            throw JournalError(.sqliteUnavailable, path: path, detail: unavailable.reason)
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw JournalError(Self.fileSystemKind(error), path: path, detail: "cannot create its folder: \(Self.describe(error))")
        }
        let store: JournalStore
        do {
            store = try JournalStore(path: path, configuration: configuration, library: library)
        } catch let error as JournalError {
            throw error
        } catch let error as SQLiteError {
            let journalError = JournalError(error, path: path)
            // SQLite says only "unable to open" when it cannot create the file or its log in the folder.
            if journalError.kind == .cannotOpen && !FileManager.default.isWritableFile(atPath: folder.path) {
                throw JournalError(.readOnly, path: path, detail: "its folder is not writable; \(error)")
            }
            throw journalError
        } catch {
            throw JournalError(.failed, path: path, detail: "\(error)")
        }
        let locked = Locked(store)
        self.store = locked
        writes = GroupCommit(didQueue: didQueueAppend, willCommit: willCommitAppends) { group in
            locked.withLock { $0.write(group) }
        }
    }

    /// Closes the file and lets go of its lock; later calls fail.
    func close() {
        store.withLock { $0.close() }
    }

    /// Runs `body` on the store, any error as a `JournalError`.
    private func withStore<Result>(_ body: (JournalStore) throws -> Result) throws(JournalError) -> Result {
        do {
            return try store.withLock { try body($0) }
        } catch {
            throw store.withLock { $0.journalError(error) }
        }
    }

    // MARK: Requests

    /// Journals a request, with the given request ID (a new one when nil) and Idempotency-Key, and
    /// returns once it is on stable storage. A body file is copied into the journal's folder
    /// first (and flushed).
    /// - Parameter key: The app's key for the write: when the journal holds a request with it
    ///   already, that request's entry is returned and nothing is added (its `requestID` is then
    ///   not the one given). Default: nil, a new key.
    func append(_ request: JournalRequest, requestID: String? = nil, key: String? = nil,
                at date: Date = Date()) throws(JournalError) -> JournalEntry {
        let requestID = requestID ?? UUID().uuidString.lowercased()
        var request = request
        var size = request.method.utf8.count + request.url.absoluteString.utf8.count
            + JournalHeaderFields.encode(request.headerFields).utf8.count
        switch request.body {
        case .none: break
        case .bytes(let data): size += data.count
        case .file(let original):
            let copy = try copyBody(original, as: requestID)
            request.body = .file(copy.url)
            size += copy.size
        }
        var item = JournalStore.Append(requestID: requestID, idempotencyKey: key ?? UUID().uuidString.lowercased(),
                                       request: request, addedAt: date, size: size)
        item.deduplicates = key != nil
        let result = writes.submit(.append(item)).flatMap { written -> Result<JournalEntry, JournalError> in
            guard case .appended(let entry) = written else {
                return .failure(JournalError(.failed, path: path, detail: "an append came to \(written)"))
            }
            return .success(entry)
        }
        let added = (try? result.get())?.requestID == requestID
        if !added, case .file(let copy) = request.body {
            try? FileManager.default.removeItem(at: copy)
        }
        return try result.get()
    }

    /// Copies a body file to `bodies/<request ID>` and flushes it and its folder, so that the
    /// committed row never names a copy a crash could lose.
    private func copyBody(_ original: URL, as requestID: String) throws(JournalError) -> (url: URL, size: Int) {
        let bodies = folder.appendingPathComponent(Self.bodiesFolderName, isDirectory: true)
        let copy = bodies.appendingPathComponent(requestID)
        do {
            try FileManager.default.createDirectory(at: bodies, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: original, to: copy)
            let handle = try FileHandle(forUpdating: copy)
            defer { try? handle.close() }
            try handle.synchronize()
            let size = Int(try handle.seekToEnd())
            // The folder's entry for the copy, flushed too (fsync of the directory).
            if let folderHandle = FileHandle(forReadingAtPath: bodies.path) {
                try? folderHandle.synchronize()
                try? folderHandle.close()
            }
            return (copy, size)
        } catch {
            try? FileManager.default.removeItem(at: copy)
            // The app's file missing is not a fault of the journal's folder.
            let kind = FileManager.default.isReadableFile(atPath: original.path) ? Self.fileSystemKind(error) : .failed
            throw JournalError(kind, path: path, detail: "cannot copy the body file \(original.path): \(Self.describe(error))")
        }
    }

    /// The requests that have not ended, in the order they were added.
    func pending() throws(JournalError) -> [JournalEntry] {
        try withStore { try $0.pending() }
    }

    /// The request with this ID, pending or ended; nil when there is none (or it was purged).
    func entry(_ requestID: String) throws(JournalError) -> JournalEntry? {
        try withStore { try $0.entry(requestID) }
    }

    /// Counts an attempt of a pending request and sets when the next one may start.
    func markAttempt(_ requestID: String, nextAttemptAt: Date) throws(JournalError) {
        try withStore { try $0.markAttempt(requestID, nextAttemptAt: nextAttemptAt) }
    }

    // MARK: Results

    /// Ends a pending request with its result. False when it already had one (the first is kept:
    /// a request has exactly one result).
    @discardableResult
    func recordResult(_ requestID: String, _ outcome: JournalOutcome, at date: Date = Date()) throws(JournalError) -> Bool {
        guard case .recorded(let recorded) = try writes.submit(.result(requestID: requestID, outcome: outcome, at: date)).get() else {
            throw JournalError(.failed, path: path, detail: "a result was not recorded as one")
        }
        return recorded
    }

    /// Results not yet delivered to the app (or all of them), oldest first.
    func results(undeliveredOnly: Bool = true) throws(JournalError) -> [JournalResult] {
        try withStore { try $0.results(undeliveredOnly: undeliveredOnly) }
    }

    /// The result of one request, delivered or not; nil when it has none (yet, or any more).
    func result(_ requestID: String) throws(JournalError) -> JournalResult? {
        try withStore { try $0.result(requestID) }
    }

    /// Notes that the app has seen a request's result.
    func markDelivered(_ requestID: String) throws(JournalError) {
        try markDelivered([requestID])
    }

    /// Notes that the app has seen these requests' results, in one transaction (with whatever
    /// else is being committed). A note that cannot be made (an unknown ID) fails alone: the
    /// first such failure is thrown once the others are made.
    func markDelivered(_ requestIDs: [String]) throws(JournalError) {
        for result in writes.submit(contentsOf: requestIDs.map { .delivered(requestID: $0) }) { _ = try result.get() }
    }

    /// Removes results past their retention (`JournalConfiguration`), the ended requests whose
    /// results are gone, and those requests' body copies.
    @discardableResult
    func purge(at date: Date = Date()) throws(JournalError) -> JournalPurge {
        let (purge, files) = try withStore { try $0.purge(at: date) }
        for file in files { try? FileManager.default.removeItem(at: file) }
        return purge
    }

    // MARK: Figures

    /// Requests not yet ended, and bytes counted against `maximumBytes`.
    var usage: (pendingRequests: Int, bytes: Int) {
        store.withLock { ($0.pendingCount, $0.byteCount) }
    }

    /// Transactions that appended requests since the journal was opened (fewer than appends when
    /// concurrent ones were grouped).
    var appendTransactions: Int {
        store.withLock { $0.appendTransactions }
    }

    // MARK: File-system errors

    private static func fileSystemKind(_ error: any Error) -> JournalError.Kind {
        let code = (error as NSError).domain == NSCocoaErrorDomain
            ? ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.code : (error as NSError).code
        switch Int32(code ?? 0) {
        case EROFS, EACCES, EPERM: return .readOnly
        case ENOSPC, EDQUOT: return .diskFull
        default:
            switch (error as NSError).code {
            case CocoaError.fileWriteVolumeReadOnly.rawValue, CocoaError.fileWriteNoPermission.rawValue: return .readOnly
            case CocoaError.fileWriteOutOfSpace.rawValue: return .diskFull
            default: return .cannotOpen
            }
        }
    }

    private static func describe(_ error: any Error) -> String {
        (error as NSError).localizedDescription
    }
}
