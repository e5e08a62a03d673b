import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// A request's own redirect policy, and RawResponse: the response of any status as it came.
final class RequestRedirectPolicyTests: XCTestCase {
    struct Probe: Request {
        typealias ResponseType = RawResponse
        var path: String
        var redirectPolicy: RedirectPolicy?
    }

    private func fixtures() -> FixtureTransport {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/one", status: 301, headers: ["Location": "/two"])
        fixtures.stub(.get, "/two", status: 302, headers: ["Location": "/three"])
        fixtures.stub(.get, "/three", headers: ["Content-Type": "text/plain"], body: Data("end".utf8))
        return fixtures
    }

    private func queue(_ fixtures: FixtureTransport, policy: RedirectPolicy = .default) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .fixtures(fixtures)
        configuration.redirectPolicy = policy
        return RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com"))
    }

    func testARequestThatFollowsNoRedirectGetsThe3xxAsItsValue() async throws {
        // Given a queue that follows redirects, and a request that does not
        let fixtures = fixtures()
        let raw = try await queue(fixtures).send(Probe(path: "/one", redirectPolicy: .never))

        // Then the 301 is the value, with its Location, and nothing more was sent
        XCTAssertEqual(raw.status, 301)
        XCTAssertEqual(raw.head.headerFields["Location"], "/two")
        XCTAssertEqual(raw.body.data, Data())
        XCTAssertEqual(fixtures.receivedRequests.map { $0.url!.path }, ["/one"])
    }

    func testARequestsOwnLimitWinsOverTheQueues() async throws {
        // Given a queue that never follows, and requests allowing one and two hops
        let fixtures = fixtures()
        let queue = queue(fixtures, policy: .never)
        let followedAll = try await queue.send(Probe(path: "/one", redirectPolicy: .follow(maximum: 2)))
        do {
            _ = try await queue.send(Probe(path: "/one", redirectPolicy: .follow(maximum: 1)))
            XCTFail("one hop is not enough")
        } catch {
            guard case .tooManyRedirects(let count) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(count, 2)
        }
        let queues = try await queue.send(Probe(path: "/one"))

        // Then each request followed its own limit, and one without a policy took the queue's
        XCTAssertEqual(followedAll.status, 200)
        XCTAssertEqual(followedAll.body.string, "end")
        XCTAssertEqual(followedAll.head.url.path, "/three")
        XCTAssertEqual(queues.status, 301)
    }

    func testARawResponseTakesAnyStatusAndItsBody() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/teapot", status: 418, json: #"{"short": "and stout"}"#)
        let raw = try await queue(fixtures).send(Probe(path: "/teapot"))
        XCTAssertEqual(raw.status, 418)
        XCTAssertEqual(raw.body.string, #"{"short": "and stout"}"#)
        XCTAssertEqual(raw.head.headerFields["Content-Type"], "application/json")
    }
}
