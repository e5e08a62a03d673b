import Foundation
import CourierSQLite

/// Why a durable request was not accepted, or a durable queue cannot be opened: what went wrong,
/// the journal's file, and what to do about it. Nothing the journal reports an error for was
/// accepted, so nothing is lost silently: the app still holds the request and can tell its user.
///
/// ```swift
/// do {
///     let id = try queue.addDurably(SendMessage(text: "On my way"), lane: "chat-42")
/// } catch {                                   // a JournalError
///     switch error.kind {
///     case .diskFull, .boundsReached: showStorageWarning(error.description)
///     default: log(error)
///     }
/// }
/// ```
public struct JournalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, by what the app can do about it.
    public enum Kind: Sendable, Equatable {
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
        /// The queue has no ``RequestQueueConfiguration/durability``: durable requests need a
        /// journal, which the app names a folder for.
        case notConfigured
        /// The request cannot be journaled as it is: its body is a stream, or its parameters
        /// could not be encoded (``detail`` has the ``RequestError``). Nothing was sent.
        case requestNotJournalable
    }

    /// What went wrong.
    public let kind: Kind
    /// The journal's database file (empty for ``Kind/notConfigured``).
    public let path: String
    /// What SQLite, the file system or the request's encoder said, or which bound was reached.
    public let detail: String

    /// What went wrong, the file, and what to do about it, in a sentence or two.
    public var description: String {
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
        case .notConfigured:
            return "This queue keeps no journal of durable requests (\(detail)). Set RequestQueueConfiguration.durability and open the queue with RequestQueue.open(configuration:delegate:baseURL:)."
        case .requestNotJournalable:
            return "The request cannot be journaled at \(path): \(detail). Nothing was sent; give it a body of bytes or a file, or add it with add(_:) instead."
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
