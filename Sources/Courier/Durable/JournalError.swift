import Foundation
import CourierSQLite

/// Why the journal of durable requests cannot be opened or written: what went wrong, the file,
/// and what to do about it. Nothing the journal reports an error for was accepted.
struct JournalError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        /// SQLite could not be loaded in this process.
        case sqliteUnavailable
        /// The folder or file cannot be created or opened (it is missing, not a folder, or not ours).
        case cannotOpen
        /// The folder or file is read-only.
        case readOnly
        /// The disk (or SQLite's page limit) is full.
        case diskFull
        /// Another process (or another journal in this one) has the journal open.
        case heldElsewhere
        /// The file is damaged or not a database: nothing was replayed from it.
        case corrupt
        /// The journal was written by a newer version of Courier (its schema version).
        case newerSchema(Int)
        /// Adding the request would exceed the journal's configured bounds.
        case boundsReached
        /// The request ID is not in the journal (or has ended, for an attempt).
        case unknownRequest(String)
        /// Any other failure of SQLite or the file system.
        case failed
    }

    let kind: Kind
    /// The journal's database file.
    let path: String
    /// What SQLite or the file system said, or which bound was reached.
    let detail: String

    var description: String {
        switch kind {
        case .sqliteUnavailable:
            return "The durable journal at \(path) cannot be used: SQLite cannot be loaded (\(detail)). Install the system's SQLite (libsqlite3.so.0)."
        case .cannotOpen:
            return "The durable journal at \(path) cannot be opened (\(detail)). Check that its folder exists, is a folder, and belongs to this user."
        case .readOnly:
            return "The durable journal at \(path) is read-only (\(detail)). Choose a writable folder or make this one writable."
        case .diskFull:
            return "The durable journal at \(path) cannot be written: the disk is full (\(detail)). Free space, or lower the journal's bounds."
        case .heldElsewhere:
            return "The durable journal at \(path) is open in another process or queue (\(detail)). Use one queue per journal folder, or another folder."
        case .corrupt:
            return "The durable journal at \(path) is damaged or not a journal (\(detail)); nothing was replayed from it. Move it aside (its requests are lost) and open the folder again."
        case .newerSchema(let version):
            return "The durable journal at \(path) has schema version \(version), newer than this Courier reads (\(detail)). Use the newer Courier, or another folder."
        case .boundsReached:
            return "The durable journal at \(path) is full: \(detail). Let requests end and results be delivered, purge, or raise the bounds."
        case .unknownRequest(let id):
            return "The durable journal at \(path) has no request \(id) (\(detail))."
        case .failed:
            return "The durable journal at \(path) failed: \(detail)."
        }
    }

    /// The journal error for a failed SQLite call, by SQLite's primary result code.
    init(_ error: SQLiteError, path: String) {
        self.path = path
        self.detail = error.description
        switch error.code {
        case Int32(COURIER_SQLITE_FULL): kind = .diskFull
        case Int32(COURIER_SQLITE_READONLY), Int32(COURIER_SQLITE_PERM): kind = .readOnly
        case Int32(COURIER_SQLITE_CANTOPEN): kind = .cannotOpen
        case Int32(COURIER_SQLITE_BUSY), Int32(COURIER_SQLITE_LOCKED): kind = .heldElsewhere
        case Int32(COURIER_SQLITE_CORRUPT), Int32(COURIER_SQLITE_NOTADB): kind = .corrupt
        default: kind = .failed
        }
    }

    init(_ kind: Kind, path: String, detail: String) {
        self.kind = kind
        self.path = path
        self.detail = detail
    }
}
