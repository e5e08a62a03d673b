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
        let environment = ProcessInfo.processInfo.environment
        if let text = environment["COURIER_HTTPBIN_URL"], let url = URL(string: text) {
            return url
        }
        let message = "Integration tests need a local httpbin: run Scripts/test.sh, which installs and starts one, "
            + "or start one yourself and set COURIER_HTTPBIN_URL=http://127.0.0.1:PORT"
        if environment["COURIER_REQUIRE_HTTPBIN"] == "1" {
            XCTFail(message, file: file, line: line)
            throw RequestError.invalidURL("", reason: message)
        }
        throw XCTSkip(message)
    }

    /// A queue for integration tests, delivering on the tests' callback queue.
    static func queue(delegate: (any RequestQueueDelegate)? = nil, maxConcurrent: Int = 6) throws -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.maxConcurrentRequests = maxConcurrent
        configuration.timeoutInterval = 20
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

/// What httpbin's `/anything`, `/get` and `/post` say they received.
struct Echo: Response, Decodable {
    let method: String?
    let url: String
    let headers: [String: String]
    let args: [String: String]
    let data: String?
    let form: [String: String]?
}
