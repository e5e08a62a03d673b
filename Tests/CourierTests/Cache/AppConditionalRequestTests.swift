import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// RFC 9111 §4.3.2 through a queue: the app's own conditional GET is answered from a stored
/// response that may answer it, `304` when its validators match, without reaching the origin.
final class AppConditionalRequestTests: XCTestCase {
    private let clock = TestClock()

    /// A GET with the app's own header fields, accepting a 304 as an answer.
    struct Conditional: Request {
        typealias ResponseType = String
        var path = "/a"
        var headers: [String: String]
        func accepts(_ head: ResponseHead) -> Bool { head.isSuccess || head.status == 304 }
    }

    private func origin() -> StubTransport {
        StubTransport { _ in
            .status(200, headers: ["Cache-Control": "max-age=600", "ETag": "\"e1\"", "Content-Type": "text/plain",
                                   "Last-Modified": CacheRuleFixtures.date(-3600), "Date": CacheRuleFixtures.date(0)],
                    body: Data("v1".utf8))
        }
    }

    func testAMatchingIfNoneMatchIsAnswered304FromTheCache() async throws {
        // Given a stored response tagged "e1"
        let transport = origin()
        let (queue, _) = cachedQueue(transport, clock: clock)
        _ = try await queue.send(Conditional(headers: [:]))
        clock.advance(5)

        // When the app validates its own copy of it
        let reply = try await queue.reply(to: Conditional(headers: ["If-None-Match": "\"e1\""]))

        // Then the cache answers 304 with the validators and freshness fields, and no body, and
        // the origin saw one request
        XCTAssertEqual(reply.status, 304)
        XCTAssertEqual(reply.value, "")
        XCTAssertEqual(reply.source, .cache(.fresh))
        XCTAssertEqual(reply.headerFields.map { $0.name.lowercased() }, ["cache-control", "date", "etag", "age"],
                       "the stored fields by name (the store keeps no order), then the cache's Age")
        XCTAssertEqual(reply.headerFields["ETag"], "\"e1\"")
        XCTAssertEqual(reply.headerFields["Age"], "5")
        XCTAssertEqual(transport.started.count, 1)
    }

    func testAnIfNoneMatchOfAnotherVersionGetsTheStoredResponseWhole() async throws {
        let transport = origin()
        let (queue, _) = cachedQueue(transport, clock: clock)
        _ = try await queue.send(Conditional(headers: [:]))
        let reply = try await queue.reply(to: Conditional(headers: ["If-None-Match": "\"e0\""]))
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(reply.value, "v1")
        XCTAssertEqual(reply.source, .cache(.fresh))
        XCTAssertEqual(transport.started.count, 1)
    }

    func testAnIfModifiedSinceAfterTheModificationIsAnswered304() async throws {
        let transport = origin()
        let (queue, _) = cachedQueue(transport, clock: clock)
        _ = try await queue.send(Conditional(headers: [:]))
        let reply = try await queue.reply(to: Conditional(headers: ["If-Modified-Since": CacheRuleFixtures.date(-60)]))
        XCTAssertEqual(reply.status, 304)
        XCTAssertEqual(transport.started.count, 1)
    }

    func testPreconditionsForTheOriginGoThereAsTheyAre() async throws {
        // Given a stored response, and a request with If-Match (only an origin evaluates it)
        let transport = origin()
        let (queue, _) = cachedQueue(transport, clock: clock)
        _ = try await queue.send(Conditional(headers: [:]))
        _ = try await queue.send(Conditional(headers: ["If-Match": "\"e1\""]))

        // Then it reached the origin with its field and nothing the cache added
        XCTAssertEqual(transport.started.count, 2)
        XCTAssertEqual(transport.started.last?.value(forHTTPHeaderField: "If-Match"), "\"e1\"")
        XCTAssertNil(transport.started.last?.value(forHTTPHeaderField: "If-None-Match"))
    }
}
