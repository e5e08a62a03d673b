import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The value with its response: status, header fields, final URL and metrics, from `async` code
/// and for ID observers, without a delegate.
final class ReplyTests: XCTestCase {
    struct Post: Decodable, Sendable, Equatable { let id: Int }
    struct Posts: Request {
        typealias ResponseType = [Post]
        var path: String
    }

    private func queue(_ fixtures: FixtureTransport) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .fixtures(fixtures)
        return RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com"))
    }

    func testAReplyHasTheValueTheStatusTheHeadersTheURLAndWhereItCameFrom() async throws {
        // Given a page with Link and rate-limit headers that may be cached for a minute
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/posts", query: ["page": "2"], status: 200,
                      headers: ["Link": "</posts?page=3>; rel=\"next\"", "X-RateLimit-Remaining": "41",
                                "Cache-Control": "max-age=60"], json: #"[{"id": 3}, {"id": 4}]"#)
        let queue = queue(fixtures)

        // When it is fetched twice
        let first = try await queue.reply(to: Posts(path: "/posts?page=2"))
        let second = try await queue.reply(to: Posts(path: "/posts?page=2"))

        // Then the first reply has the value, its head and metrics from the network; the second
        // came from the cache, and only one request reached the server
        XCTAssertEqual(first.value, [Post(id: 3), Post(id: 4)])
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.headerFields["link"], "</posts?page=3>; rel=\"next\"")
        XCTAssertEqual(first.headerFields["X-RateLimit-Remaining"], "41")
        XCTAssertEqual(first.url.absoluteString, "https://api.example.com/posts?page=2")
        XCTAssertEqual(first.source, .network)
        XCTAssertEqual(first.metrics.attempts, 1)
        XCTAssertEqual(first.metrics.statusCode, 200)
        XCTAssertEqual(second.value, first.value)
        XCTAssertEqual(second.source, .cache(.fresh))
        XCTAssertEqual(fixtures.receivedRequests.count, 1)
    }

    func testAnIDObserverGetsAReplyAndSoDoesOneAddedAfterTheEnd() throws {
        // Given a request whose result is observed as a reply, before and after it ends
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/posts", status: 203, headers: ["ETag": "\"p1\""], json: #"[{"id": 1}]"#)
        let queue = queue(fixtures)
        let id = queue.add(Posts(path: "/posts"))
        let during = try XCTUnwrap(result(of: id, on: queue, as: Reply<[Post]>.self)).get()

        // When another observer asks for it once the request has ended
        let after = try XCTUnwrap(result(of: id, on: queue, as: Reply<[Post]>.self)).get()

        // Then both have the value, the head and the finished metrics
        for reply in [during, after] {
            XCTAssertEqual(reply.value, [Post(id: 1)])
            XCTAssertEqual(reply.status, 203)
            XCTAssertEqual(reply.headerFields["ETag"], "\"p1\"")
            XCTAssertEqual(reply.metrics.id, id)
            XCTAssertGreaterThanOrEqual(reply.metrics.finishedAt, reply.metrics.addedAt)
        }
        // And an observer of the value alone still gets the value
        XCTAssertEqual(try XCTUnwrap(result(of: id, on: queue, as: [Post].self)).get(), [Post(id: 1)])
    }

    func testAReplyOfAnotherTypeIsAMismatchNamingTheValueTypes() throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/posts", json: #"[{"id": 1}]"#)
        let queue = queue(fixtures)
        let id = queue.add(Posts(path: "/posts"))
        let result = try XCTUnwrap(result(of: id, on: queue, as: Reply<String>.self))
        guard case .failure(.responseTypeMismatch(let expected, let actual)) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(expected, "Swift.String")
        XCTAssertEqual(actual, "Swift.Array<CourierTests.ReplyTests.Post>")
    }

    func testTheURLOfAReplyIsTheOneARedirectLedTo() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/old", status: 301, headers: ["Location": "/new"])
        fixtures.stub(.get, "/new", json: #"[{"id": 9}]"#)
        let reply = try await queue(fixtures).reply(to: Posts(path: "/old"))
        XCTAssertEqual(reply.url.absoluteString, "https://api.example.com/new")
        XCTAssertEqual(reply.metrics.redirects, 1)
        XCTAssertEqual(reply.value, [Post(id: 9)])
    }

    func testAFailureIsThrownAsFromSend() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/posts", status: 500, json: #"{"error": "down"}"#)
        do {
            _ = try await queue(fixtures).reply(to: Posts(path: "/posts"))
            XCTFail("expected a failure")
        } catch {
            guard case .validationFailed(let response, let body) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(response.statusCode, 500)
            XCTAssertEqual(body.string, #"{"error": "down"}"#)
        }
    }
}
