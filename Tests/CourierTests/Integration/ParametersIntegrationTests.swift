import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Parameters round trips: what httpbin parsed equals what was sent.
final class ParametersIntegrationTests: XCTestCase {
    struct Address: Serializable {
        let city: String
        let postCode: String
    }

    struct Search: DefaultQueryString {
        let query: String
        let page: Int
        let tags: [String]
        let empty: String
        let address: Address
        let missing: String?
    }

    struct LogIn: URLEncodedBodyData {
        let userName: String
        let password: String
        let remember: Bool
        let tags: [String]
    }

    struct Profile: JSONBodyData {
        let displayName: String
        let age: Int
        let big: Int64
        let ratio: Double
        let avatar: URL?
        let address: Address
        let scores: [String: Int]
        let quote: String
    }

    struct Anything<P: Parameters>: Request {
        typealias ResponseType = EchoObject
        var parameters: P
        var path: String
        var method: HTTPMethod
        var queryParameters: (any QueryString)?
    }

    static let awkward = "中文 ☃ é & = ? # [ ] @ ! $ ' ( ) * + , ; : / % \" \\ ~"
    static let large = String(repeating: "0123456789abcdef", count: 4096)

    func testQueryStringRoundTrip() async throws {
        // Given search parameters with unicode, reserved characters, nesting, arrays, an empty
        // string, a large value and a nil
        // (gunicorn refuses request lines over 4 KiB, so the large value is 1 KiB here)
        let largeForURL = String(Self.large.prefix(1024))
        let search = Search(query: Self.awkward, page: 3, tags: ["a b", "c&d", largeForURL], empty: "",
                            address: Address(city: "Paris", postCode: "75001"), missing: nil)

        // When they are sent as the query of a GET
        let echo = try await HTTPBin.queue().send(Anything(parameters: search, path: "/get", method: .get))

        // Then httpbin parsed exactly those values
        let args = echo.field("args")
        XCTAssertEqual(args["query"] as? String, Self.awkward)
        XCTAssertEqual(args["page"] as? String, "3")
        XCTAssertEqual(args["tags[]"] as? [String], ["a b", "c&d", largeForURL])
        XCTAssertEqual(args["empty"] as? String, "")
        XCTAssertEqual(args["address[city]"] as? String, "Paris")
        XCTAssertEqual(args["address[post_code]"] as? String, "75001")
        XCTAssertNil(args["missing"])
        XCTAssertEqual(args.count, 6, "\(args.keys.sorted())")
    }

    func testURLEncodedFormRoundTrip() async throws {
        let form = LogIn(userName: Self.awkward, password: "p@ss w0rd+", remember: true, tags: ["x", ""])
        let echo = try await HTTPBin.queue().send(Anything(parameters: form, path: "/post", method: .post))
        let parsed = echo.field("form")
        XCTAssertEqual(parsed["user_name"] as? String, Self.awkward)
        XCTAssertEqual(parsed["password"] as? String, "p@ss w0rd+")
        XCTAssertEqual(parsed["remember"] as? String, "true")
        XCTAssertEqual(parsed["tags[]"] as? [String], ["x", ""])
        XCTAssertEqual(echo.headers["Content-Type"], "application/x-www-form-urlencoded; charset=utf-8")
    }

    func testJSONRoundTripWithQueryParametersAtOnce() async throws {
        // Given a JSON body and separate query parameters
        let profile = Profile(displayName: Self.awkward + "\n\t\u{1}", age: 42, big: Int64.max, ratio: 0.1,
                              avatar: URL(string: "https://example.com/a.png?s=1&t=2"),
                              address: Address(city: "Zürich", postCode: ""), scores: ["b": 2, "a": -1],
                              quote: Self.large)

        // When they are POSTed
        let request = Anything(parameters: profile, path: "/post?version=2", method: .post,
                               queryParameters: RawQuery(query: "lang=fr"))
        let echo = try await HTTPBin.queue().send(request)

        // Then httpbin's own JSON parser read the same values, and the query arrived too
        let json = echo.field("json")
        XCTAssertEqual(json["display_name"] as? String, Self.awkward + "\n\t\u{1}")
        XCTAssertEqual(json["age"] as? Int, 42)
        XCTAssertEqual((json["big"] as? NSNumber)?.int64Value, Int64.max)
        XCTAssertEqual(json["ratio"] as? Double, 0.1)
        XCTAssertEqual(json["avatar"] as? String, "https://example.com/a.png?s=1&t=2")
        XCTAssertEqual(json["address"] as? [String: String], ["city": "Zürich", "post_code": ""])
        XCTAssertEqual(json["scores"] as? [String: Int], ["a": -1, "b": 2])
        XCTAssertEqual(json["quote"] as? String, Self.large)
        XCTAssertEqual(echo.field("args") as? [String: String], ["version": "2", "lang": "fr"])
        XCTAssertEqual(echo.headers["Content-Type"], "application/json")
    }

