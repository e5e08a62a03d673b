import Foundation
import XCTest
@testable import Courier

/// A folder of its own for each journal test, removed afterwards.
class JournalTestCase: XCTestCase {
    var folder: URL!
    private var journals: [Journal] = []

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-journal-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        for journal in journals { journal.close() }
        journals.removeAll()
        try? FileManager.default.removeItem(at: folder)
    }

    var databasePath: String { folder.appendingPathComponent(Journal.fileName).path }

    /// Opens the journal in the test's folder; closed at the end of the test.
    func openJournal(_ configuration: JournalConfiguration = JournalConfiguration(),
                     didQueueAppend: (@Sendable (Int) -> Void)? = nil,
                     willCommitAppends: (@Sendable (Int) -> Void)? = nil) throws -> Journal {
        let journal = try Journal(folder: folder, configuration: configuration, didQueueAppend: didQueueAppend,
                                  willCommitAppends: willCommitAppends)
        journals.append(journal)
        return journal
    }

    /// The error opening the journal throws, failing the test when it opens.
    func openingError(_ configuration: JournalConfiguration = JournalConfiguration(),
                      file: StaticString = #filePath, line: UInt = #line) -> JournalError? {
        do {
            let journal = try openJournal(configuration)
            XCTFail("the journal opened", file: file, line: line)
            journal.close()
            return nil
        } catch {
            return error as? JournalError
        }
    }

    /// A request with every field set: a lane, ordered header fields (one name twice), a body.
    static func sampleRequest(_ index: Int, lane: String? = "document-1", body: JournalBody? = nil) -> JournalRequest {
        JournalRequest(lane: lane, method: "POST", url: URL(string: "https://api.example.com/messages/\(index)?q=%C3%A9")!,
                       headerFields: [HTTPField(name: "Content-Type", value: "application/json"),
                                      HTTPField(name: "X-Tag", value: "b"), HTTPField(name: "X-Tag", value: "a ü")],
                       body: body ?? .bytes(Data("{\"index\":\(index)}".utf8)), responseType: "Message")
    }

    /// A date on a whole millisecond, as the journal stores times.
    func date(_ milliseconds: Int64) -> Date { Date(journalMilliseconds: milliseconds) }

    /// Makes `folder` read-only: by its mode, or (for root, whom modes do not stop) by the
    /// immutable attribute; nil when neither stops this process from writing there.
    func makeReadOnly(_ folder: URL) throws -> (() -> Void)? {
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder.path)
        let restoreMode = { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path) }
        if !FileManager.default.createFile(atPath: folder.appendingPathComponent("probe").path, contents: nil) { return { _ = restoreMode() } }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("probe"))
        #if os(Linux)
        if run("/usr/bin/chattr", "+i", folder.path) == 0 {
            return {
                _ = self.run("/usr/bin/chattr", "-i", folder.path)
                _ = restoreMode()
            }
        }
        #endif
        _ = restoreMode()
        return nil
    }

    func run(_ executable: String, _ arguments: String...) -> Int32 {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return -1 }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
