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

    func testNoBodyRewindsOnlyToItsStart() {
        var reader = CurlBodyReader()
        XCTAssertEqual(readAll(&reader), [])
        XCTAssertTrue(reader.seek(to: 0))
        XCTAssertFalse(reader.seek(to: 1))
    }
}
#endif
