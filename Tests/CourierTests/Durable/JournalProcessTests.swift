import Foundation
import XCTest
@testable import Courier

/// A journal held by another process: that process's exclusive lock makes this one's open fail
/// at once with a typed error, rather than both writing one file.
///
/// The other process is this test binary itself, running only the child test below (told the
/// folder through the environment), so that both sides are Courier's journal; on platforms where
/// the test binary cannot be run that way, `JournalRecoveryTests` covers the same rule with a second
/// journal in this process, which SQLite's locks treat alike (its Unix VFS tracks the POSIX locks
/// of every connection to a file in the process, since those locks are per process).
final class JournalProcessTests: JournalTestCase {
    private static let childFolderVariable = "COURIER_JOURNAL_CHILD_FOLDER"
    private static let heldLine = "journal-held"

    /// The child's side of `testAJournalAnotherProcessHoldsFailsAtOnce`: holds a journal with one
    /// request until its standard input closes. Skipped when run on its own.
    func testChildHoldsTheJournalUntilItsInputCloses() throws {
        guard let path = ProcessInfo.processInfo.environment[Self.childFolderVariable] else {
            throw XCTSkip("the child process of testAJournalAnotherProcessHoldsFailsAtOnce")
        }
        let journal = try Journal(folder: URL(fileURLWithPath: path))
        _ = try journal.append(Self.sampleRequest(7, lane: "child"))
        FileHandle.standardOutput.write(Data("\(Self.heldLine)\n".utf8))
        _ = FileHandle.standardInput.readDataToEndOfFile()
        journal.close()
    }

    func testAJournalAnotherProcessHoldsFailsAtOnce() throws {
        #if os(Linux)
        // Given another process holding a journal with one request in this test's folder
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["CourierTests.JournalProcessTests/testChildHoldsTheJournalUntilItsInputCloses"]
        child.environment = ProcessInfo.processInfo.environment.merging([Self.childFolderVariable: folder.path]) { $1 }
        let input = Pipe(), output = Pipe()
        child.standardInput = input
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        let held = DispatchSemaphore(value: 0), exited = DispatchSemaphore(value: 0)
        let received = Locked(Data())
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            let complete = received.withLock { text -> Bool in
                let before = text.range(of: Data(Self.heldLine.utf8)) != nil
                text.append(data)
                return !before && text.range(of: Data(Self.heldLine.utf8)) != nil
            }
            if complete { held.signal() }
            if data.isEmpty { handle.readabilityHandler = nil }
        }
        child.terminationHandler = { _ in exited.signal() }
        try child.run()
        defer {
            if child.isRunning { child.terminate() }
        }
        guard held.wait(timeout: .now() + 60) == .success else {
            return XCTFail("the child did not report holding the journal: \(String(decoding: received.withLock { $0 }, as: UTF8.self))")
        }
        // When this process opens the same journal
        let started = ContinuousClock.now
        let error = openingError()
        // Then it fails at once, as held elsewhere, naming the file and what to do
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1))
        XCTAssertEqual(error?.kind, .heldElsewhere, "\(String(describing: error))")
        XCTAssertEqual(error?.path, databasePath)
        XCTAssertEqual(error?.description.contains("is open in another process or queue"), true)
        // And once the child has closed it and ended, this process opens it and finds the child's request
        try input.fileHandleForWriting.close()
        XCTAssertEqual(exited.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(child.terminationStatus, 0)
        let pending = try openJournal().pending()
        XCTAssertEqual(pending.map(\.request), [Self.sampleRequest(7, lane: "child")])
        #else
        throw XCTSkip("the test binary is run as a child process only on Linux")
        #endif
    }
}
