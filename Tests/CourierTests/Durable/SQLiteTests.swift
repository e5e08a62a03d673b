import Foundation
import XCTest
@testable import Courier

/// The SQLite wrapper: values bound and read back exactly, errors with their codes, message and
/// SQL, transactions that roll back when their body throws.
final class SQLiteTests: JournalTestCase {
    private func connection() throws -> SQLiteConnection {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try SQLiteConnection(path: databasePath, flags: [.readWrite, .create], busyTimeout: .milliseconds(100))
    }

    func testEveryKindOfValueReadsBackExactly() throws {
        // Given a table of untyped columns
        let database = try connection()
        try database.execute("CREATE TABLE t (a, b, c, d, e, f, g, h)")
        // When edge values of every kind are inserted: an empty blob and an empty text (not NULL),
        // the extreme integers, a negative real, text in several scripts with a NUL inside
        let values: [SQLiteValue] = [.blob(Data()), .text(""), .integer(.min), .integer(.max), .real(-0.125),
                                     .text("日本語 — ελληνικά 🚀 a\u{0}b"), .blob(Data([0, 1, 0xFF])), .null]
        try database.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(values)
        // Then they read back equal, each of its kind
        XCTAssertEqual(try database.rows("SELECT * FROM t"), [values])
        XCTAssertEqual(try database.rows("SELECT typeof(a), typeof(b), typeof(h) FROM t"), [[.text("blob"), .text("text"), .text("null")]])
        XCTAssertEqual(database.lastInsertRowID, 1)
        XCTAssertEqual(database.changes, 1)
    }

    func testAFailedStatementReportsItsCodesMessageAndSQL() throws {
        // Given a table with a unique column holding 1
        let database = try connection()
        try database.execute("CREATE TABLE t (x UNIQUE); INSERT INTO t VALUES (1)")
        // When 1 is inserted again
        XCTAssertThrowsError(try database.prepare("INSERT INTO t VALUES (?)").run([.integer(1)])) { error in
            // Then the error is SQLITE_CONSTRAINT, extended SQLITE_CONSTRAINT_UNIQUE (2067), with SQLite's message and the SQL
            XCTAssertEqual(error as? SQLiteError, SQLiteError(code: 19, extendedCode: 2067, message: "UNIQUE constraint failed: t.x",
                                                              sql: "INSERT INTO t VALUES (?)"))
        }
        // And SQL that does not parse names itself
        XCTAssertThrowsError(try database.prepare("SELEKT 1")) { error in
            XCTAssertEqual(error as? SQLiteError, SQLiteError(code: 1, message: "near \"SELEKT\": syntax error", sql: "SELEKT 1"))
        }
    }

    func testATransactionRollsBackWhenItsBodyThrows() throws {
        // Given a table with one row
        let database = try connection()
        try database.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        struct Stop: Error {}
        // When a transaction inserts a row and then throws
        XCTAssertThrowsError(try database.transaction {
            try database.execute("INSERT INTO t VALUES (2)")
            throw Stop()
        })
        // Then only the first row is there, and a later transaction commits
        XCTAssertEqual(try database.rows("SELECT x FROM t"), [[.integer(1)]])
        try database.transaction { try database.execute("INSERT INTO t VALUES (3)") }
        XCTAssertEqual(try database.rows("SELECT x FROM t ORDER BY x"), [[.integer(1)], [.integer(3)]])
    }

    func testAClosedConnectionFailsInsteadOfCrashing() throws {
        // Given a closed connection
        let database = try connection()
        database.close()
        // When it is used
        XCTAssertThrowsError(try database.execute("SELECT 1")) { error in
            // Then it throws SQLITE_MISUSE
            XCTAssertEqual(error as? SQLiteError, SQLiteError(code: 21, message: "the connection is closed", sql: "SELECT 1"))
        }
    }
}
