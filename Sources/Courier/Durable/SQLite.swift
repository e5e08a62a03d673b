import CourierSQLite
import Foundation

// The one Swift file that calls SQLite (through the CourierSQLite C target). Everything unsafe
// about it is here: raw connection and statement handles, and the pointers passed in and out.
//
// Why it is safe:
// - SQLite's functions are called only after `SQLiteLibrary.availability` (or `load(named:)`)
//   succeeded: `SQLiteConnection.init` checks it first, and nothing else exists without a
//   connection;
// - a connection and its statements are not thread-safe here and are not `Sendable`: their owner
//   uses them from one thread at a time (the journal keeps its connection behind a lock), so
//   SQLite's own per-connection mutex is not needed (`SQLITE_OPEN_NOMUTEX`) and an error message
//   read right after a failed call belongs to that call;
// - text and blobs are bound with SQLITE_TRANSIENT (in C): SQLite copies the bytes before the
//   binding call returns, so the Swift buffers only have to live for the call, which
//   `withUnsafeBytes`/`withCString` guarantee;
// - column text and blobs are copied into Swift values at once: SQLite's pointers are valid only
//   until the statement steps, resets or is finalized, and none of them escape this file;
// - a statement is finalized before its connection is closed (`SQLiteStatement` holds its
//   connection, and `sqlite3_close_v2` would in any case wait for the last statement), and each
//   handle is freed exactly once, in `deinit` or `close()`.

/// SQLite as loaded at run time: its version, or why the journal cannot be used.
enum SQLiteLibrary {
    /// The version of the system's SQLite ("3.40.1"), or why it cannot be used. Loaded once.
    static let availability: Result<String, SQLiteUnavailable> = load(named: nil)

    /// Loads SQLite from `name` (the platform's default when nil). The first library loaded is the
    /// one used; a later name is only tried, to report whether it loads (tests use a missing one).
    static func load(named name: String?) -> Result<String, SQLiteUnavailable> {
        var reason = [CChar](repeating: 0, count: 512)
        let loaded = reason.withUnsafeMutableBufferPointer { buffer in
            courier_sqlite_load(name, buffer.baseAddress, buffer.count) == 0
        }
        guard loaded else {
            return .failure(SQLiteUnavailable(reason: String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) },
                                                                     as: UTF8.self)))
        }
        return .success(String(cString: courier_sqlite_libversion()))
    }
}

/// Why SQLite cannot be used in this process.
struct SQLiteUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// A failed SQLite call: its result codes, SQLite's message, and the SQL it ran (if any).
struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The primary result code (`SQLITE_FULL`, `SQLITE_BUSY`, …).
    let code: Int32
    /// The extended result code (`SQLITE_IOERR_WRITE`, …), which says more about I/O failures.
    let extendedCode: Int32
    let message: String
    let sql: String?

    init(code: Int32, extendedCode: Int32? = nil, message: String, sql: String?) {
        self.code = code & 0xFF
        self.extendedCode = extendedCode ?? code
        self.message = message
        self.sql = sql
    }

    var description: String {
        let statement = sql.map { " in \"\($0)\"" } ?? ""
        return "SQLite error \(code) (extended \(extendedCode)): \(message)\(statement)"
    }
}

/// A value bound to, or read from, a statement.
enum SQLiteValue: Sendable, Equatable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
    case null
}

/// One connection to a database file. Not thread-safe: one thread at a time (see above).
final class SQLiteConnection {
    struct OpenFlags: OptionSet, Sendable {
        let rawValue: Int32
        static let readOnly = OpenFlags(rawValue: Int32(COURIER_SQLITE_OPEN_READONLY))
        static let readWrite = OpenFlags(rawValue: Int32(COURIER_SQLITE_OPEN_READWRITE))
        static let create = OpenFlags(rawValue: Int32(COURIER_SQLITE_OPEN_CREATE))
    }

    let path: String
    private var handle: OpaquePointer?

    /// Opens `path`. `busyTimeout` is how long a call waits for another connection's lock before
    /// failing with `SQLITE_BUSY` (0: at once). `library` is SQLite's availability (a test seam).
    init(path: String, flags: OpenFlags, busyTimeout: Duration,
         library: Result<String, SQLiteUnavailable> = SQLiteLibrary.availability) throws {
        if case .failure(let unavailable) = library { throw unavailable }
        self.path = path
        var database: OpaquePointer?
        let result = courier_sqlite_open_v2(path, &database, flags.rawValue | Int32(COURIER_SQLITE_OPEN_NOMUTEX), nil)
        guard result == COURIER_SQLITE_OK, let database else {
            // SQLite usually makes a handle even when opening fails; it carries the message and
            // must be closed.
            let message = database.map { String(cString: courier_sqlite_errmsg($0)) } ?? String(cString: courier_sqlite_errstr(result))
            let extended = database.map { courier_sqlite_extended_errcode($0) }
            if let database { courier_sqlite_close_v2(database) }
            throw SQLiteError(code: result, extendedCode: extended, message: message, sql: nil)
        }
        handle = database
        courier_sqlite_extended_result_codes(database, 1)
        let milliseconds = busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        courier_sqlite_busy_timeout(database, Int32(clamping: milliseconds))
    }

    deinit { close() }

    /// Closes the connection (and with it, in exclusive locking mode, its lock on the file).
    func close() {
        guard let handle else { return }
        courier_sqlite_close_v2(handle)
        self.handle = nil
    }

