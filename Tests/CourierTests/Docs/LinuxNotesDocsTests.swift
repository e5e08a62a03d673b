// Mirrors the article "Linux Notes" (Courier.docc/LinuxNotes.md). What needs a real server
// (challenges, libcurl errors, throughput) is covered by the integration tests; these check the
// configuration samples and, with fixtures, what the queue itself does.
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class LinuxNotesDocsTests: XCTestCase {
    struct Note: BodyData {
        let text: String
        var contentType: String { "text/plain; charset=utf-8" }
        func encode() throws -> Data { Data(text.utf8) }
    }
    struct Post: Request {
        typealias ResponseType = EmptyResponse
        let parameters: Note
        var path: String
        var method: HTTPMethod { .post }
    }
    struct Get: Request {
        typealias ResponseType = EmptyResponse
        var path: String { "/x" }
        var method: HTTPMethod { .get }
    }

    // Linux Notes › The network transport on Linux.
    func testChoosingTheTransport() {
        var config = RequestQueueConfiguration.default
        config.transport = .urlSession          // choose URLSession instead
        if let reason = RequestTransport.curlUnavailableReason {
            print("URLSession is used:", reason)
        }
        #if os(Linux)
        XCTAssertNil(RequestTransport.curlUnavailableReason, "libcurl.so.4 is loaded by FoundationNetworking, so it is here")
        #else
        XCTAssertNotNil(RequestTransport.curlUnavailableReason)
        #endif
        _ = config
    }

    // Linux Notes › every configuration sample, in order.
    func testConfigurationSamples() {
        var configuration = RequestQueueConfiguration.default
        configuration.credentials = HTTPCredentials(user: "ada", password: "lovelace")
        configuration.sensitiveHeaders = ["X-Api-Key"]
        configuration.callbackQueue = DispatchQueue(label: "com.example.results")
        configuration.maximumResponseSize = 10 * 1024 * 1024   // larger bodies end with responseTooLarge
        configuration.sessionConfiguration.urlCache = nil   // no HTTP cache: no disk access per request

        XCTAssertEqual(configuration.credentials, HTTPCredentials(user: "ada", password: "lovelace"))
        XCTAssertEqual(configuration.sensitiveHeaders, ["X-Api-Key"])
        XCTAssertEqual(configuration.callbackQueue.label, "com.example.results")
        XCTAssertEqual(configuration.maximumResponseSize, 10_485_760)
        XCTAssertEqual(RequestQueueConfiguration.default.maximumResponseSize, 67_108_864)
        XCTAssertNil(RequestQueueConfiguration.default.credentials)
        XCTAssertNil(configuration.sessionConfiguration.urlCache)
        XCTAssertNotNil(RequestQueueConfiguration.default.sessionConfiguration.urlCache, "each default is a fresh copy")
    }

    // Linux Notes › Content codings libcurl cannot decode (the behaviour: ContentCodingIntegrationTests).
    func testChoosingTheCurlTransportForCodingsLibcurlCannotDecode() {
        var config = RequestQueueConfiguration.default
        config.transport = .curl     // bodies in codings libcurl cannot decode arrive as sent
        #if os(Linux)
        XCTAssertEqual("\(config.transport)", "\(RequestTransport.curl)")
        #endif
    }

    // Linux Notes › Bodies without a Content-Type: the body's own type is sent.
    func testBodyIsSentWithItsContentType() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.post, "/notes")
        _ = try await DocsSupport.queue(fixtures).send(Post(parameters: Note(text: "hi"), path: "/notes"))
        XCTAssertEqual(fixtures.receivedRequests.first?.value(forHTTPHeaderField: "Content-Type"), "text/plain; charset=utf-8")
    }

    // Linux Notes › Redirects leak headers and drop bodies: 307 repeats method and body, 303 is a GET.
    func testRedirectsKeepOrDropTheBodyPerStatus() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.post, "/temporary", status: 307, headers: ["Location": "/v1/target"])
        fixtures.stub(.post, "/see-other", status: 303, headers: ["Location": "/v1/target"])
        fixtures.stub(.post, "/target")
        fixtures.stub(.get, "/target")
        let queue = DocsSupport.queue(fixtures)
        _ = try await queue.send(Post(parameters: Note(text: "hi"), path: "/temporary"))
        _ = try await queue.send(Post(parameters: Note(text: "hi"), path: "/see-other"))
        let hops = fixtures.receivedRequests
        XCTAssertEqual(hops.map { "\($0.httpMethod ?? "") \($0.url!.path)" },
                       ["POST /v1/temporary", "POST /v1/target", "POST /v1/see-other", "GET /v1/target"])
        XCTAssertEqual(hops[1].httpBody, Data("hi".utf8))
        XCTAssertNil(hops[3].httpBody)
        XCTAssertNil(hops[3].value(forHTTPHeaderField: "Content-Type"))
    }

    // Linux Notes › Headers with line breaks vanish: one in the session configuration is refused.
    func testInjectingHeaderInTheSessionConfigurationIsRefused() async {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/x")
        let queue = DocsSupport.queue(fixtures) {
            let session = URLSessionConfiguration.default
            session.httpAdditionalHeaders = ["X-Evil": "a\r\nX-Injected: 1"]
            $0.sessionConfiguration = session
        }
        do {
            _ = try await queue.send(Get())
            XCTFail("expected invalidHeader")
        } catch {
            guard case .invalidHeader(let name, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(name, "X-Evil")
        }
        XCTAssertTrue(fixtures.receivedRequests.isEmpty)
    }

    // Linux Notes › Broken connections report error -1: the mapped error is retried by default.
    func testConnectionLostIsRetriedByDefault() {
        XCTAssertTrue(RetryPolicy.default.urlErrorCodes.contains(.networkConnectionLost))
        XCTAssertTrue(RequestError.transportFailed(URLError(.networkConnectionLost)).description.contains("network connection lost"))
    }

    // Linux Notes › Pinning, client certificates and TLS versions.
    func testTLSSettingsSample() {
        var config = RequestQueueConfiguration.default
        config.transport = .curl     // the default on Linux; the URLSession transport refuses tls settings
        config.tls.minimumVersion = .v1_3
        XCTAssertEqual(config.tls.minimumVersion, .v1_3)
        XCTAssertNoThrow(try config.tls.validate())
    }
}
