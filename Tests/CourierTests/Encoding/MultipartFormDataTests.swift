import Foundation
import XCTest
@testable import Courier

private struct Profile: URLEncodedBodyData {
    let name: String
    let tags: [String]
    let age: Int?
}

class MultipartFormDataTests: XCTestCase {
    private var temporaryFiles: [URL] = []

    override func tearDown() {
        for url in temporaryFiles { try? FileManager.default.removeItem(at: url) }
        temporaryFiles = []
        super.tearDown()
    }

    private func makeFile(named name: String, bytes: Data) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        temporaryFiles.append(directory)
        let url = directory.appendingPathComponent(name)
        try bytes.write(to: url)
        return url
    }

    private func body(_ form: MultipartFormData) throws -> String {
        String(decoding: try form.encode(), as: UTF8.self)
    }

    func testExactBytesOfTextAndDataParts() throws {
        // Given a form with a fixed boundary, a text field and a data part
        let form = MultipartFormData(boundary: "B")
        form.append(value: "Holiday", withName: "title")
        form.append(data: Data("PNG".utf8), withName: "thumb", fileName: "t.png")

        // When encoded
        // Then every byte follows RFC 7578 with CRLF line breaks
        XCTAssertEqual(try body(form),
                       "--B\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n" +
                       "--B\r\nContent-Disposition: form-data; name=\"thumb\"; filename=\"t.png\"\r\nContent-Type: image/png\r\n\r\nPNG\r\n" +
                       "--B--\r\n")
        XCTAssertEqual(form.contentType, "multipart/form-data; boundary=B")
        XCTAssertEqual(try form.contentLength, Int64(try form.encode().count))
    }

    func testRandomBoundariesAreLowercaseHex() {
        // Given two forms with random boundaries
        let first = MultipartFormData().boundary, second = MultipartFormData().boundary

        // Then each is courier- and 32 lowercase hexadecimal digits, and they differ
        for boundary in [first, second] {
            XCTAssertTrue(boundary.hasPrefix("courier-"), boundary)
            let digits = boundary.utf8.dropFirst("courier-".utf8.count)
            XCTAssertEqual(digits.count, 32, boundary)
            XCTAssertTrue(digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }, boundary)
        }
        XCTAssertNotEqual(first, second)
    }

    func testEmptyForm() throws {
        // Given a form with no parts
        // When encoded
        // Then only the closing boundary is written
        XCTAssertEqual(try body(MultipartFormData(boundary: "B")), "--B--\r\n")
    }

    func testExplicitMimeTypeAndDataWithoutFileName() throws {
        // Given a data part without file name and one with an explicit type
        let form = MultipartFormData(boundary: "B")
        form.append(data: Data([0xFF]), withName: "raw")
        form.append(data: Data("{}".utf8), withName: "meta", fileName: "m.bin", mimeType: "application/json")

        // When encoded
        // Then the first is application/octet-stream and the second keeps its type
        let expected = Data("--B\r\nContent-Disposition: form-data; name=\"raw\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8) + Data([0xFF]) +
            Data("\r\n--B\r\nContent-Disposition: form-data; name=\"meta\"; filename=\"m.bin\"\r\nContent-Type: application/json\r\n\r\n{}\r\n--B--\r\n".utf8)
        XCTAssertEqual(try form.encode(), expected)
    }

    func testHeaderValuesAreEscapedSoNoPartCanBeForged() throws {
        // Given names and file names with quotes, CR and LF, and a content type with a line break
        let form = MultipartFormData(boundary: "B")
        form.append(value: "v", withName: "a\"b\r\nContent-Type: evil")
        form.append(data: Data(), withName: "f", fileName: "x\".png\r\n--B", mimeType: "text/plain\r\nX-Evil: 1")

        // When encoded
        // Then quotes and line breaks are %22, %0D and %0A, and the type loses its line break
        XCTAssertEqual(try body(form),
                       "--B\r\nContent-Disposition: form-data; name=\"a%22b%0D%0AContent-Type: evil\"\r\n\r\nv\r\n" +
                       "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x%22.png%0D%0A--B\"\r\nContent-Type: text/plainX-Evil: 1\r\n\r\n\r\n" +
                       "--B--\r\n")
    }

    func testNonASCIINamesAreUTF8() throws {
        // Given non-ASCII names
        let form = MultipartFormData(boundary: "B")
        form.append(data: Data("x".utf8), withName: "résumé", fileName: "café 中文.pdf")

        // When encoded
        // Then they go through as UTF-8, and the type is guessed from the extension
        XCTAssertEqual(try body(form),
                       "--B\r\nContent-Disposition: form-data; name=\"résumé\"; filename=\"café 中文.pdf\"\r\nContent-Type: application/pdf\r\n\r\nx\r\n--B--\r\n")
    }

    func testMimeTypeGuesses() {
        // Given common file names
        let names = ["a.png", "b.JPG", "c.jpeg", "d.gif", "e.webp", "f.pdf", "g.json", "h.txt", "i.html", "j.csv", "k.mp4", "l.mov", "m.mp3", "n.zip", "noextension", "o.unknown"]
        // When guessed
        // Then each gets its type, unknown ones application/octet-stream
        XCTAssertEqual(names.map(MIMEType.guess(forFileName:)), [
            "image/png", "image/jpeg", "image/jpeg", "image/gif", "image/webp", "application/pdf", "application/json", "text/plain",
            "text/html", "text/csv", "video/mp4", "video/quicktime", "audio/mpeg", "application/zip", "application/octet-stream", "application/octet-stream",
        ])
    }

    func testRandomBoundary() {
        // Given two new forms
        let first = MultipartFormData()
        let second = MultipartFormData()
        // When their boundaries are read
        // Then each is courier- and 32 hexadecimal digits, and they differ
        for form in [first, second] {
            XCTAssertTrue(form.boundary.hasPrefix("courier-"))
            XCTAssertEqual(form.boundary.count, 40)
            XCTAssertTrue(form.boundary.dropFirst(8).allSatisfy(\.isHexDigit))
        }
        XCTAssertNotEqual(first.boundary, second.boundary)
    }

    func testSerializableParametersBecomeFields() throws {
        // Given parameters appended under a name and at the top level
        let form = MultipartFormData(boundary: "B")
        try form.append(parameters: Profile(name: "Ada L", tags: ["a", "b&c"], age: nil), withName: "user")
        try form.append(parameters: Profile(name: "x", tags: [], age: 3))

        // When encoded
        // Then each value is a field named with unescaped brackets, values unescaped
        func field(_ name: String, _ value: String) -> String {
            "--B\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        XCTAssertEqual(try body(form),
                       field("user[name]", "Ada L") + field("user[tags][]", "a") + field("user[tags][]", "b&c") +
                       field("name", "x") + field("age", "3") + "--B--\r\n")
    }

    func testParametersErrorNamesThePrefixedKeyPath() {
        // Given parameters that cannot be encoded
        struct Bad: URLEncodedBodyData { let score: [Int: Int] }
        let form = MultipartFormData(boundary: "B")
        // When appended
        // Then the error's key path starts with the form name, and nothing is appended
        assertInvalidParameters(try form.append(parameters: Bad(score: [1: 1]), withName: "user"), keyPath: "user.score", reasonContains: "String")
        XCTAssertEqual(try body(form), "--B--\r\n")
    }

    func testSmallFormIsSentFromMemory() throws {
        // Given a form with a small file
        let file = try makeFile(named: "small.txt", bytes: Data("hello".utf8))
        let form = MultipartFormData(boundary: "B")
        form.append(fileURL: file, withName: "doc")

        // When its body source is made
        let source = try form.makeBodySource()

        // Then it is in memory and the file name and type come from the URL
        guard case .data(let data) = source else { return XCTFail("expected data, got \(source)") }
        XCTAssertEqual(String(decoding: data, as: UTF8.self),
                       "--B\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"small.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--B--\r\n")
    }

    func testLargeFileIsStreamedToATemporaryFile() throws {
        // Given a 3 MiB file of patterned bytes, plus a text field
        let size = 3 * 1024 * 1024 + 17
        let content = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        let file = try makeFile(named: "video.mp4", bytes: content)
        let form = MultipartFormData(boundary: "B")
        form.append(value: "Holiday", withName: "title")
        form.append(fileURL: file, withName: "video", fileName: "clip.mp4")

        // When its body source is made
        let source = try form.makeBodySource()

        // Then the body is a temporary file whose size is contentLength and whose bytes are exact
        guard case .file(let url, let isTemporary) = source else { return XCTFail("expected a file, got \(source)") }
        temporaryFiles.append(url)
        XCTAssertTrue(isTemporary)
        let written = try Data(contentsOf: url)
        XCTAssertEqual(Int64(written.count), try form.contentLength)
        let head = Data(("--B\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n" +
                         "--B\r\nContent-Disposition: form-data; name=\"video\"; filename=\"clip.mp4\"\r\nContent-Type: video/mp4\r\n\r\n").utf8)
        let tail = Data("\r\n--B--\r\n".utf8)
        XCTAssertEqual(written.prefix(head.count), head)
        XCTAssertEqual(written.suffix(tail.count), tail)
        XCTAssertTrue(written.dropFirst(head.count).dropLast(tail.count).elementsEqual(content))
        XCTAssertEqual(written, try form.encode())
    }

    func testMissingFileFailsWithThePartNameBeforeWriting() throws {
        // Given a form whose file does not exist
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("courier-missing-\(UUID().uuidString).bin")
        let form = MultipartFormData(boundary: "B")
        form.append(value: "x", withName: "title")
        form.append(fileURL: missing, withName: "upload")

        // When its length, body or body source is asked for
        // Then each throws naming the part and the path
        assertInvalidParameters(try form.contentLength, keyPath: "upload", reasonContains: missing.path)
        assertInvalidParameters(try form.encode(), keyPath: "upload", reasonContains: missing.path)
        assertInvalidParameters(try form.makeBodySource(), keyPath: "upload", reasonContains: missing.path)
    }

    func testDirectoryFailsWithThePartName() throws {
        // Given a form whose file URL is a directory
        let directory = try makeFile(named: "x", bytes: Data()).deletingLastPathComponent()
        let form = MultipartFormData(boundary: "B")
        form.append(fileURL: directory, withName: "folder")

        // When its body source is made
        // Then it throws saying it is a directory
        assertInvalidParameters(try form.makeBodySource(), keyPath: "folder", reasonContains: "is a directory")
    }

    func testNonFileURLFails() {
        // Given a remote URL as a file
        let form = MultipartFormData(boundary: "B")
        form.append(fileURL: URL(string: "https://example.com/a.png")!, withName: "remote")
        // When encoded
        // Then it throws
        assertInvalidParameters(try form.encode(), keyPath: "remote", reasonContains: "not a file URL")
    }

    func testConcurrentAppendsKeepEveryPart() throws {
        // Given many threads appending to one form
        let form = MultipartFormData(boundary: "B")
        DispatchQueue.concurrentPerform(iterations: 100) { index in
            form.append(value: "\(index)", withName: "n")
        }
        // When encoded
        // Then every part is there
        XCTAssertEqual(try body(form).components(separatedBy: "--B\r\n").count - 1, 100)
    }
}
