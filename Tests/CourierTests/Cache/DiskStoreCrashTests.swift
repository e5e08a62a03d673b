import Foundation
import XCTest
@testable import Courier
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The disk store against other processes: one killed with `SIGKILL` in the middle of its writes,
/// and one that holds the directory.
///
/// The other process is this test binary run again for one test (a "child test"), told by an
/// environment variable what to do. Without the variable, as in an ordinary run of the suite, a
/// child test returns at once and asserts nothing: it exists only to be started by its parent.
final class DiskStoreCrashTests: XCTestCase {
    private var directory: URL!
    private var log: URL!

    /// Tells ``testChildWritesEntriesUntilKilled()`` which directory to write into.
    private static let crashDirectoryVariable = "COURIER_CACHE_CRASH_DIR"
    /// Tells ``testChildHoldsTheDirectoryUntilReleased()`` which directory to hold.
    private static let lockDirectoryVariable = "COURIER_CACHE_LOCK_DIR"
    /// The child's capacity, which its parent opens the directory with too.
    private static let crashCapacity = 100_000
    /// A file the child creates once it has written every variant of every URL.
    private static let roundDoneFileName = "round-done"
    /// The URLs the child writes; each has two variants.
    private static let crashURLs = (0..<150).map { "https://crash.test/item/\($0)" }

