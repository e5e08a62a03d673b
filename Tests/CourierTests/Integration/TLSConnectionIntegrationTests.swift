#if os(Linux)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The curl transport's TLS connections against the nginx that Scripts/test.sh starts, which
/// answers with the connection's serial number and whether the TLS session was resumed: a burst
/// to a new HTTP/2 origin waits for the first connection and shares it, and neither resumed
/// sessions nor roots loaded once ever let an unverified server through. Through the curl
/// transport whatever the run's transport: URLSession on Linux takes no extra roots.
final class TLSConnectionIntegrationTests: XCTestCase {
    private func server(_ variable: String) throws -> String {
        try HTTPBin.tlsServer(variable).absoluteString
    }

    /// A new curl queue trusting the private CA.
    private func queue(maxConcurrent: Int = 6) throws -> RequestQueue {
        let ca = URL(fileURLWithPath: try HTTPBin.tlsServer("COURIER_TLS_CA").path)
        return try HTTPBin.queue(maxConcurrent: maxConcurrent) { config in
            config.trustedCertificates = [ca]
            config.transport = .curl
            config.sharesIdenticalRequests = false
            config.cache = nil
        }
    }

    /// The `URLError` code a send to `variable`'s server failed with, nil when it did not fail so.
    private func failureCode(_ queue: RequestQueue, _ variable: String) async throws -> URLError.Code? {
        let url = try server(variable) + "/"
        do {
            _ = try await queue.send(PathRequest<TLSAnswer>(url))
            return nil
        } catch RequestError.transportFailed(let error) {
            return error.code
        }
    }

    func testABurstOf32GETsFromANewQueueOverHTTP2SharesOneConnection() async throws {
        // Given a new queue that may run 32 requests at once, and an HTTP/2 origin it never used
        let origin = try server("COURIER_TLS_URL")
        let queue = try queue(maxConcurrent: 32)

        // When 32 GETs are added at once (all before any observer, so that they reach the
        // transport while its first connection is still being set up)
        let ids = (0..<32).map { queue.add(PathRequest<TLSAnswer>("\(origin)/burst/\($0)")) }
        let collected = Locked<[Result<TLSAnswer, RequestError>]>([])
        let done = expectation(description: "32 results")
        done.expectedFulfillmentCount = 32
        for id in ids {
            queue.addObserver(for: id) { (result: Result<TLSAnswer, RequestError>) in
                collected.withLock { $0.append(result) }
                done.fulfill()
            }
        }
        await fulfillment(of: [done], timeout: 30)
        let answers = try collected.withLock { $0 }.map { try $0.get() }

        // Then every one succeeds, over HTTP/2, all on one connection
        XCTAssertEqual(answers.count, 32)
        XCTAssertEqual(Set(answers.map(\.protocol)), ["HTTP/2.0"])
        XCTAssertEqual(Set(answers.map(\.connection)).count, 1, "connections: \(Set(answers.map(\.connection)).sorted())")
    }

    func testAReconnectionResumesTheSessionAndOtherServersAreStillVerified() async throws {
        // Given a queue that fetched twice from a server that closes every connection after answering
        let closing = try server("COURIER_TLS_CLOSING_URL")
        let queue = try queue()
        let first = try await queue.send(PathRequest<TLSAnswer>("\(closing)/first"))
        let second = try await queue.send(PathRequest<TLSAnswer>("\(closing)/second"))

        // When the same queue then asks the expired and the wrong-host servers (the same nginx,
        // which would resume a session it issued on any of its ports)
        let expired = try await failureCode(queue, "COURIER_TLS_EXPIRED_URL")
        let wrongHost = try await failureCode(queue, "COURIER_TLS_WRONG_HOST_URL")
        let again = try await queue.send(PathRequest<TLSAnswer>("\(closing)/again"))

        // Then the reconnections were new connections that resumed the first one's session, and
        // both other servers are refused for their certificates as a new queue refuses them
        XCTAssertEqual(first.protocol, "HTTP/1.1")
        XCTAssertNotEqual(first.connection, second.connection)
        XCTAssertEqual(first.resumed, ".")
        XCTAssertEqual(second.resumed, "r")
        XCTAssertEqual(expired, .serverCertificateHasBadDate)
        XCTAssertEqual(wrongHost, .serverCertificateUntrusted)
        XCTAssertEqual(again.resumed, "r")
    }

    func testTheRootsComeFromTheSystemDirectoryAndAFileOfTheExtraRootsAlone() throws {
        // Given the private CA as the one extra root
        let ca = URL(fileURLWithPath: try HTTPBin.tlsServer("COURIER_TLS_CA").path)

        // When the curl transport's options are worked out with and without it
        let withExtra = CurlOptions(settings: TransportSettings(trustedCertificates: [ca]), curlVersion: "7.88.1")
        let without = CurlOptions(settings: TransportSettings(), curlVersion: "7.88.1")

        // Then (on this Debian machine, with /etc/ssl/certs hashed) the directory is used, with
        // a CA file that holds exactly the extra root, and no file at all without extra roots
        guard case .directory(let directory, let extraRoots?) = withExtra.certificateAuthorities else {
            return XCTFail("got \(withExtra.certificateAuthorities)")
        }
        XCTAssertTrue(CurlLibrary.takesCADirectory)
        XCTAssertEqual(directory, "/etc/ssl/certs")
        XCTAssertEqual(try String(contentsOfFile: extraRoots, encoding: .utf8), try String(contentsOf: ca, encoding: .utf8) + "\n")
        XCTAssertEqual(without.certificateAuthorities, .directory("/etc/ssl/certs", extraRoots: nil))
    }
}
#endif
