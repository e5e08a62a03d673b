import Foundation
import XCTest
@testable import Courier

/// Where partial data lives, its record, and when it can be continued.
final class PartialDownloadTests: XCTestCase {
    private var folder: URL!
    private let source = URL(string: "https://files.example.com/big.iso")!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-partial-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func testTheDataAndItsRecordAreHiddenFilesNextToTheDestination() {
        let partial = PartialDownload(destination: folder.appendingPathComponent("big.iso"))
        XCTAssertEqual(partial.dataFile, folder.appendingPathComponent(".big.iso.courier-partial"))
        XCTAssertEqual(partial.recordFile, folder.appendingPathComponent(".big.iso.courier-partial.json"))
    }

    func testTheRecordIsSmallJSON() throws {
        // Given a record of 4096 bytes of version "v1"
        let partial = PartialDownload(destination: folder.appendingPathComponent("big.iso"))

        // When it is written
        XCTAssertTrue(partial.write(PartialDownload.Record(url: source.absoluteString, validator: .entityTag("\"v1\""), bytes: 4096)))

        // Then the file is this JSON, and reads back the same
        XCTAssertEqual(try String(contentsOf: partial.recordFile, encoding: .utf8),
                       #"{"bytes":4096,"entityTag":"\"v1\"","url":"https://files.example.com/big.iso"}"#)
        XCTAssertEqual(partial.readRecord(), PartialDownload.Record(url: source.absoluteString, validator: .entityTag("\"v1\""), bytes: 4096))
    }

    func testDataWithAMatchingRecordCanBeContinued() throws {
        let partial = PartialDownload(destination: folder.appendingPathComponent("big.iso"))
        try Data(count: 4096).write(to: partial.dataFile)
        partial.write(PartialDownload.Record(url: source.absoluteString, validator: .lastModified("Sun, 06 Nov 1994 08:49:37 GMT"),
                                             bytes: 4096))
        let point = try XCTUnwrap(partial.resumePoint(for: source))
        XCTAssertEqual(point.offset, 4096)
        XCTAssertEqual(point.validator, .lastModified("Sun, 06 Nov 1994 08:49:37 GMT"))
    }

    func testARecordWithoutAByteCountTakesTheDataSize() throws {
        // A process that ended mid-download leaves the record it wrote when the body started
        let partial = PartialDownload(destination: folder.appendingPathComponent("big.iso"))
        try Data(count: 777).write(to: partial.dataFile)
        partial.write(PartialDownload.Record(url: source.absoluteString, validator: .entityTag("\"v1\"")))
        XCTAssertEqual(partial.resumePoint(for: source)?.offset, 777)
    }

    func testDataIsNotContinuedWhenAnythingDisagrees() throws {
        let partial = PartialDownload(destination: folder.appendingPathComponent("big.iso"))
        let record = PartialDownload.Record(url: source.absoluteString, validator: .entityTag("\"v1\""), bytes: 4096)

        // No data, no record
        XCTAssertNil(partial.resumePoint(for: source))
        partial.write(record)
        XCTAssertNil(partial.resumePoint(for: source), "a record without data")
        try Data(count: 4096).write(to: partial.dataFile)
        XCTAssertNotNil(partial.resumePoint(for: source))

        // Another URL
        XCTAssertNil(partial.resumePoint(for: URL(string: "https://files.example.com/other.iso")!))
        XCTAssertNil(partial.resumePoint(for: nil))

        // Data whose size is not the record's
        try Data(count: 4000).write(to: partial.dataFile)
        XCTAssertNil(partial.resumePoint(for: source))

        // Empty data
        try Data().write(to: partial.dataFile)
        partial.write(PartialDownload.Record(url: source.absoluteString, validator: .entityTag("\"v1\""), bytes: 0))
        XCTAssertNil(partial.resumePoint(for: source))

        // A record that is not JSON, or whose validator could inject a header
        try Data(count: 10).write(to: partial.dataFile)
        try Data("not json".utf8).write(to: partial.recordFile)
        XCTAssertNil(partial.resumePoint(for: source))
        partial.write(PartialDownload.Record(url: source.absoluteString, validator: .entityTag("\"v1\"\r\nX-Evil: 1"), bytes: 10))
        XCTAssertNil(partial.resumePoint(for: source))
    }

    func testDataBehindASymbolicLinkIsNeitherContinuedNorOpened() throws {
        // Given a symbolic link where the data file goes
        let partial = PartialDownload(destination: folder.appendingPathComponent("big.iso"))
        let elsewhere = folder.appendingPathComponent("elsewhere")
        try Data(count: 10).write(to: elsewhere)
        try FileManager.default.createSymbolicLink(at: partial.dataFile, withDestinationURL: elsewhere)
        partial.write(PartialDownload.Record(url: source.absoluteString, validator: .entityTag("\"v1\""), bytes: 10))

        // Then it is not data to continue, and it is not opened for writing
        XCTAssertNil(partial.resumePoint(for: source))
        guard case .failure(.system(let code)) = partial.openLocked() else { return XCTFail("opened a symbolic link") }
        XCTAssertEqual(code, ELOOP)
    }

    func testALockedDataFileIsNeitherOpenedAgainNorRemoved() throws {
        // Given data that one download holds
        let partial = PartialDownload(destination: folder.appendingPathComponent("big.iso"))
        guard case .success(let held) = partial.openLocked() else { return XCTFail("not opened") }
        partial.write(PartialDownload.Record(url: source.absoluteString, validator: .entityTag("\"v1\"")))

        // Then another cannot open it, nor remove it
        guard case .failure(.locked) = partial.openLocked() else { return XCTFail("opened twice") }
        partial.removeUnlessLocked()
        XCTAssertTrue(FileManager.default.fileExists(atPath: partial.dataFile.path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: partial.recordFile.path))

        // And once it is let go, it can be removed
        close(held)
        partial.removeUnlessLocked()
        XCTAssertFalse(FileManager.default.fileExists(atPath: partial.dataFile.path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: partial.recordFile.path))
    }
}
