import Foundation

/// The journal's connection and the SQL it runs, used under the journal's lock (one thread at a
/// time, as `SQLiteConnection` requires). Every method either changes the file in one committed
/// transaction (flushed: `synchronous=FULL`) or throws and changes nothing.
final class JournalStore {
    let path: String
    private let connection: SQLiteConnection
    private let configuration: JournalConfiguration
    /// Requests that have not ended, and bytes of requests and results, against the bounds.
    private(set) var pendingCount = 0
    private(set) var byteCount = 0
    /// Transactions that appended requests (the group commit's groups), for tests and measures.
    private(set) var appendTransactions = 0

    /// Opens (or creates) the journal's file, takes it for this process, and checks it.
    init(path: String, configuration: JournalConfiguration, library: Result<String, SQLiteUnavailable>) throws {
        self.path = path
        self.configuration = configuration
        // No busy timeout: the journal is held with an exclusive lock for as long as it is open,
        // so SQLITE_BUSY means another process holds it, and waiting would not help.
        connection = try SQLiteConnection(path: path, flags: [.readWrite, .create], busyTimeout: .zero, library: library)
        // Exclusive locking mode before WAL: the connection keeps its lock on the file until it
        // closes (a second process or connection gets SQLITE_BUSY at once instead of sharing the
        // journal), and WAL then needs no shared-memory file.
        try connection.execute("PRAGMA locking_mode=EXCLUSIVE")
        let mode = try connection.rows("PRAGMA journal_mode=WAL")
        guard mode == [[.text("wal")]] else {
            throw JournalError(.failed, path: path, detail: "SQLite would not use WAL mode here (journal_mode is \(mode))")
        }
        try connection.execute("PRAGMA synchronous=FULL")
        if let pages = configuration.maximumPageCount { try connection.execute("PRAGMA max_page_count=\(pages)") }
        // Takes the exclusive lock now rather than at the first write.
        try connection.execute("BEGIN EXCLUSIVE; COMMIT")
        let check = try connection.rows(configuration.checksIndexesAtOpen ? "PRAGMA integrity_check" : "PRAGMA quick_check")
        guard check == [[.text("ok")]] else {
            let problems = check.prefix(3).map { row in row.map { "\($0)" }.joined() }.joined(separator: "; ")
            throw JournalError(.corrupt, path: path, detail: "SQLite's check found: \(problems)")
        }
        try JournalSchema.prepare(connection, path: path)
        try recount()
    }

    func close() { connection.close() }

    private func recount() throws {
        let counts = try connection.rows("""
            SELECT (SELECT count(*) FROM requests WHERE state = 'pending'),
                   (SELECT total(size) FROM requests) + (SELECT total(size) FROM results)
            """)
        guard let row = counts.first, case .integer(let pending) = row[0], case .real(let bytes) = row[1] else {
            throw JournalError(.corrupt, path: path, detail: "the journal's counts read as \(counts)")
        }
        pendingCount = Int(pending)
        byteCount = Int(bytes)
    }

    // MARK: Requests

    /// A request ready to be inserted: its IDs made, its body file copied, its size counted.
    struct Append: Sendable {
        let requestID: String
        let idempotencyKey: String
        /// The key is the app's: a request the journal holds with it already is that request,
        /// returned instead of a new one.
        var deduplicates = false
        let request: JournalRequest
        let addedAt: Date
        let size: Int
    }

    /// A change the group commit carries, with others, in one transaction.
    enum Write: Sendable {
        case append(Append)
        case result(requestID: String, outcome: JournalOutcome, at: Date)
        case delivered(requestID: String)
    }

    /// What a change came to.
    enum Written: Sendable, Equatable {
        case appended(JournalEntry)
        /// Whether the result was recorded (false: the request had one already, which is kept).
        case recorded(Bool)
        case delivered
    }

