import Foundation

/// The journal's tables, versioned with `PRAGMA user_version`: 0 is a new file, 1 this schema.
/// A later Courier that changes them adds a migration from each earlier version here.
enum JournalSchema {
    static let version = 1
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
        PRAGMA user_version = 1;
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
            try connection.transaction { try connection.execute(statements) }
        case version:
            return
        default:
            throw JournalError(.newerSchema(Int(found)), path: path, detail: "this Courier reads version \(version)")
        }
    }
}