    func testMultipartRoundTrip() async throws {
        // Given a form with a text file on disk, in-memory data, fields and a Serializable value
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-note-\(UUID()).txt")
        try Data("file content: 中文\r\n--not-a-boundary\r\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let form = MultipartFormData()
        form.append(fileURL: file, withName: "doc", fileName: "note.txt", mimeType: "text/plain")
        form.append(data: Data("thumb".utf8), withName: "thumb", fileName: "t.txt")
        form.append(value: "Holiday \"2026\" ☃", withName: "title")
        try form.append(parameters: Address(city: "Paris", postCode: "75"), withName: "address")

        // When it is POSTed
        let echo = try await HTTPBin.queue().send(Anything(parameters: form, path: "/post", method: .post))

        // Then httpbin parsed every part
        XCTAssertEqual(echo.field("files") as? [String: String],
                       ["doc": "file content: 中文\r\n--not-a-boundary\r\n", "thumb": "thumb"])
        XCTAssertEqual(echo.field("form") as? [String: String],
                       ["title": "Holiday \"2026\" ☃", "address[city]": "Paris", "address[post_code]": "75"])
        XCTAssertTrue(echo.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=") == true)
    }

    func testBodyOnGETFailsBeforeSending() async throws {
        let queue = try HTTPBin.queue()
        do {
            _ = try await queue.send(Anything(parameters: LogIn(userName: "a", password: "b", remember: false, tags: []),
                                                        path: "/get", method: .get))
            XCTFail("expected an error")
        } catch {
            guard case .invalidParameters(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("cannot carry a body"), reason)
        }
    }

    func testLargeMultipartUploadArrivesIntactWithBoundedMemory() async throws {
        // Given a 200 MB file on disk
        let size = 200 * 1024 * 1024
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-large-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        try writePatternFile(file, size: size)
        let expectedDigest = try sha256sum(file)
        let sink = try HTTPBin.uploadSink()

        // When it is uploaded as a multipart part, while the process's memory is sampled
        let form = MultipartFormData()
        form.append(fileURL: file, withName: "video", fileName: "clip.bin")
        form.append(value: "large", withName: "title")
        let sampler = MemorySampler()
        let queue = try HTTPBin.queue { $0.timeoutInterval = 300 }
        let echo = try await queue.send(Anything(parameters: form, path: sink.absoluteString + "/upload", method: .post))
        let peakGrowth = sampler.stop()
        print("200 MB multipart upload: peak RSS growth \(peakGrowth / 1_048_576) MiB")

        // Then the server got every byte, with a Content-Length, and memory stayed bounded
        let parts = echo.object["parts"] as? [[String: Any]] ?? []
        XCTAssertEqual(parts.count, 2)
        XCTAssertEqual(parts.first?["name"] as? String, "video")
        XCTAssertEqual(parts.first?["filename"] as? String, "clip.bin")
        XCTAssertEqual(parts.first?["size"] as? Int, size)
        XCTAssertEqual(parts.first?["sha256"] as? String, expectedDigest)
        XCTAssertEqual(echo.object["content_length"] as? Int, echo.object["received"] as? Int)
        XCTAssertEqual(echo.object["content_length"] as? Int, Int(try form.contentLength))
        XCTAssertLessThan(peakGrowth, 64 * 1_048_576, "uploading 200 MB grew the process by \(peakGrowth / 1_048_576) MiB")
    }

    private func writePatternFile(_ url: URL, size: Int) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var written = 0
        while written < size {
            for index in chunk.indices {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                chunk[index] = UInt8(truncatingIfNeeded: state >> 56)
            }
            let count = min(chunk.count, size - written)
            try handle.write(contentsOf: chunk[0..<count])
            written += count
        }
    }

    private func sha256sum(_ url: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum", url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }
}

/// Samples the process's resident memory every 10 ms and reports the peak growth.
final class MemorySampler: Sendable {
    private let baseline = MemorySampler.residentBytes()
    private let peak = Locked(0)
    private let running = Locked(true)
    private let finished = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in
            while running.withLock({ $0 }) {
                let now = MemorySampler.residentBytes()
                peak.withLock { $0 = max($0, now) }
                usleep(10_000)
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops sampling; returns the peak resident size above the baseline, in bytes.
    func stop() -> Int {
        running.withLock { $0 = false }
        _ = finished.wait(timeout: .now() + 60)   // the sampler sleeps 10 ms between samples
        return max(0, peak.withLock { $0 } - baseline)
    }

    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}