    /// Makes a group of changes in one transaction, with one flush: appends, results, and notes
    /// that results were seen. A change that cannot be made (over the bounds, an unknown ID)
    /// fails alone; a failure of the file fails them all, and nothing of the group is kept.
    func write(_ group: [Write]) -> [Result<Written, JournalError>] {
        let (pendingBefore, bytesBefore) = (pendingCount, byteCount)
        var appends = false
        do {
            let results: [Result<Written, JournalError>] = try connection.transaction {
                try group.map { write in
                    switch write {
                    case .append(let item):
                        appends = true
                        return try insert(item).map(Written.appended)
                    case .result(let requestID, let outcome, let date):
                        return try insertResult(requestID, outcome, at: date).map(Written.recorded)
                    case .delivered(let requestID):
                        return try noteDelivered(requestID).map { .delivered }
                    }
                }
            }
            if appends { appendTransactions += 1 }
            return results
        } catch {
            (pendingCount, byteCount) = (pendingBefore, bytesBefore)
            let failure = journalError(error)
            return group.map { _ in .failure(failure) }
        }
    }

    /// Inserts one request, inside the caller's transaction: the request the journal holds under
    /// the app's key if there is one, a failure of its own when the bounds are reached.
    private func insert(_ item: Append) throws -> Result<JournalEntry, JournalError> {
        if item.deduplicates, let existing = try connection.rows(
            "SELECT \(Self.entryColumns) FROM requests WHERE idempotency_key = ? ORDER BY id LIMIT 1",
            [.text(item.idempotencyKey)]).first {
            return .success(try entry(existing))
        }
        if let bound = boundReached(adding: item.size) {
            return .failure(JournalError(.boundsReached, path: path, detail: bound))
        }
        let request = item.request
        var body = SQLiteValue.null, bodyFile = SQLiteValue.null
        switch request.body {
        case .none: break
        case .bytes(let data): body = .blob(data)
        case .file(let url): bodyFile = .text(url.path)
        }
        let added = item.addedAt.journalMilliseconds
        let fixed: [SQLiteValue] = [.text(item.requestID), .text(item.idempotencyKey), request.lane.map { .text($0) } ?? .null,
                                    .text(request.method), .text(request.url.absoluteString),
                                    .text(JournalHeaderFields.encode(request.headerFields)), body, bodyFile,
                                    .text(request.responseType), .integer(added)]
        try connection.prepare("""
            INSERT INTO requests (request_id, idempotency_key, lane, method, url, header_fields, body, body_file,
                                  response_type, next_attempt_at, state, added_at, size, checksum)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)
            """).run(fixed[0..<9] + [.integer(added), .integer(added), .integer(Int64(item.size)),
                                      .integer(JournalChecksum.of(fixed))])
        pendingCount += 1
        byteCount += item.size
        return .success(JournalEntry(
            sequence: connection.lastInsertRowID, requestID: item.requestID, idempotencyKey: item.idempotencyKey,
            request: request, attempts: 0, nextAttemptAt: Date(journalMilliseconds: added), state: .pending,
            addedAt: Date(journalMilliseconds: added)))
    }

    private func boundReached(adding size: Int) -> String? {
        if pendingCount + 1 > configuration.maximumPendingRequests {
            return "\(pendingCount) requests are pending, the most it holds (maximumPendingRequests)"
        }
        if byteCount + size > configuration.maximumBytes {
            return "\(byteCount) bytes are stored and this request has \(size), more than \(configuration.maximumBytes) (maximumBytes)"
        }
        return nil
    }

    private static let entryColumns = """
        id, request_id, idempotency_key, lane, method, url, header_fields, body, body_file, response_type,
        attempts, next_attempt_at, state, added_at, checksum
        """

    /// The requests that have not ended, in the order they were added.
    func pending() throws -> [JournalEntry] {
        try connection.rows("SELECT \(Self.entryColumns) FROM requests WHERE state = 'pending' ORDER BY id").map(entry)
    }

    /// The request with this ID, pending or ended.
    func entry(_ requestID: String) throws -> JournalEntry? {
        try connection.rows("SELECT \(Self.entryColumns) FROM requests WHERE request_id = ?", [.text(requestID)]).first.map(entry)
    }

