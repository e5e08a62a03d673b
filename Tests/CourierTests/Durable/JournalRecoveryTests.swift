import Foundation
import XCTest
@testable import Courier

/// Bad files and bad disks: a damaged journal, a file that is not one, a read-only folder, a full
/// disk, a journal held elsewhere and SQLite missing each give a typed error naming the file and
/// what to do; nothing is ever replayed from a damaged file.
final class JournalRecoveryTests: JournalTestCase {
    /// The journal's file, as a closed journal with 200 requests (1 KiB bodies) left it.
    private func writeJournalOf200Requests() throws -> Data {
        let journal = try openJournal()
        for index in 0..<200 {
            _ = try journal.append(Self.sampleRequest(index, body: .bytes(Data(repeating: UInt8(index % 200) + 32, count: 1024))))
        }
        journal.close()
        // Closing checkpointed the write-ahead log into the file and removed it.
        XCTAssertFalse(FileManager.default.fileExists(atPath: databasePath + "-wal"))
        return try Data(contentsOf: URL(fileURLWithPath: databasePath))
    }

    private func replaceFile(with data: Data) throws {
        try data.write(to: URL(fileURLWithPath: databasePath))
    }

    // MARK: Damage

    func testAFileCutShortIsReportedAtOpen() throws {
        // Given a journal's file
        let intact = try writeJournalOf200Requests()
        XCTAssertEqual(intact.count % 4096, 0)
        for length in [50, 4096, 3 * 4096 + 100, intact.count / 2, intact.count - 4096] {
            // When it is cut short and opened
            try replaceFile(with: intact.prefix(length))
            let error = openingError()
            // Then opening fails as damage, naming the file
            XCTAssertEqual(error?.kind, .corrupt, "cut at \(length): \(String(describing: error))")
            XCTAssertEqual(error?.path, databasePath)
        }
    }

    func testOverwrittenBytesAreReportedAtOpenOrRead() throws {
        // Given a journal's file
        let intact = try writeJournalOf200Requests()
        var cases: [(String, Data)] = []
        var header = intact
        header.replaceSubrange(0..<16, with: Data("Not a journal!!\0".utf8))
        cases.append(("the header's magic", header))
        var pageSize = intact
        pageSize.replaceSubrange(16..<18, with: [0x12, 0x34])
        cases.append(("the page size", pageSize))
        var pageHeader = intact
        pageHeader.replaceSubrange(4 * 4096..<(4 * 4096 + 12), with: Data(repeating: 0xFF, count: 12))
        cases.append(("a page's header", pageHeader))
        var pointers = intact
        pointers.replaceSubrange(2 * 4096 + 8..<(2 * 4096 + 40), with: Data(repeating: 0x7F, count: 32))
        cases.append(("a page's cell pointers", pointers))
        for (what, damaged) in cases {
            // When those bytes are overwritten and the journal opened
            try replaceFile(with: damaged)
            let error = openingError()
            // Then opening fails as damage
            XCTAssertEqual(error?.kind, .corrupt, "\(what): \(String(describing: error))")
        }
    }

    func testAFlippedByteInAValueIsReportedWhenTheRowIsRead() throws {
        // Given a journal's file, and in it one request's URL
        let intact = try writeJournalOf200Requests()
        let url = Data("https://api.example.com/messages/123?".utf8)
        let offset = try XCTUnwrap(intact.range(of: url)).lowerBound
        // When a byte of that URL is changed (SQLite's pages stay well-formed) and the journal opened
        var damaged = intact
        damaged[offset + url.count - 2] = UInt8(ascii: "4")
        try replaceFile(with: damaged)
        let journal = try openJournal()
        // Then reading the requests fails as damage, rather than sending /messages/124
        XCTAssertThrowsError(try journal.pending()) { error in
            XCTAssertEqual((error as? JournalError)?.kind, .corrupt)
            XCTAssertTrue((error as? JournalError)?.detail.hasSuffix("fails its checksum") == true, "\(error)")
        }
    }

