import Foundation
import XCTest
@testable import Courier

/// A journal that lost its file: an empty or missing database where a journal was created is
/// reported, never taken for a new journal (its pending requests would vanish without a word).
final class JournalMarkTests: JournalTestCase {
    private var markPath: String { folder.appendingPathComponent(JournalSchema.markName).path }

    func testANewJournalLeavesItsMark() throws {
        // When a journal is created
        try openJournal().close()

        // Then its mark beside it says when
        let mark = try String(contentsOfFile: markPath, encoding: .utf8)
        XCTAssertNotNil(ISO8601DateFormatter().date(from: mark.trimmingCharacters(in: .whitespacesAndNewlines)), mark)
    }

    func testAJournalFileCutToNothingOrGoneIsReportedNotStartedAfresh() throws {
        // Given a journal with a pending request, closed
        let journal = try openJournal()
        _ = try journal.append(Self.sampleRequest(1, body: JournalBody.none))
        journal.close()

        for damage in ["cut to 0 bytes", "deleted"] {
            // When its file is cut to nothing, or deleted, and the journal opened
            if damage == "deleted" {
                try FileManager.default.removeItem(atPath: databasePath)
            } else {
                try Data().write(to: URL(fileURLWithPath: databasePath))
            }
            let error = openingError()

            // Then opening fails as damage, saying what was lost and what to do
            XCTAssertEqual(error?.kind, .corrupt, damage)
            XCTAssertEqual(error?.path, databasePath)
            XCTAssertTrue(error?.detail.contains("a journal was created here at") ?? false, "\(damage): \(String(describing: error))")
            XCTAssertTrue(error?.detail.contains("Delete the folder, or that mark, to start a new journal") ?? false, damage)
        }

        // And once the app deletes the mark, a new journal starts, empty
        try FileManager.default.removeItem(atPath: markPath)
        let fresh = try openJournal()
        XCTAssertEqual(try fresh.pending().count, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: markPath))
    }

    func testAJournalFromBeforeTheMarkIsMarkedAtItsNextOpening() throws {
        // Given a journal whose mark is missing (written by a Courier without marks)
        try openJournal().close()
        try FileManager.default.removeItem(atPath: markPath)

        // When it opens again
        try openJournal().close()

        // Then it has its mark
        XCTAssertTrue(FileManager.default.fileExists(atPath: markPath))
    }
}
