import Foundation

/// The journal's tables, versioned with `PRAGMA user_version`: 0 is a new file, 1 this schema.
/// A later Courier that changes them adds a migration from each earlier version here.
enum JournalSchema {
    static let version = 1

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
        PRAGMA user_version = 1;
        """

    /// Creates the tables in a new file, or checks that an existing one has this schema.
    static func prepare(_ connection: SQLiteConnection, path: String) throws {
        let rows = try connection.rows("PRAGMA user_version")
        guard case .integer(let found)? = rows.first?.first else {
            throw JournalError(.corrupt, path: path, detail: "PRAGMA user_version returned \(rows)")
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