    /// Reads a row back, checking every column's type: a row that does not fit is damage, never replayed.
    private func entry(_ row: [SQLiteValue]) throws -> JournalEntry {
        // The columns that never change, in the order the checksum was made of them.
        guard row.count == 15, case .integer(let checksum) = row[14],
              JournalChecksum.of(Array(row[1...9]) + [row[13]]) == checksum else {
            throw JournalError(.corrupt, path: path, detail: "request row \(row.first.map { "\($0)" } ?? "?") fails its checksum")
        }
        guard 
              case .integer(let sequence) = row[0], case .text(let requestID) = row[1], case .text(let key) = row[2],
              case .text(let method) = row[4], case .text(let urlText) = row[5], let url = URL(string: urlText),
              case .text(let fieldsText) = row[6], let fields = JournalHeaderFields.decode(fieldsText),
              case .text(let responseType) = row[9], case .integer(let attempts) = row[10],
              case .integer(let next) = row[11], case .text(let stateText) = row[12],
              let state = JournalRequestState(rawValue: stateText), case .integer(let added) = row[13]
        else { throw JournalError(.corrupt, path: path, detail: "a request row does not read back: \(row.prefix(3))") }
        let lane: String?
        switch row[3] {
        case .null: lane = nil
        case .text(let text): lane = text
        default: throw JournalError(.corrupt, path: path, detail: "request \(requestID) has a lane of the wrong type")
        }
        let body: JournalBody
        switch (row[7], row[8]) {
        case (.null, .null): body = .none
        case (.blob(let data), .null): body = .bytes(data)
        case (.null, .text(let file)): body = .file(URL(fileURLWithPath: file))
        default: throw JournalError(.corrupt, path: path, detail: "request \(requestID) has a body of the wrong type")
        }
        return JournalEntry(sequence: sequence, requestID: requestID, idempotencyKey: key,
                            request: JournalRequest(lane: lane, method: method, url: url, headerFields: fields, body: body,
                                                    responseType: responseType),
                            attempts: Int(attempts), nextAttemptAt: Date(journalMilliseconds: next), state: state,
                            addedAt: Date(journalMilliseconds: added))
    }

    /// Counts an attempt of a pending request and when the next one may start.
    func markAttempt(_ requestID: String, nextAttemptAt: Date) throws {
        try connection.prepare("""
            UPDATE requests SET attempts = attempts + 1, next_attempt_at = ? WHERE request_id = ? AND state = 'pending'
            """).run([.integer(nextAttemptAt.journalMilliseconds), .text(requestID)])
        guard connection.changes == 1 else {
            throw JournalError(.unknownRequest(requestID), path: path, detail: "no pending request has this ID")
        }
    }

    // MARK: Results

    /// Ends a pending request with its result, inside the caller's transaction.
    private func insertResult(_ requestID: String, _ outcome: JournalOutcome, at date: Date) throws -> Result<Bool, JournalError> {
        var status = SQLiteValue.null, fields = SQLiteValue.null, body = SQLiteValue.null, failure = SQLiteValue.null
        let size: Int
        switch outcome {
        case .response(let code, let headerFields, let data):
            let encoded = JournalHeaderFields.encode(headerFields)
            (status, fields, body) = (.integer(Int64(code)), .text(encoded), .blob(data))
            size = encoded.utf8.count + data.count
        case .failure(let description):
            failure = .text(description)
            size = description.utf8.count
        }
        let fixed: [SQLiteValue] = [.text(requestID), status, fields, body, failure, .integer(date.journalMilliseconds)]
        try connection.prepare("UPDATE requests SET state = 'ended' WHERE request_id = ? AND state = 'pending'")
            .run([.text(requestID)])
        guard connection.changes == 1 else {
            if try connection.rows("SELECT 1 FROM requests WHERE request_id = ?", [.text(requestID)]).isEmpty {
                return .failure(JournalError(.unknownRequest(requestID), path: path, detail: "no request has this ID"))
            }
            return .success(false)
        }
        try connection.prepare("""
            INSERT INTO results (request_id, status, header_fields, body, failure, ended_at, size, checksum)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """).run(fixed + [.integer(Int64(size)), .integer(JournalChecksum.of(fixed))])
        pendingCount -= 1
        byteCount += size
        return .success(true)
    }

