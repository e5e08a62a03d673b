import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The local httpbin that integration tests talk to, started by `Scripts/test.sh`.
enum HTTPBin {
    /// The server's URL, or a skip that says how to run these tests. When the test script runs
    /// (COURIER_REQUIRE_HTTPBIN=1) a missing server is a failure, so CI never skips silently.
    static func url(file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        try server("COURIER_HTTPBIN_URL", file: file, line: line)
    }

    /// httpbin on 127.0.0.2: another origin, for cross-origin redirects.
    static func secondOrigin(file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        try server("COURIER_HTTPBIN_SECOND_ORIGIN", file: file, line: line)
    }

    /// The upload sink (Scripts/upload_sink.py), which answers with sizes and SHA-256 digests.
    static func uploadSink(file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        try server("COURIER_UPLOAD_SINK_URL", file: file, line: line)
    }

    /// The server-sent-events server (Scripts/sse_server.py, sse-starlette under uvicorn): a fixed
    /// stream, a reconnection sequence per session, endless streams, and a log of what each session's
    /// connections sent (its docstring lists the endpoints and the exact bytes).
    static func sseServer(file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        try server("COURIER_SSE_URL", file: file, line: line,
                   missing: "SSE tests need Scripts/sse_server.py: run Scripts/test.sh, which installs and starts it, "
                       + "or start it yourself and set COURIER_SSE_URL=http://127.0.0.1:PORT")
    }

    /// The misbehaving server (Scripts/hostile_server.py): one misbehaviour per path, and
    /// `/echo-head`, which sends back the request head as it arrived.
    static func hostileServer(file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        try server("COURIER_HOSTILE_URL", file: file, line: line,
                   missing: "Hostile-server tests need Scripts/hostile_server.py: run Scripts/test.sh, "
                       + "or start it yourself and set COURIER_HOSTILE_URL=http://127.0.0.1:PORT")
    }

    /// The small JSON API of the article "A JSON API in practice" (Scripts/json_api.py).
    static func jsonAPI(file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        try server("COURIER_JSON_API_URL", file: file, line: line,
                   missing: "The article's tests need Scripts/json_api.py: run Scripts/test.sh, or start it "
                       + "yourself (under .build/venv's Python) and set COURIER_JSON_API_URL=http://127.0.0.1:PORT")
    }

    /// How many requests with `?key=KEY` (or to /held/KEY) reached the server-sent-events server.
    static func arrivals(_ key: String, at server: URL) throws -> Int {
        let data = try Data(contentsOf: server.appendingPathComponent("arrivals/\(key)"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return try XCTUnwrap(object?["arrivals"] as? Int)
    }

    /// nginx serving a folder of static files over plain HTTP (started by Scripts/test.sh): tests
    /// write files into `directory` and fetch them from `url`. nginx answers `Range` and `If-Range`
    /// itself (its ETag is the file's modification time and size), echoes what it received in
    /// `X-Received-Range` and `X-Received-If-Range`, and sends a response at BYTES per second to a
    /// request with `X-Courier-Rate: BYTES`.
    static func staticFiles(file: StaticString = #filePath, line: UInt = #line) throws -> (url: URL, directory: URL) {
        let message = "Download tests need nginx serving static files: run Scripts/test.sh, which starts it, or serve a "
            + "folder yourself and set COURIER_STATIC_URL=http://127.0.0.1:PORT and COURIER_STATIC_DIR=/path/to/folder"
        let url = try server("COURIER_STATIC_URL", file: file, line: line, missing: message)
        guard let path = ProcessInfo.processInfo.environment["COURIER_STATIC_DIR"], !path.isEmpty else {
            throw missing(message, file: file, line: line)
        }
        return (url, URL(fileURLWithPath: path, isDirectory: true))
    }

    /// One of the TLS servers of the nginx that Scripts/test.sh starts (`COURIER_TLS_URL`,
    /// `COURIER_TLS_CLOSING_URL`…), or the file of the private CA that signed them (`COURIER_TLS_CA`).
    static func tlsServer(_ variable: String, file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        try server(variable, file: file, line: line,
                   missing: "TLS tests need the nginx that Scripts/test.sh starts (\(variable))")
    }

    private static func server(_ variable: String, file: StaticString, line: UInt,
                               missing message: String = "Integration tests need a local httpbin: run Scripts/test.sh, "
                                   + "which installs and starts one, or start one yourself and set "
                                   + "COURIER_HTTPBIN_URL=http://127.0.0.1:PORT") throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let text = environment[variable], let url = URL(string: text) {
            return url
        }
        throw missing(message, file: file, line: line)
    }

    /// What a test throws when a server it needs is missing: a skip when run by hand, a failure
    /// under Scripts/test.sh (which sets COURIER_REQUIRE_HTTPBIN=1), so CI never skips it.
    static func missing(_ message: String, file: StaticString = #filePath, line: UInt = #line) -> any Error {
        guard ProcessInfo.processInfo.environment["COURIER_REQUIRE_HTTPBIN"] == "1" else { return XCTSkip(message) }
        XCTFail(message, file: file, line: line)
        return RequestError.invalidURL("", reason: message)
    }

    /// The network transport the integration tests run through: `COURIER_TEST_TRANSPORT=curl`
    /// or `urlsession` (Scripts/test.sh runs the suite once with each on Linux); the default
    /// network transport otherwise.
    static var transport: RequestTransport {
        switch ProcessInfo.processInfo.environment["COURIER_TEST_TRANSPORT"] {
        case "curl": .curl
        case "urlsession": .urlSession
        default: .network
        }
    }

    /// Whether the run's network transport is URLSession (for the few documented differences).
    static var usesURLSession: Bool {
        #if os(Linux)
        ProcessInfo.processInfo.environment["COURIER_TEST_TRANSPORT"] == "urlsession"
        #else
        true
        #endif
    }

    /// A queue for integration tests, delivering on the tests' callback queue.
    static func queue(delegate: (any RequestQueueDelegate)? = nil, maxConcurrent: Int = 6,
                      configure: (inout RequestQueueConfiguration) -> Void = { _ in }) throws -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.transport = transport
        configuration.callbackQueue = TestQueues.callbacks
        configuration.maxConcurrentRequests = maxConcurrent
        configuration.timeoutInterval = 20
        configure(&configuration)
        return RequestQueue(configuration: configuration, delegate: delegate, baseURL: try url())
    }

    /// A port on 127.0.0.1 where nothing listens.
    static func closedPort() -> Int {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                _ = bind(fd, raw, length)
                _ = getsockname(fd, raw, &length)
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// httpbin's echo as a JSON object, for checks on values of any shape (strings or lists in
/// `args` and `form`, any JSON in `json`).
struct EchoObject: Response {
    let body: ResponseData
    init(body: ResponseData, head: ResponseHead) throws {
        self.body = body
        _ = try body.jsonObject
    }
    var object: [String: Any] { (try? body.jsonObject) ?? [:] }
    func field(_ name: String) -> [String: Any] { object[name] as? [String: Any] ?? [:] }
    var headers: [String: String] { object["headers"] as? [String: String] ?? [:] }
}

/// What httpbin's `/anything`, `/get` and `/post` say they received.
struct Echo: Response, Decodable {
    let method: String?
    let url: String
    let headers: [String: String]
    let args: [String: String]
    let data: String?
    let form: [String: String]?
}

/// What the TLS test servers of Scripts/servers.sh answer: the protocol, the connection's serial
/// number (to count connections) and whether the TLS session was resumed ("r", or ".").
struct TLSAnswer: Response, Decodable {
    let `protocol`: String
    let connection: Int
    let resumed: String
}