    private func database(_ sql: String?) throws -> OpaquePointer {
        guard let handle else {
            throw SQLiteError(code: Int32(COURIER_SQLITE_MISUSE), message: "the connection is closed", sql: sql)
        }
        return handle
    }

    /// The error of the call that just failed on this connection.
    fileprivate func error(_ code: Int32, sql: String?) -> SQLiteError {
        guard let handle else { return SQLiteError(code: code, message: String(cString: courier_sqlite_errstr(code)), sql: sql) }
        return SQLiteError(code: code, extendedCode: courier_sqlite_extended_errcode(handle),
                           message: String(cString: courier_sqlite_errmsg(handle)), sql: sql)
    }

    /// Runs statements that return no rows (several may be separated by semicolons).
    func execute(_ sql: String) throws {
        let result = courier_sqlite_exec(try database(sql), sql)
        guard result == COURIER_SQLITE_OK else { throw error(result, sql: sql) }
    }

    /// Prepares one statement, to be bound and stepped.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let result = courier_sqlite_prepare_v2(try database(sql), sql, -1, &statement, nil)
        guard result == COURIER_SQLITE_OK, let statement else { throw error(result, sql: sql) }
        return SQLiteStatement(handle: statement, connection: self, sql: sql)
    }

    /// The rows of one statement, each as its columns' values.
    func rows(_ sql: String, _ values: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        let statement = try prepare(sql)
        try statement.bind(values)
        var rows: [[SQLiteValue]] = []
        while try statement.step() {
            rows.append((0..<statement.columnCount).map { statement.value(at: $0) })
        }
        return rows
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// `BEGIN IMMEDIATE` takes the write lock at once, so a commit cannot fail for want of it.
    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try execute("BEGIN IMMEDIATE")
        let result: Result
        do {
            result = try body()
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            // A failed COMMIT may leave the transaction open (SQLITE_BUSY, SQLITE_FULL): end it,
            // so that nothing half-written is committed by a later statement.
            try? execute("ROLLBACK")
            throw error
        }
        return result
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { handle.map { Int(courier_sqlite_changes($0)) } ?? 0 }
    /// The rowid of the last INSERT.
    var lastInsertRowID: Int64 { handle.map { courier_sqlite_last_insert_rowid($0) } ?? 0 }
}

/// A prepared statement of one connection, used on that connection's thread.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection
    let sql: String

    fileprivate init(handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { courier_sqlite_finalize(handle) }

    /// Resets the statement and binds `values` to its parameters 1, 2, ….
    func bind(_ values: [SQLiteValue]) throws {
        courier_sqlite_reset(handle)
        courier_sqlite_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .integer(let integer): result = courier_sqlite_bind_int64(handle, index, integer)
            case .real(let real): result = courier_sqlite_bind_double(handle, index, real)
            case .null: result = courier_sqlite_bind_null(handle, index)
            case .text(let text):
                var text = text
                result = text.withUTF8 { bytes in
                    guard bytes.count <= Int32.max else { return Int32(COURIER_SQLITE_TOOBIG) }
                    return bytes.withMemoryRebound(to: CChar.self) {
                        courier_sqlite_bind_text(handle, index, $0.baseAddress, Int32($0.count))
                    }
                }
            case .blob(let data):
                result = data.withUnsafeBytes { bytes in
                    guard bytes.count <= Int32.max else { return Int32(COURIER_SQLITE_TOOBIG) }
                    return courier_sqlite_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count))
                }
            }
            guard result == COURIER_SQLITE_OK else { throw connection.error(result, sql: sql) }
        }
    }

    /// Steps once: true when a row is ready to read, false when the statement is done.
    @discardableResult
    func step() throws -> Bool {
        let result = courier_sqlite_step(handle)
        switch result {
        case Int32(COURIER_SQLITE_ROW): return true
        case Int32(COURIER_SQLITE_DONE): return false
        default:
            // The error is read before the reset, which would report it again (prepare_v2).
            let error = connection.error(result, sql: sql)
            courier_sqlite_reset(handle)
            throw error
        }
    }

    /// Binds `values` and steps to the end (an INSERT, UPDATE or DELETE).
    func run(_ values: [SQLiteValue]) throws {
        try bind(values)
        while try step() {}
        courier_sqlite_reset(handle)
    }

    var columnCount: Int { Int(courier_sqlite_column_count(handle)) }

    /// The current row's value in `column` (0-based), copied out of SQLite.
    func value(at column: Int) -> SQLiteValue {
        let index = Int32(column)
        switch courier_sqlite_column_type(handle, index) {
        case Int32(COURIER_SQLITE_INTEGER): return .integer(courier_sqlite_column_int64(handle, index))
        case Int32(COURIER_SQLITE_FLOAT): return .real(courier_sqlite_column_double(handle, index))
        case Int32(COURIER_SQLITE3_TEXT):
            guard let text = courier_sqlite_column_text(handle, index) else { return .text("") }
            let count = Int(courier_sqlite_column_bytes(handle, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case Int32(COURIER_SQLITE_BLOB):
            guard let blob = courier_sqlite_column_blob(handle, index) else { return .blob(Data()) }
            return .blob(Data(bytes: blob, count: Int(courier_sqlite_column_bytes(handle, index))))
        default: return .null
        }
    }
}
