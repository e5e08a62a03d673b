// Mirrors the article "Getting Started" (Courier.docc/GettingStarted.md).
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class GettingStartedDocsTests: XCTestCase {
    // Getting Started › Describe a request and its response (verbatim)
    struct Profile: Decodable {
        let id: Int
        let name: String
    }

    struct ProfileRequest: Request {
        typealias ResponseType = Profile
        let userID: Int
        var path: String { "/users/\(userID)" }
    }

    // Getting Started › The shared queue (verbatim)
    struct PingRequest: Request {
        typealias ResponseType = EmptyResponse
        var path: String { "https://status.example.com/ping" }
        var method: HTTPMethod { .head }
    }

    // Getting Started › The callback queue on Linux: `Tool`, without `@main` (a test target
    // cannot have an entry point). Compiled, not run: it would reach the network.
    struct Tool {
        static func main() async throws {
            let queue = RequestQueue(baseURL: URL(string: "https://api.example.com/v1"))
            let profile = try await queue.send(ProfileRequest(userID: 42))
            print(profile.name)
        }
    }

    private func fixtures() -> FixtureTransport {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/42", headers: ["ETag": "\"v7\""], json: #"{"id": 42, "name": "Ada"}"#)
        fixtures.stub(.get, "/users/7", status: 404, json: #"{"error": "no such user"}"#)
        return fixtures
    }

    // Getting Started › Make a queue: relative paths are appended to the base URL's path.
    func testMakeAQueueResolvesPathsAgainstTheBaseURL() throws {
        let queue = RequestQueue(baseURL: URL(string: "https://api.example.com/v1"))
        XCTAssertEqual(try queue.curlCommand(for: ProfileRequest(userID: 42)), "curl 'https://api.example.com/v1/users/42'")
        XCTAssertEqual(queue.configuration.maxConcurrentRequests, 6)
        XCTAssertEqual(queue.configuration.timeoutInterval, 60)
        XCTAssertEqual(queue.configuration.callbackQueue.label, DispatchQueue.main.label)
    }

    // Getting Started › Add a request and observe it by ID (+ the callback-queue configuration
    // of "The callback queue on Linux", with the fixtures as transport).
    func testAddAndObserveByID() throws {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = DispatchQueue(label: "com.example.results")
        configuration.transport = .fixtures(fixtures())
        let queue = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))

        let printed = Recorder<String>()
        let done = expectation(description: "observer")
        let print: @Sendable (Any) -> Void = { printed.append("\($0)"); done.fulfill() }

        let id = queue.add(ProfileRequest(userID: 42))
        queue.addObserver(for: id) { (result: Result<Profile, RequestError>) in
            switch result {
            case .success(let profile): print("Hello, \(profile.name)")
            case .failure(let error): print(error)
            }
        }
        wait(for: [done], timeout: 30)
        XCTAssertEqual(printed.all, ["Hello, Ada"])
    }

    // Getting Started › Send from async code (both samples).
    func testSendAndCatchTypedErrors() async throws {
        let queue = DocsSupport.queue(fixtures())
        let printed = Recorder<String>()
        let print: @Sendable (Any) -> Void = { printed.append("\($0)") }

        let profile = try await queue.send(ProfileRequest(userID: 42))
        print(profile.name)

        do {
            let profile = try await queue.send(ProfileRequest(userID: 7))
            print(profile.name)
        } catch .validationFailed(let response, _) where response.statusCode == 404 {
            print("No such user")
        } catch {
            print(error)    // a sentence such as "The server answered with status 500 (…)"
        }
        XCTAssertEqual(printed.all, ["Ada", "No such user"])
    }

    // Getting Started › Send from async code: a Reply (verbatim lines), and an ID observer of one.
    func testAReplyHasTheValueWithItsResponse() async throws {
        let queue = DocsSupport.queue(fixtures())
        let printed = Recorder<String>()
        let print: @Sendable (Any...) -> Void = { printed.append($0.map { "\($0)" }.joined(separator: " ")) }

        let reply = try await queue.reply(to: ProfileRequest(userID: 42))
        print(reply.value.name, reply.status, reply.headerFields["ETag"] ?? "-", reply.source == .network)

        XCTAssertEqual(printed.all, [#"Ada 200 "v7" true"#])
        let id = queue.add(ProfileRequest(userID: 42))
        let observed = try XCTUnwrap(result(of: id, on: queue, as: Reply<Profile>.self)).get()
        XCTAssertEqual(observed.value, Profile(id: 42, name: "Ada"))
    }

    // Courier (landing page) › Overview: the same types, and `send` (through fixtures here; the
    // sample's `RequestQueue(baseURL:)` line is the one of testMakeAQueueResolvesPathsAgainstTheBaseURL).
    func testLandingPageSample() async throws {
        let queue = DocsSupport.queue(fixtures())
        let profile = try await queue.send(ProfileRequest(userID: 42))
        XCTAssertEqual(profile.id, 42)
        XCTAssertEqual(profile.name, "Ada")
    }

    // Getting Started › The shared queue: no base URL, absolute paths. Nothing is sent here.
    func testSharedQueueTakesAbsoluteURLs() throws {
        XCTAssertNil(RequestQueue.shared.baseURL)
        XCTAssertEqual(try RequestQueue.shared.curlCommand(for: PingRequest()), "curl -X HEAD 'https://status.example.com/ping'")
        // The sample's call, compiled but not run (it would reach the network):
        let sample = { RequestQueue.shared.add(PingRequest()) }
        _ = sample
    }

    // Getting Started › The shared queue: a relative path without a base URL is invalidURL.
    func testRelativePathWithoutBaseURLIsInvalidURL() async {
        let fixtures = fixtures()
        let queue = DocsSupport.queue(fixtures, baseURL: nil)
        do {
            _ = try await queue.send(ProfileRequest(userID: 42))
            XCTFail("expected invalidURL")
        } catch {
            guard case .invalidURL(let text, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(text, "/users/42")
        }
        XCTAssertTrue(fixtures.receivedRequests.isEmpty)
        _ = Tool.self
    }
}

// The other articles reuse these types; Testing with Fixtures compares profiles.
extension GettingStartedDocsTests.Profile: Equatable {}
