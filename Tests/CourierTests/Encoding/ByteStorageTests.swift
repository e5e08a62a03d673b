import Foundation
import XCTest
@testable import Courier

/// `ByteStorage`: bytes written once into storage counted beforehand, then read by range.
final class ByteStorageTests: XCTestCase {
    func testWhatIsWrittenIsReadBackByRange() {
        // Given a text, two fields' lengths and texts, and a body, written into storage of their exact size
        let body = Data([0, 1, 2, 0xFF])
        let storage = ByteStorage(writingAtMost: 3 + 2 + 4 + 5 + 4) { writer in
            writer.write("url")
            writer.writeLengthsAndBytes("Name", "Value")
            writer.write(body)
        }

        // Then every byte is counted, and each piece reads back as it was written
        XCTAssertEqual(storage.count, 18)
        XCTAssertEqual(storage.string(0..<3), "url")
        XCTAssertEqual(storage[3], 4)
        XCTAssertEqual(storage[4], 5)
        XCTAssertEqual(storage.string(5..<9), "Name")
        XCTAssertEqual(storage.string(9..<14), "Value")
        XCTAssertEqual(storage.data(14..<18), body)
        XCTAssertTrue(storage.equals(0..<3, "url"))
        XCTAssertFalse(storage.equals(0..<3, "urn"))
        XCTAssertFalse(storage.equals(0..<3, "url2"))
        XCTAssertTrue(storage.equals(3..<3, ""))
        XCTAssertEqual(storage.data(18..<18), Data())
    }

    func testOnlyWhatIsWrittenIsCounted() {
        // Given storage for 64 bytes of which 5 are written
        let storage = ByteStorage(writingAtMost: 64) { $0.write("hello") }

        // Then it counts 5
        XCTAssertEqual(storage.count, 5)
        XCTAssertEqual(storage.string(0..<storage.count), "hello")
    }

    func testLongLengthsTakeSeveralBytes() {
        // Given a value of 200 bytes, whose length takes two bytes of LEB128
        let value = String(repeating: "v", count: 200)
        let storage = ByteStorage(writingAtMost: 1 + 2 + 1 + 200) { $0.writeLengthsAndBytes("n", value) }

        // Then the lengths read as LEB128 (0xC8 0x01 is 200), then the texts follow
        XCTAssertEqual(storage.count, 204)
        XCTAssertEqual([storage[0], storage[1], storage[2]], [1, 0xC8, 0x01])
        XCTAssertEqual(storage.string(3..<4), "n")
        XCTAssertEqual(storage.string(4..<204), value)
    }

    func testRangesOfOneBlockKeepTheirOwnBytes() {
        // Given a block of 64 bytes, and two storages written into ranges of it
        let block = ByteBlock.make(size: 64, account: nil)
        let first = ByteStorage(in: block, at: 0, writingAtMost: 5) { $0.write("first") }
        let second = ByteStorage(in: block, at: 5, writingAtMost: 59) { $0.write("second") }

        // Then each reads its own bytes, counted from its own start
        XCTAssertEqual(first.count, 5)
        XCTAssertEqual(first.string(0..<5), "first")
        XCTAssertEqual(second.count, 6)
        XCTAssertEqual(second.string(0..<6), "second")
        XCTAssertEqual(second[0], UInt8(ascii: "s"))
        XCTAssertTrue(second.equals(0..<6, "second"))
        XCTAssertEqual(second.data(1..<3), Data("ec".utf8))
    }
}