    override func setUpWithError() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("courier-crash-\(UUID().uuidString)")
        directory = base.appendingPathComponent("cache")
        log = base.appendingPathComponent("child.log")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory.deletingLastPathComponent())
    }

    // MARK: Killed while writing

    func testSIGKILLWhileWritingLeavesOnlyWholeEntries() throws {
        // Given a child process that writes entries in a loop
        let child = try startChild("testChildWritesEntriesUntilKilled", [Self.crashDirectoryVariable: directory.path])
        defer { stop(child) }
        // When it has written every URL once (six times its capacity: it has been evicting) and
        // at least 25 entries are on disk, it is killed while still writing
        let roundDone = directory.appendingPathComponent(Self.roundDoneFileName).path
        try waitUntil("a round of writes and 25 entry files", child) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: self.directory.path)) ?? []
            return FileManager.default.fileExists(atPath: roundDone) && names.filter { CacheEntryFile.Name(fileName: $0) != nil }.count >= 25
        }
        XCTAssertTrue(child.isRunning, "the child was still writing: \(childLog())")
        XCTAssertEqual(kill(child.processIdentifier, SIGKILL), 0)
        child.waitUntilExit()
        XCTAssertEqual(child.terminationReason, .uncaughtSignal)
        XCTAssertEqual(child.terminationStatus, SIGKILL)

        // Then every file under an entry name is whole already: writes were renamed into place
        for file in try entryFiles() {
            let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(file.name)))
            XCTAssertEqual(CacheEntryFile.decode(bytes)?.name.fileName, file.name, "torn or misnamed before opening")
        }
        // And opening the directory removes the temporary files, and the files fit
        let store = try DiskStore.open(directory: directory, capacity: Self.crashCapacity)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        XCTAssertEqual(names.filter { $0.hasPrefix(CacheEntryFile.temporaryPrefix) }, [])
        let files = try entryFiles()
        XCTAssertGreaterThanOrEqual(files.count, 1)
        XCTAssertEqual(store.size, files.reduce(0) { $0 + $1.size })
        XCTAssertLessThanOrEqual(store.size, Self.crashCapacity)
        // And every entry served is whole: its URL's own body and headers, one per variant
        var served = 0
        for url in Self.crashURLs {
            let responses = store.responses(for: url)
            XCTAssertLessThanOrEqual(responses.count, 2, url)
            for response in responses {
                XCTAssertEqual(response.url, url)
                let key = try XCTUnwrap(response.secondaryKey.first ?? nil, url)
                XCTAssertEqual(response.body, Self.body(for: url, key), url)
                let write = try XCTUnwrap(response.header("X-Write").flatMap(Int.init), url)
                XCTAssertEqual(Self.crashURLs[write % Self.crashURLs.count], url)
                XCTAssertEqual(response.statusCode, 200)
                served += 1
            }
        }
        // And every file left is one that was served: none torn, none mismatched
        store.flush()
        let left = try entryFiles()
        XCTAssertEqual(served, left.count)
        for file in left {
            let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(file.name)))
            XCTAssertEqual(CacheEntryFile.decode(bytes)?.name.fileName, file.name)
        }
    }

    /// The child of ``testSIGKILLWhileWritingLeavesOnlyWholeEntries()``: stores responses with
    /// bodies derived from their URLs into the directory its parent named, flushing every few, says
    /// when it has written every variant of every URL once (with a file `round-done`), and goes on
    /// until it is killed, or at the latest after 60 s or a million responses. Returns at once
    /// without the variable (an ordinary run of the suite).
    func testChildWritesEntriesUntilKilled() throws {
        guard let path = ProcessInfo.processInfo.environment[Self.crashDirectoryVariable] else { return }
        let store = try DiskStore.open(directory: URL(fileURLWithPath: path), capacity: Self.crashCapacity)
        let deadline = Date().addingTimeInterval(60)
        for write in 0..<1_000_000 {
            guard Date() < deadline else { break }
            let url = Self.crashURLs[write % Self.crashURLs.count]
            let key = String(write / Self.crashURLs.count % 2)
            store.store(.sample(url, body: Self.body(for: url, key), headers: ["X-Write": String(write)], secondaryKey: [key]))
            if write % 8 == 7 { store.flush() }
            if write == 2 * Self.crashURLs.count {
                let marker = URL(fileURLWithPath: path).appendingPathComponent(Self.roundDoneFileName)
                _ = FileManager.default.createFile(atPath: marker.path, contents: Data())
            }
        }
        store.flush()
    }

    /// From 500 bytes to about 3.5 KB, different for every URL and variant.
    private static func body(for url: String, _ key: String) -> Data {
        let text = url + "#" + key + ";"
        let length = 500 + Int(XXH64.hash(Array(text.utf8)) % 3_000)
        return Data(String(repeating: text, count: length / text.utf8.count + 1).utf8.prefix(length))
    }

    // MARK: Another process

    func testADirectoryAnotherProcessHoldsCannotBeOpened() throws {
        // Given a child process that holds a store on the directory
        let child = try startChild("testChildHoldsTheDirectoryUntilReleased", [Self.lockDirectoryVariable: directory.path])
        defer { stop(child) }
        let ready = directory.appendingPathComponent("ready")
        try waitUntil("the child's store", child) { FileManager.default.fileExists(atPath: ready.path) }
        // When this process opens the directory
        // Then that fails, naming the directory and saying another process uses it
        XCTAssertThrowsError(try DiskStore.open(directory: directory, capacity: 1000)) { error in
            let path = directory.resolvingSymlinksInPath().path
            XCTAssertEqual(error as? CacheStoreError, .usedByAnotherProcess(path))
            XCTAssertTrue("\(error)".hasPrefix("The cache directory \(path) is in use by another process"), "\(error)")
        }
        // And once the child has ended, opening works
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("release").path, contents: Data())
        child.waitUntilExit()
        XCTAssertEqual(child.terminationStatus, 0, childLog())
        XCTAssertNoThrow(try DiskStore.open(directory: directory, capacity: 1000))
    }

    /// The child of ``testADirectoryAnotherProcessHoldsCannotBeOpened()``: opens a store on the
    /// directory its parent named, says so with a file `ready`, and holds it until a file
    /// `release` appears (60 s at most). Returns at once without the variable.
    func testChildHoldsTheDirectoryUntilReleased() throws {
        guard let path = ProcessInfo.processInfo.environment[Self.lockDirectoryVariable] else { return }
        let directory = URL(fileURLWithPath: path)
        let store = try DiskStore.open(directory: directory, capacity: 1000)
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("ready").path, contents: Data())
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("release").path), Date() < deadline {
            usleep(10_000)
        }
        withExtendedLifetime(store) {}
    }

    // MARK: Helpers

    /// Starts this test binary again for one test of this class, with extra environment, its
    /// output in `log`.
    private func startChild(_ test: String, _ environment: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        #if os(Linux)
        // The test executable itself, which takes the name of the test to run.
        process.arguments = ["CourierTests.DiskStoreCrashTests/\(test)"]
        #else
        // xctest, which takes the test and the bundle (not tried yet on Apple platforms).
        process.arguments = ["-XCTest", "CourierTests.DiskStoreCrashTests/\(test)", Bundle(for: Self.self).bundlePath]
        #endif
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        _ = FileManager.default.createFile(atPath: log.path, contents: Data())
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        try output.close()
        return process
    }

    /// Polls every 5 ms, for 60 s at most, until `condition` holds; fails if the child ended first.
    private func waitUntil(_ what: String, _ child: Process, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(60)
        while !condition() {
            guard child.isRunning else { throw failure("the child ended before \(what)") }
            guard Date() < deadline else { throw failure("no \(what) after 60 s") }
            usleep(5_000)
        }
    }

    private func stop(_ child: Process) {
        if child.isRunning {
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
    }

    private func failure(_ message: String) -> some Error {
        NSError(domain: "DiskStoreCrashTests", code: 1, userInfo: [NSLocalizedDescriptionKey: "\(message); its output: \(childLog())"])
    }

    private func childLog() -> String {
        String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self).suffix(3_000).description
    }

    private func entryFiles() throws -> [(name: String, size: Int)] {
        try CourierTests.entryFiles(in: directory)
    }
}
