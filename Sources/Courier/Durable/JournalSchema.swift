import Foundation

/// The journal's tables, versioned with `PRAGMA user_version`: 0 is a new file, 2 this schema
/// (1 lacked the index of keys, added when a version 1 file is opened).
/// A later Courier that changes them adds a migration from each earlier version here.
enum JournalSchema {
    static let version = 2
    /// `PRAGMA application_id`, which marks the file as a Courier journal ("CRJ1").
    static let applicationID: Int64 = 0x4352_4A31

    /// Times are milliseconds since 1970; `size` is what a row counts against the byte bound;
    /// `checksum` covers the columns that never change (`JournalChecksum`).
    static let statements = """
        CREATE TABLE requests (
            id INTEGER PRIMARY KEY,
            request_id TEXT NOT NULL UNIQUE,
            idempotency_key TEXT NOT NULL,
            lane TEXT,
            method TEXT NOT NULL,
            url TEXT NOT NULL,
            header_fields TEXT NOT NULL,
            body BLOB,
            body_file TEXT,
            response_type TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'ended')),
            added_at INTEGER NOT NULL,
            size INTEGER NOT NULL,
            checksum INTEGER NOT NULL
        );
        CREATE INDEX requests_by_state ON requests (state, id);
        CREATE INDEX requests_by_key ON requests (idempotency_key);
        CREATE TABLE results (
            request_id TEXT PRIMARY KEY,
            status INTEGER,
            header_fields TEXT,
            body BLOB,
            failure TEXT,
            ended_at INTEGER NOT NULL,
            delivered INTEGER NOT NULL DEFAULT 0,
            size INTEGER NOT NULL,
            checksum INTEGER NOT NULL
        );
        PRAGMA application_id = 1129466417;
        PRAGMA user_version = 2;
        """
    /// From version 1: the index that finds a request by the key the app chose.
    static let migrationFrom1 = """
        CREATE INDEX requests_by_key ON requests (idempotency_key);
        PRAGMA user_version = 2;
        """

    /// Creates the tables in a new file, or checks that an existing one is a journal of this schema.
    static func prepare(_ connection: SQLiteConnection, path: String) throws {
        // (Three statements: the pragma functions that could read them in one need SQLite 3.16.)
        let rows = try ["PRAGMA user_version", "PRAGMA application_id", "SELECT count(*) FROM sqlite_master"]
            .map { try connection.rows($0).first?.first }
        guard case .integer(let found)? = rows[0], case .integer(let application)? = rows[1],
              case .integer(let objects)? = rows[2] else {
            throw JournalError(.corrupt, path: path, detail: "its schema version reads as \(rows)")
        }
        // Another program's database is not taken for a damaged journal, nor written to.
        if application != applicationID && (application != 0 || objects != 0) {
            throw JournalError(.corrupt, path: path, detail: "an SQLite database of another program (application_id \(application), \(objects) tables and indexes)")
        }
        switch Int(found) {
        case 0:
            // A new file, or one that lost its contents: a journal created here before left a
            // mark beside it, and its pending requests must not vanish without a word.
            if let created = try? String(contentsOfFile: markPath(of: path), encoding: .utf8) {
                throw JournalError(.corrupt, path: path, detail: "the file is empty or missing, but a journal was created here "
                    + "at \(created.trimmingCharacters(in: .whitespacesAndNewlines)) (\(markName)); its requests are lost. "
                    + "Delete the folder, or that mark, to start a new journal")
            }
            try connection.transaction { try connection.execute(statements) }
            try writeMark(of: path)
        case 1:
            try connection.transaction { try connection.execute(migrationFrom1) }
        case version:
            break
        default:
            throw JournalError(.newerSchema(Int(found)), path: path, detail: "this Courier reads version \(version)")
        }
        // A journal of a Courier before the mark: mark it now.
        if !FileManager.default.fileExists(atPath: markPath(of: path)) { try writeMark(of: path) }
    }

    /// The file beside the journal that says one was created there, and when.
    static let markName = "journal.created"

    static func markPath(of path: String) -> String {
        URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(markName).path
    }

    /// Writes the mark and flushes it and its folder: once the schema is committed, the mark must
    /// outlive a crash too.
    private static func writeMark(of path: String) throws {
        let mark = URL(fileURLWithPath: markPath(of: path))
        do {
            try Data((ISO8601DateFormatter().string(from: Date()) + "\n").utf8).write(to: mark)
            let handle = try FileHandle(forUpdating: mark)
            defer { try? handle.close() }
            try handle.synchronize()
            if let folder = FileHandle(forReadingAtPath: mark.deletingLastPathComponent().path) {
                try? folder.synchronize()
                try? folder.close()
            }
        } catch {
            throw JournalError(.failed, path: path, detail: "cannot write \(markName) beside it: \(error.localizedDescription)")
        }
    }
}
