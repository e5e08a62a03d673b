import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Response types and decoding against a real httpbin, through the run's transport.
final class ResponseTypesIntegrationTests: XCTestCase {
    struct Fetch<ResponseType: Decodable & Sendable>: Request {
        var path: String
        init(_ path: String, as type: ResponseType.Type = ResponseType.self) { self.path = path }
    }

    func testSnakeCaseKeysFromTheServerAreDecodedWithTheQueuesDecoding() async throws {
        // Given httpbin echoing snake_case keys as JSON, and a queue that decodes snake_case
        struct Echoed: Decodable, Equatable { let firstName: String; let userID: String }
        let queue = try HTTPBin.queue { $0.decoding = ResponseDecoding(keyStyle: .snakeCase) }

        // When it is fetched into camelCase properties (an acronym among them)
        let echoed = try await queue.send(Fetch("/response-headers?first_name=Ada&user_id=7", as: Echoed.self))

        // Then both are found under the keys the server wrote
        XCTAssertEqual(echoed, Echoed(firstName: "Ada", userID: "7"))
    }

    func testTheSlideshowDecodesAsADictionaryAndAnArrayOfItsSlides() async throws {
        // Given httpbin's /json document
        struct Slideshow: Decodable { let slideshow: Show }
        struct Show: Decodable { let author: String; let slides: [Slide] }
        struct Slide: Decodable, Equatable { let title: String; let type: String }
        let queue = try HTTPBin.queue()

        // When it is fetched as a model, as a dictionary of JSON values and as text
        let show = try await queue.send(Fetch("/json", as: Slideshow.self)).slideshow
        let text = try await queue.send(Fetch("/json", as: String.self))
        let bytes = try await queue.send(Fetch("/json", as: Data.self))

        // Then each is what httpbin sent
        XCTAssertEqual(show.author, "Yours Truly")
        XCTAssertEqual(show.slides, [Slide(title: "Wake up to WonderWidgets!", type: "all"), Slide(title: "Overview", type: "all")])
        XCTAssertTrue(text.hasPrefix("{"), text)
        XCTAssertTrue(text.contains(#""title": "Sample Slide Show""#), text)
        XCTAssertEqual(Data(text.utf8), bytes)
    }

    func testANoContentAnswerIsNilForAnOptionalAndAnErrorStatusStillFails() async throws {
        // Given httpbin answering 204 and 418
        struct Anything: Decodable {}
        let queue = try HTTPBin.queue()

        // Then an optional is nil for the 204, and the 418 is a validation failure with its status
        let none = try await queue.send(Fetch("/status/204", as: Anything?.self))
        XCTAssertNil(none)
        do {
            _ = try await queue.send(Fetch("/status/418", as: Anything?.self))
            XCTFail("expected a validation failure")
        } catch {
            guard case .validationFailed(let response, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(response.statusCode, 418)
        }
    }
}

/// Typed error bodies from a real server (Scripts/sse_server.py's /problem/CODE).
final class ErrorBodyIntegrationTests: XCTestCase {
    struct Problem: Decodable, Sendable, Equatable { let errorMessage: String; let code: Int; let method: String }
    struct Nothing: Decodable, Sendable {}
    struct Create: Request {
        typealias ResponseType = Nothing
        typealias ErrorBody = Problem
        var path: String { "/problem/422" }
        var method: HTTPMethod { .post }
    }

    func testAServersErrorBodyIsDecodedIntoTheRequestsErrorBodyType() async throws {
        // Given the origin answering a POST with 422 and a snake_case error body
        let base = try HTTPBin.sseServer()
        var configuration = RequestQueueConfiguration.default
        configuration.transport = HTTPBin.transport
        configuration.callbackQueue = TestQueues.callbacks
        configuration.decoding = ResponseDecoding(keyStyle: .snakeCase)
        let queue = RequestQueue(configuration: configuration, baseURL: base)

        // When the request fails
        do {
            _ = try await queue.send(Create())
            XCTFail("expected a 422")
        } catch {
            // Then its error body is decoded, and shows the server saw a POST
            XCTAssertEqual(error.statusCode, 422)
            XCTAssertEqual(error.errorBody(as: Problem.self), Problem(errorMessage: "problem 422", code: 422, method: "POST"))
        }
    }
}

/// One-off calls against httpbin, checking what it received.
final class EndpointIntegrationTests: XCTestCase {
    struct NewPost: JSONBodyData { let title: String; let authorID: Int }
    struct Received: Decodable, Sendable {
        let method: String
        let json: [String: JSONValue]?
        let args: [String: String]
        let headers: [String: String]
    }
    enum JSONValue: Decodable, Sendable, Equatable {
        case text(String), number(Double)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) { self = .text(text) } else { self = .number(try container.decode(Double.self)) }
        }
    }
    struct Search: DefaultQueryString { let text: String }

    func testAOneOffPostAndGetReachTheServerAsWritten() async throws {
        let queue = try HTTPBin.queue()

        // When a JSON body is posted and a query sent, as one-offs
        let posted = try await queue.reply(to: .post("/anything/posts", NewPost(title: "Hello", authorID: 7),
                                                     headers: ["X-Client": "one-off"], as: Received.self))
        let searched = try await queue.send(.get("/anything/search", query: Search(text: "swift code"), as: Received.self))

        // Then httpbin received the method, the snake_case JSON, its content type and the header
        XCTAssertEqual(posted.status, 200)
        XCTAssertEqual(posted.value.method, "POST")
        XCTAssertEqual(posted.value.json, ["title": .text("Hello"), "author_id": .number(7)])
        XCTAssertEqual(posted.value.headers["Content-Type"], "application/json")
        XCTAssertEqual(posted.value.headers["X-Client"], "one-off")
        XCTAssertEqual(searched.method, "GET")
        XCTAssertEqual(searched.args, ["text": "swift code"])
    }
}

/// A request's own redirect policy against httpbin's /redirect/N.
final class RedirectPolicyIntegrationTests: XCTestCase {
    struct Probe: Request {
        typealias ResponseType = RawResponse
        var path: String
        var redirectPolicy: RedirectPolicy?
    }

    func testARequestSeesTheRedirectItDoesNotFollowAndFollowsAsFarAsItSays() async throws {
        let queue = try HTTPBin.queue { $0.redirectPolicy = .never }

        let stopped = try await queue.send(Probe(path: "/redirect/2"))
        let followed = try await queue.send(Probe(path: "/redirect/2", redirectPolicy: .follow(maximum: 2)))

        XCTAssertEqual(stopped.status, 302)
        XCTAssertEqual(stopped.head.headerFields["Location"], "/relative-redirect/1")
        XCTAssertEqual(followed.status, 200)
        XCTAssertEqual(followed.head.url.path, "/get")
    }
}
