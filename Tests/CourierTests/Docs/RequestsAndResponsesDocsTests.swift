// Mirrors the article "Requests and Responses" (Courier.docc/RequestsAndResponses.md).
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class RequestsAndResponsesDocsTests: XCTestCase {
    // Scaffolding for the samples.
    struct Account: Response, Decodable { let name: String }
    struct User: Decodable, Sendable, Equatable { let id: Int; let name: String }

    // Requests and Responses › Headers (verbatim)
    struct AccountRequest: Request {
        typealias ResponseType = Account
        var path: String { "/account" }
        var method: HTTPMethod { .get }
        var headers: [String: String] { ["Accept-Language": "fr", "X-Client": "docs"] }
    }

    // Requests and Responses › Timeouts (verbatim)
    struct ExportRequest: Request {
        typealias ResponseType = EmptyResponse
        var path: String { "/exports/latest" }
        var method: HTTPMethod { .get }
        var timeout: TimeInterval? { 300 }
    }

    // Requests and Responses › Responses (verbatim)
    struct EventBody: Decodable { let name: String }
    struct Event: Response {
        let name: String
        let etag: String?

        init(body: ResponseData, head: ResponseHead) throws {
            name = try body.decode(EventBody.self).name
            etag = head.headerFields["ETag"]
        }
    }

    // Requests and Responses › Responses, accepts (verbatim)
    struct UserLookup: Response {
        let user: User?

        static func accepts(_ head: ResponseHead) -> Bool {
            head.isSuccess || head.status == 404
        }

        init(body: ResponseData, head: ResponseHead) throws {
            user = head.status == 404 ? nil : try body.decode(User.self)
        }
    }

    /// Any path and method, with optional headers, query parameters and timeout.
    struct AnyRequest<ResponseType: Response>: Request {
        var path: String
        var method: HTTPMethod = .get
        var headers: [String: String] = [:]
        var queryParameters: (any QueryString)?
        var timeout: TimeInterval?
    }

    /// A GET of any path whose response type is any Decodable.
    struct DecodableRequest<ResponseType: Decodable & Sendable>: Request {
        var path: String
    }

    struct SearchQuery: QueryString {
        func encode() throws -> String { "q=swift" }
    }

    // Requests and Responses › Paths and URLs: every row of the table.
    func testPathResolutionTable() throws {
        func url(base: String?, _ path: String, query: Bool = false) throws -> String {
            let fixtures = FixtureTransport()
            fixtures.stub(.get, "/", body: Data())
            let queue = DocsSupport.queue(fixtures, baseURL: base)
            return try queue.curlCommand(for: AnyRequest<EmptyResponse>(path: path, queryParameters: query ? SearchQuery() : nil))
        }
        XCTAssertEqual(try url(base: "https://api.example.com/v1", "/login"), "curl 'https://api.example.com/v1/login'")
        XCTAssertEqual(try url(base: "https://api.example.com/v1/", "login"), "curl 'https://api.example.com/v1/login'")
        XCTAssertEqual(try url(base: "https://api.example.com/v1", "/search?version=2", query: true),
                       "curl 'https://api.example.com/v1/search?version=2&q=swift'")
        XCTAssertEqual(try url(base: "https://api.example.com/v1?key=k", "/search", query: true),
                       "curl 'https://api.example.com/v1/search?key=k&q=swift'")
        XCTAssertEqual(try url(base: "https://api.example.com/v1", "/files/my report.pdf"),
                       "curl 'https://api.example.com/v1/files/my%20report.pdf'")
        XCTAssertEqual(try url(base: "https://api.example.com/v1", "https://other.example.com/x"), "curl 'https://other.example.com/x'")
        XCTAssertEqual(try url(base: nil, "https://other.example.com/x"), "curl 'https://other.example.com/x'")
        XCTAssertThrowsError(try url(base: nil, "/login")) { error in
            guard case RequestError.invalidURL = error else { return XCTFail("\(error)") }
        }
    }

    // Requests and Responses › Headers: they go on the wire; an injecting value is refused.
    func testHeadersAreSentAndInjectionIsRefused() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/account", json: #"{"name": "Ada"}"#)
        let queue = DocsSupport.queue(fixtures)
        _ = try await queue.send(AccountRequest())
        let sent = try XCTUnwrap(fixtures.receivedRequests.first)
        XCTAssertEqual(sent.value(forHTTPHeaderField: "Accept-Language"), "fr")
        XCTAssertEqual(sent.value(forHTTPHeaderField: "X-Client"), "docs")

        do {
            _ = try await queue.send(AnyRequest<Account>(path: "/account", headers: ["X-Evil": "a\r\nX-Injected: 1"]))
            XCTFail("expected invalidHeader")
        } catch {
            guard case .invalidHeader(let name, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(name, "X-Evil")
        }
        XCTAssertEqual(fixtures.receivedRequests.count, 1, "nothing was sent for the bad header")
    }

    // Requests and Responses › Timeouts: the request's own timeout, and the queue ending it.
    func testTimeoutIsTheRequestsAndTheQueueEnforcesIt() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/exports/latest")
        let queue = DocsSupport.queue(fixtures)
        _ = try await queue.send(ExportRequest())
        XCTAssertEqual(fixtures.receivedRequests.first?.timeoutInterval, 300)

        // The answer is held and never released: only the queue's timeout can end the request
        // (were it not enforced, the expectation would give up after 30 s).
        fixtures.holdsAnswers = true
        let id = queue.add(AnyRequest<EmptyResponse>(path: "/exports/latest", timeout: 0.2))
        let ended = expectation(description: "ended")
        let result = Recorder<Result<EmptyResponse, RequestError>>()
        queue.addObserver(for: id) { (outcome: Result<EmptyResponse, RequestError>) in
            result.append(outcome)
            ended.fulfill()
        }
        await fulfillment(of: [ended], timeout: 30)
        guard case .failure(.timedOut)? = result.all.first else { return XCTFail("\(result.all)") }
        XCTAssertEqual(fixtures.heldRequests, [], "the timed-out request is no longer held")
        XCTAssertEqual(fixtures.receivedRequests.count, 2)
    }

    // Requests and Responses › Responses: a type that makes itself from the body and the head.
    func testAResponseTypeMakesItselfFromTheBodyAndTheHead() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/events/1", headers: ["ETag": "\"e1\""], json: #"{"name": "Launch"}"#)
        let event = try await DocsSupport.queue(fixtures).send(AnyRequest<Event>(path: "/events/1"))
        XCTAssertEqual(event.name, "Launch")
        XCTAssertEqual(event.etag, "\"e1\"")
    }

    // Requests and Responses › Responses: the queue's decoding (verbatim lines), and the
    // sample's JSON and type.
    func testTheQueuesDecoding() async throws {
        struct User: Decodable { let userID: Int; let joinedAt: Date }
        var config = RequestQueueConfiguration.default
        config.callbackQueue = TestQueues.callbacks
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/7", json: #"{"user_id": 7, "joined_at": "2026-11-25T10:00:00Z"}"#)
        config.transport = .fixtures(fixtures)
        config.decoding = ResponseDecoding(keyStyle: .snakeCase, dateStyle: .iso8601)
        let queue = RequestQueue(configuration: config, baseURL: URL(string: "https://api.example.com"))
        let user = try await queue.send(DecodableRequest<User>(path: "/users/7"))
        XCTAssertEqual(user.userID, 7)
        XCTAssertEqual(user.joinedAt, Date(timeIntervalSince1970: 1_795_600_800))
    }

    // Requests and Responses › Responses: serializationFailed names the type and coding path.
    func testSerializationFailureNamesTheCodingPath() async throws {
        struct Greeting: Response, Decodable { let message: String }
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/greeting", json: #"{"message": 12}"#)
        do {
            _ = try await DocsSupport.queue(fixtures).send(AnyRequest<Greeting>(path: "/greeting"))
            XCTFail("expected serializationFailed")
        } catch {
            guard case .serializationFailed(let type, _) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(type.hasSuffix("Greeting"), type)
            XCTAssertTrue(error.description.contains("expected String at message"), error.description)
        }
    }

    // Requests and Responses › Responses: accepts taking a 404.
    func testAcceptsCanTakeMoreStatuses() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/1", json: #"{"id": 1, "name": "Ada"}"#)
        fixtures.stub(.get, "/users/2", status: 404, json: #"{"error": "no such user"}"#)
        let queue = DocsSupport.queue(fixtures)
        let found = try await queue.send(AnyRequest<UserLookup>(path: "/users/1"))
        let missing = try await queue.send(AnyRequest<UserLookup>(path: "/users/2"))
        XCTAssertEqual(found.user, User(id: 1, name: "Ada"))
        XCTAssertNil(missing.user)
    }

    // Requests and Responses › Reading the body (verbatim lines, on a JSON object body).
    func testResponseDataViews() throws {
        let data = ResponseData(Data(#"{"id": 1, "name": "Ada"}"#.utf8))
        let text = data.string                          // String?, nil when the body is not UTF-8
        let object = try data.jsonObject                // [String: Any]
        let user = try data.decode(User.self)           // any Decodable, with an optional decoder
        XCTAssertEqual(text, #"{"id": 1, "name": "Ada"}"#)
        XCTAssertEqual(object["name"] as? String, "Ada")
        XCTAssertEqual(user, User(id: 1, name: "Ada"))

        let list = try ResponseData(Data(#"[{"id": 1}]"#.utf8)).jsonArray
        XCTAssertEqual(list.first?["id"] as? Int, 1)
        XCTAssertThrowsError(try data.jsonArray)
        XCTAssertNil(ResponseData(Data([0xFF, 0xFE])).string)
        XCTAssertThrowsError(try ResponseData(Data()).decode(User.self))
    }

    // Requests and Responses › Responses without a body.
    func testEmptyResponseAcceptsNoBodyButStillValidates() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.head, "/ping", status: 204)
        fixtures.stub(.get, "/broken", status: 500, body: Data("oops".utf8))
        let queue = DocsSupport.queue(fixtures)
        let pong = try await queue.send(AnyRequest<EmptyResponse>(path: "/ping", method: .head))
        XCTAssertEqual(pong, EmptyResponse())
        do {
            _ = try await queue.send(AnyRequest<EmptyResponse>(path: "/broken"))
            XCTFail("expected a validation failure")
        } catch {
            XCTAssertEqual(error.statusCode, 500)
        }
    }

    // Requests and Responses › Errors: the switch sample, on an ID observer's result.
    func testSwitchingOverTheResult() throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/account", status: 404, body: Data("gone".utf8))
        let queue = DocsSupport.queue(fixtures)
        let printed = Recorder<String>()
        let done = expectation(description: "result")
        let print: @Sendable (Any...) -> Void = { items in printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        queue.addObserver(for: queue.add(AccountRequest())) { (result: Result<Account, RequestError>) in
            switch result {
            case .success(let account): print(account.name)
            case .failure(.validationFailed(let response, let body)) where response.statusCode == 404:
                print("Not found:", body.string ?? "")
            case .failure(.cancelled): break
            case .failure(let error): print(error)
            }
            done.fulfill()
        }
        wait(for: [done], timeout: 30)
        XCTAssertEqual(printed.all, ["Not found: gone"])
    }

    // Requests and Responses › One-off calls (verbatim).
    struct Post: Decodable { let id: Int; let title: String }
    struct NewPost: JSONBodyData { let title: String }

    func testOneOffCalls() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/posts", json: #"[{"id": 1, "title": "One"}]"#)
        fixtures.add(Fixture(method: .post, path: "/posts", bodyJSON: #"{"title": "Hello"}"#, status: 201,
                             body: Data(#"{"id": 2, "title": "Hello"}"#.utf8)))
        fixtures.stub(.delete, "/posts/2", status: 204)
        let queue = DocsSupport.queue(fixtures)

        let posts = try await queue.send(.get("/posts", as: [Post].self))
        let created = try await queue.reply(to: .post("/posts", NewPost(title: "Hello"), as: Post.self))
        try await queue.send(.delete("/posts/\(created.value.id)"))

        XCTAssertEqual(posts.map(\.title), ["One"])
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(fixtures.receivedRequests.map { "\($0.httpMethod ?? "") \($0.url?.path ?? "")" },
                       ["GET /v1/posts", "POST /v1/posts", "DELETE /v1/posts/2"])
    }

    // Requests and Responses › Errors: a typed error body (verbatim).
    struct APIError: Decodable { let error: String; let code: Int }

    struct SignUp: JSONBodyData { let name: String }

    struct SignUpRequest: Request {
        typealias ResponseType = Account
        typealias ErrorBody = APIError
        var parameters: SignUp
        var path: String { "/accounts" }
        var method: HTTPMethod { .post }
    }

    func testATypedErrorBody() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.post, "/accounts", status: 422, json: #"{"error": "name is taken", "code": 42}"#)
        let queue = DocsSupport.queue(fixtures)
        let form = SignUp(name: "ada")
        let printed = Recorder<String>()
        let print: @Sendable (Any) -> Void = { printed.append("\($0)") }

        do {
            _ = try await queue.send(SignUpRequest(parameters: form))
        } catch {
            print(error.errorBody(as: APIError.self)?.error ?? error.description)
        }
        XCTAssertEqual(printed.all, ["name is taken"])
    }
}
