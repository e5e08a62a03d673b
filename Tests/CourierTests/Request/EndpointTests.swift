import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// One-off calls without a request type of one's own.
final class EndpointTests: XCTestCase {
    struct Post: Decodable, Sendable, Equatable { let id: Int; let title: String }
    struct NewPost: JSONBodyData { let title: String; let authorID: Int }
    struct Search: DefaultQueryString { let text: String; let page: Int }

    private func queue(_ fixtures: FixtureTransport) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .fixtures(fixtures)
        return RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))
    }

    private func sent(_ fixtures: FixtureTransport) -> [String] {
        fixtures.receivedRequests.map { request in
            let body = request.httpBody.map { " " + String(decoding: $0, as: UTF8.self) } ?? ""
            return "\(request.httpMethod ?? "?") \(request.url?.absoluteString ?? "")\(body)"
        }
    }

    func testEveryMethodGoesOutWithItsParametersAndDecodesItsAnswer() async throws {
        // Given an API with a page of posts, a search, and writes
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/posts", json: #"[{"id": 1, "title": "One"}]"#)
        fixtures.stub(.get, "/search", query: ["text": "swift", "page": "2"], json: #"[{"id": 2, "title": "Swift"}]"#)
        fixtures.add(Fixture(method: .post, path: "/posts", bodyJSON: #"{"title": "New", "author_id": 7}"#, status: 201,
                             headers: ["Location": "/v1/posts/3", "Content-Type": "application/json"],
                             body: Data(#"{"id": 3, "title": "New"}"#.utf8)))
        fixtures.stub(.put, "/posts/3", json: #"{"id": 3, "title": "Put"}"#)
        fixtures.stub(.patch, "/posts/3", json: #"{"id": 3, "title": "Patched"}"#)
        fixtures.stub(.delete, "/posts/3", status: 204)
        fixtures.stub(.delete, "/posts/4", json: #"{"id": 4, "title": "Gone"}"#)
        let queue = queue(fixtures)

        // When each is sent as a one-off
        let posts = try await queue.send(.get("/posts", as: [Post].self))
        let found: [Post] = try await queue.send(.get("/search", query: Search(text: "swift", page: 2)))
        let created = try await queue.reply(to: .post("/posts", NewPost(title: "New", authorID: 7), as: Post.self))
        let put = try await queue.send(.put("/posts/3", NewPost(title: "Put", authorID: 7), as: Post.self))
        let patched = try await queue.send(.patch("/posts/3", NewPost(title: "Patched", authorID: 7), as: Post.self))
        _ = try await queue.send(.delete("/posts/3"))
        let gone = try await queue.send(.delete("/posts/4", as: Post.self))

        // Then each went out as written and its answer decoded
        XCTAssertEqual(posts, [Post(id: 1, title: "One")])
        XCTAssertEqual(found, [Post(id: 2, title: "Swift")])
        XCTAssertEqual(created.value, Post(id: 3, title: "New"))
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(created.headerFields["Location"], "/v1/posts/3")
        XCTAssertEqual(put.title, "Put")
        XCTAssertEqual(patched.title, "Patched")
        XCTAssertEqual(gone, Post(id: 4, title: "Gone"))
        XCTAssertEqual(sent(fixtures), [
            "GET https://api.example.com/v1/posts",
            "GET https://api.example.com/v1/search?text=swift&page=2",
            #"POST https://api.example.com/v1/posts {"title":"New","author_id":7}"#,
            #"PUT https://api.example.com/v1/posts/3 {"title":"Put","author_id":7}"#,
            #"PATCH https://api.example.com/v1/posts/3 {"title":"Patched","author_id":7}"#,
            "DELETE https://api.example.com/v1/posts/3",
            "DELETE https://api.example.com/v1/posts/4",
        ])
    }

    func testHeadersTimeoutsAndAnyMethodThroughTheInitializer() throws {
        // Given an endpoint of another method with headers and a timeout
        let purge = Endpoint(HTTPMethod(rawValue: "PURGE"), "/cache/posts", headers: ["X-Reason": "deploy"], timeout: 5,
                             as: EmptyResponse.self)
        let queue = queue(FixtureTransport())

        // Then it is the request a type of one's own would make
        XCTAssertEqual(try queue.curlCommand(for: purge),
                       "curl -X PURGE 'https://api.example.com/v1/cache/posts' -H 'X-Reason: deploy'")
        XCTAssertEqual(purge.timeout, 5)
        XCTAssertEqual(Endpoint<EmptyParameters, [Post]>.get("/posts", headers: ["Accept": "application/json"]).headerFields,
                       ["Accept": "application/json"])
    }
}
