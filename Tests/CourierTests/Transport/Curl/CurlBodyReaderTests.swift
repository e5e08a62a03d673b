#if os(Linux)
import Foundation
import XCTest
@testable import Courier

/// The request body as libcurl reads it, and rewinds it to send it again (a fresh connection after
/// a dead kept-alive one, or a Digest challenge).
final class CurlBodyReaderTests: XCTestCase {
    private func readAll(_ reader: inout CurlBodyReader, chunk: Int = 4) -> [UInt8]? {
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            guard let count = buffer.withUnsafeMutableBytes({ reader.read(into: $0) }) else { return nil }
            if count == 0 { return all }
            all += buffer[..<count]
        }
    }

    /// One read of up to `count` bytes, as libcurl makes one: how many came (0 at the end).
    private func read(_ reader: inout CurlBodyReader, upTo count: Int) -> Int? {
        var buffer = [UInt8](repeating: 0, count: count)
        return buffer.withUnsafeMutableBytes { reader.read(into: $0) }
    }

    func testAMemoryBodyIsReadInChunksAndRewound() throws {
        var reader = CurlBodyReader(data: Data("hello, courier".utf8))
        XCTAssertEqual(readAll(&reader).map { String(decoding: $0, as: UTF8.self) }, "hello, courier")
        XCTAssertTrue(reader.seek(to: 0))
        XCTAssertEqual(readAll(&reader, chunk: 64).map { String(decoding: $0, as: UTF8.self) }, "hello, courier")
        XCTAssertTrue(reader.seek(to: 7))
        XCTAssertEqual(readAll(&reader).map { String(decoding: $0, as: UTF8.self) }, "courier")
        XCTAssertFalse(reader.seek(to: 15), "past the end")
        XCTAssertFalse(reader.seek(to: -1))
    }

    func testAFileBodyIsReadFromDiskAndRewound() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-reader-\(UUID()).bin")
        let bytes = (0..<10_000).map { UInt8($0 % 251) }
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var openError = ""
        var reader = try XCTUnwrap(CurlBodyReader(file: file, openError: &openError))
        XCTAssertEqual(readAll(&reader, chunk: 4096), bytes)
        XCTAssertTrue(reader.seek(to: 0))
        XCTAssertEqual(readAll(&reader, chunk: 4096), bytes)
        reader.close()
        reader.close()   // idempotent
        XCTAssertEqual(readAll(&reader), [], "a closed reader has nothing more")
    }

    func testAFileThatCannotBeOpenedSaysWhy() {
        var openError = ""
        XCTAssertNil(CurlBodyReader(file: URL(fileURLWithPath: "/nonexistent/body.bin"), openError: &openError))
        XCTAssertEqual(openError, "No such file or directory")
    }

    /// The curl loop waits awake for a response head only once the request is all sent
    /// (`CurlExchange.awaitsResponseHead`): a body still being read is not "sent".
    func testABodyIsReadOnlyOnceLibcurlHadItsEndUntilItIsRewound() throws {
        XCTAssertTrue(CurlBodyReader().isRead, "no body")

        var memory = CurlBodyReader(data: Data("hello".utf8))
        XCTAssertFalse(memory.isRead)
        XCTAssertEqual(read(&memory, upTo: 3), 3)
        XCTAssertFalse(memory.isRead, "two bytes left")
        XCTAssertEqual(read(&memory, upTo: 3), 2)
        XCTAssertTrue(memory.isRead)
        XCTAssertTrue(memory.seek(to: 1))
        XCTAssertFalse(memory.isRead, "rewound to be sent again")

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-reader-\(UUID()).bin")
        try Data("hello".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var openError = ""
        var disk = try XCTUnwrap(CurlBodyReader(file: file, openError: &openError))
        XCTAssertEqual(read(&disk, upTo: 3), 3)
        XCTAssertEqual(read(&disk, upTo: 3), 2)
        XCTAssertFalse(disk.isRead, "a file's end is known only when a read finds it")
        XCTAssertEqual(read(&disk, upTo: 3), 0)
        XCTAssertTrue(disk.isRead)
        XCTAssertTrue(disk.seek(to: 0))
        XCTAssertFalse(disk.isRead, "rewound to be sent again")
        disk.close()
    }

    func testNoBodyRewindsOnlyToItsStart() {
        var reader = CurlBodyReader()
        XCTAssertEqual(readAll(&reader), [])
        XCTAssertTrue(reader.seek(to: 0))
        XCTAssertFalse(reader.seek(to: 1))
    }
}
#endif