    /// Results, oldest first: all of them, or only those not yet delivered.
    func results(undeliveredOnly: Bool) throws -> [JournalResult] {
        let condition = undeliveredOnly ? "WHERE delivered = 0" : ""
        return try connection.rows("""
            SELECT request_id, status, header_fields, body, failure, ended_at, delivered, checksum FROM results \(condition)
            ORDER BY ended_at, rowid
            """).map(result)
    }

    /// The result of one request, delivered or not.
    func result(_ requestID: String) throws -> JournalResult? {
        try connection.rows("""
            SELECT request_id, status, header_fields, body, failure, ended_at, delivered, checksum FROM results
            WHERE request_id = ?
            """, [.text(requestID)]).first.map(result)
    }

    private func result(_ row: [SQLiteValue]) throws -> JournalResult {
        guard row.count == 8, case .integer(let checksum) = row[7], JournalChecksum.of(Array(row[0...5])) == checksum else {
            throw JournalError(.corrupt, path: path, detail: "result row \(row.first.map { "\($0)" } ?? "?") fails its checksum")
        }
        guard case .text(let requestID) = row[0], case .integer(let ended) = row[5],
              case .integer(let delivered) = row[6]
        else { throw JournalError(.corrupt, path: path, detail: "a result row does not read back: \(row.prefix(1))") }
        let outcome: JournalOutcome
        switch (row[1], row[2], row[3], row[4]) {
        case (.integer(let status), .text(let fieldsText), .blob(let body), .null):
            guard let fields = JournalHeaderFields.decode(fieldsText) else {
                throw JournalError(.corrupt, path: path, detail: "the result of \(requestID) has unreadable header fields")
            }
            outcome = .response(status: Int(status), headerFields: fields, body: body)
        case (.null, .null, .null, .text(let failure)):
            outcome = .failure(failure)
        default:
            throw JournalError(.corrupt, path: path, detail: "the result of \(requestID) has columns of the wrong types")
        }
        return JournalResult(requestID: requestID, outcome: outcome, endedAt: Date(journalMilliseconds: ended),
                             delivered: delivered != 0)
    }

    /// Notes that the app has seen a result, inside the caller's transaction.
    private func noteDelivered(_ requestID: String) throws -> Result<Void, JournalError> {
        try connection.prepare("UPDATE results SET delivered = 1 WHERE request_id = ?").run([.text(requestID)])
        guard connection.changes == 1 else {
            return .failure(JournalError(.unknownRequest(requestID), path: path, detail: "no result has this ID"))
        }
        return .success(())
    }

    /// Removes results past their retention and the ended requests whose results are gone, in
    /// one transaction; returns the body copies those requests had, for the caller to delete.
    func purge(at now: Date) throws -> (JournalPurge, [URL]) {
        let delivered = now.addingTimeInterval(-configuration.deliveredResultRetention).journalMilliseconds
        let undelivered = now.addingTimeInterval(-configuration.undeliveredResultRetention).journalMilliseconds
        let (purge, files): (JournalPurge, [URL]) = try connection.transaction {
            var purge = JournalPurge()
            try connection.prepare("""
                DELETE FROM results WHERE (delivered = 1 AND ended_at <= ?) OR ended_at <= ?
                """).run([.integer(delivered), .integer(undelivered)])
            purge.results = connection.changes
            let orphans = "state = 'ended' AND request_id NOT IN (SELECT request_id FROM results)"
            let files = try connection.rows("SELECT body_file FROM requests WHERE \(orphans) AND body_file IS NOT NULL")
                .compactMap { row -> URL? in
                    guard case .text(let file) = row.first else { return nil }
                    return URL(fileURLWithPath: file)
                }
            try connection.execute("DELETE FROM requests WHERE \(orphans)")
            purge.requests = connection.changes
            return (purge, files)
        }
        try recount()
        return (purge, files)
    }

    // MARK: Errors

    /// The journal error for anything a call threw.
    func journalError(_ error: any Error) -> JournalError {
        switch error {
        case let error as JournalError: return error
        case let error as SQLiteError: return JournalError(error, path: path)
        case let error as SQLiteUnavailable: return JournalError(.sqliteUnavailable, path: path, detail: error.reason)
        default: return JournalError(.failed, path: path, detail: "\(error)")
        }
    }
}