    func testAFileThatIsNotADatabaseIsReportedAndLeftAlone() throws {
        // Given a text file where the journal's file should be
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let text = Data(String(repeating: "These are the app's notes, not a journal.\n", count: 200).utf8)
        try replaceFile(with: text)
        // When the journal is opened
        let error = openingError()
        // Then it fails as not a journal, saying what to do, and the file is unchanged
        XCTAssertEqual(error?.kind, .corrupt)
        XCTAssertEqual(error?.description, """
            The durable journal at \(databasePath) is damaged or not a journal (SQLite error 26 (extended 26): \
            file is not a database in "PRAGMA journal_mode=WAL"); nothing was replayed from it. Move it aside (its \
            requests are lost) and open the folder again.
            """)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: databasePath)), text)
    }

    func testAnotherProgramsDatabaseIsNotTakenForAJournal() throws {
        // Given another program's SQLite database where the journal's file should be
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let other = try SQLiteConnection(path: databasePath, flags: [.readWrite, .create], busyTimeout: .zero)
        try other.execute("CREATE TABLE notes (text); INSERT INTO notes VALUES ('keep me')")
        other.close()
        // When the journal is opened
        let error = openingError()
        // Then it fails as not a journal, and the database is unchanged
        XCTAssertEqual(error?.kind, .corrupt)
        XCTAssertEqual(error?.detail, "an SQLite database of another program (application_id 0, 1 tables and indexes)")
        let reopened = try SQLiteConnection(path: databasePath, flags: [.readOnly], busyTimeout: .zero)
        XCTAssertEqual(try reopened.rows("SELECT text FROM notes"), [[.text("keep me")]])
        XCTAssertEqual(try reopened.rows("PRAGMA user_version"), [[.integer(0)]])
    }

    func testAJournalOfANewerSchemaIsNotRead() throws {
        // Given a journal whose schema version is 3
        var journal: Journal? = try openJournal()
        _ = try journal!.append(Self.sampleRequest(1))
        journal!.close()
        journal = nil
        let connection = try SQLiteConnection(path: databasePath, flags: [.readWrite], busyTimeout: .zero)
        try connection.execute("PRAGMA user_version = 3")
        connection.close()
        // When it is opened
        let error = openingError()
        // Then it fails, naming the version
        XCTAssertEqual(error?.kind, .newerSchema(3))
        XCTAssertEqual(error?.detail, "this Courier reads version 2")
    }

    func testAJournalOfVersion1GainsTheIndexOfKeysAndKeepsItsRequests() throws {
        // Given a journal of version 1 (no index of keys) with a pending request
        var journal: Journal? = try openJournal()
        let entry = try journal!.append(Self.sampleRequest(1))
        journal!.close()
        journal = nil
        let connection = try SQLiteConnection(path: databasePath, flags: [.readWrite], busyTimeout: .zero)
        try connection.execute("DROP INDEX requests_by_key; PRAGMA user_version = 1")
        connection.close()

        // When it is opened
        let reopened = try openJournal()

        // Then its request is there, and the file is version 2 with the index
        XCTAssertEqual(try reopened.pending().map(\.requestID), [entry.requestID])
        reopened.close()
        let check = try SQLiteConnection(path: databasePath, flags: [.readOnly], busyTimeout: .zero)
        defer { check.close() }
        XCTAssertEqual(try check.rows("PRAGMA user_version"), [[.integer(2)]])
        XCTAssertEqual(try check.rows("SELECT name FROM sqlite_master WHERE name = 'requests_by_key'"), [[.text("requests_by_key")]])
    }

    // MARK: Bad disks

    func testAReadOnlyFolderIsReported() throws {
        // Given a journal with one request, in a folder then made read-only
        var journal: Journal? = try openJournal()
        let entry = try journal!.append(Self.sampleRequest(1))
        journal!.close()
        journal = nil
        guard let restore = try makeReadOnly(folder) else { throw XCTSkip("cannot make a folder read-only for this user") }
        defer { restore() }
        // When the journal is opened
        let error = openingError()
        // Then it fails as read-only, naming the file
        XCTAssertEqual(error?.kind, .readOnly, "\(String(describing: error))")
        XCTAssertEqual(error?.path, databasePath)
        // And once the folder is writable again, the request is there
        restore()
        XCTAssertEqual(try openJournal().pending(), [entry])
    }

    func testANewJournalInAReadOnlyFolderIsReported() throws {
        // Given an empty read-only folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard let restore = try makeReadOnly(folder) else { throw XCTSkip("cannot make a folder read-only for this user") }
        defer { restore() }
        // When a journal is opened there
        let error = openingError()
        // Then it fails as read-only
        XCTAssertEqual(error?.kind, .readOnly, "\(String(describing: error))")
    }

    func testAFullDiskFailsTheAppendAndKeepsWhatWasCommitted() throws {
        // Given a journal whose file may not grow past 12 pages (a full disk)
        var configuration = JournalConfiguration()
        configuration.maximumPageCount = 12
        var journal: Journal? = try openJournal(configuration)
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("courier-journal-body-\(UUID().uuidString)")
        try Data(repeating: 7, count: 100).write(to: source)
        defer { try? FileManager.default.removeItem(at: source) }
        var accepted: [JournalEntry] = []
        var failures: [JournalError] = []
        // When requests of 2 KiB are added until one fails, then requests with a body file until one fails
        for body in [JournalBody.bytes(Data(repeating: 1, count: 2048)), .file(source)] {
            for index in 0..<100 {
                do {
                    accepted.append(try journal!.append(Self.sampleRequest(index, body: body)))
                } catch {
                    failures.append(error)
                    break
                }
            }
        }
        // Then each failure says the disk is full, naming the file and what to do
        XCTAssertEqual(failures.map(\.kind), [.diskFull, .diskFull])
        XCTAssertEqual(failures.first?.description.hasPrefix("The durable journal at \(databasePath) cannot be written: the disk is full"),
                       true)
        // And the refused body's copy is gone, and after a reopen exactly the accepted requests are there
        let copies = accepted.compactMap { entry -> String? in
            if case .file(let copy) = entry.request.body { return copy.lastPathComponent } else { return nil }
        }
        XCTAssertGreaterThan(copies.count, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("bodies").path).sorted(),
                       copies.sorted())
        journal!.close()
        journal = try openJournal()
        XCTAssertEqual(try journal!.pending(), accepted)
        XCTAssertEqual(journal!.usage.pendingRequests, accepted.count)
    }

    // MARK: Held elsewhere

    func testASecondJournalOnTheSameFolderFailsAtOnce() throws {
        // Given an open journal with one request
        let first = try openJournal()
        let entry = try first.append(Self.sampleRequest(1))
        // When a second journal is opened on the same folder
        let started = ContinuousClock.now
        let error = openingError()
        // Then it fails at once (no waiting for the lock) as held elsewhere
        XCTAssertEqual(error?.kind, .heldElsewhere, "\(String(describing: error))")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1))
        // And once the first is closed, the second opens and finds the request
        first.close()
        XCTAssertEqual(try openJournal().pending(), [entry])
    }

    func testMissingSQLiteIsATypedError() {
        // Given a SQLite library that cannot be loaded
        let library = SQLiteLibrary.load(named: "libcourier-no-such-sqlite.so.0")
        // When a journal is opened with it
        XCTAssertThrowsError(try Journal(folder: folder, library: library)) { error in
            // Then it fails as SQLite unavailable, saying which library
            XCTAssertEqual((error as? JournalError)?.kind, .sqliteUnavailable)
            XCTAssertEqual((error as? JournalError)?.detail.hasPrefix("cannot open libcourier-no-such-sqlite.so.0: "), true,
                           "\(error)")
        }
        // And the system's SQLite is still the one in use
        XCTAssertEqual(try SQLiteLibrary.availability.get().hasPrefix("3."), true)
    }
}
