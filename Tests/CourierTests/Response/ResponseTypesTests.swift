import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// What a request's `ResponseType` may be, and how each kind is made: any Decodable from JSON
/// (arrays, dictionaries, optionals), `String` and `Data` from the body as it is, a `Response` by
/// itself; with the queue's decoding or the request's.
final class ResponseTypesTests: XCTestCase {
    struct Post: Decodable, Sendable, Equatable {
        let id: Int
        let title: String
    }

    /// A GET of any path whose response type is any Decodable: no `method`, no wrapper type.
    struct Fetch<ResponseType: Decodable & Sendable>: Request {
        var path: String
        init(_ path: String, as type: ResponseType.Type = ResponseType.self) { self.path = path }
    }

    private func queue(_ fixtures: FixtureTransport, decoding: ResponseDecoding = .default) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .fixtures(fixtures)
        configuration.decoding = decoding
        return RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))
    }

    func testAnArrayOfModelsIsAResponseAndARequestIsAGetByDefault() async throws {
        // Given an API that answers a JSON array
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/posts", json: #"[{"id": 1, "title": "One"}, {"id": 2, "title": "Two"}]"#)
        let queue = queue(fixtures)
        struct PostsRequest: Request {
            typealias ResponseType = [Post]
            var path: String { "/posts" }
        }

        // When a request declaring only its path and `[Post]` is sent
        let posts = try await queue.send(PostsRequest())

        // Then the array is decoded, and the request went out as a GET
        XCTAssertEqual(posts, [Post(id: 1, title: "One"), Post(id: 2, title: "Two")])
        XCTAssertEqual(fixtures.receivedRequests.map { "\($0.httpMethod ?? "?") \($0.url!.path)" }, ["GET /v1/posts"])
    }

    func testObserversOfAnArrayTypeGetItsResults() throws {
        // Given an observer of [Post] results
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/posts", json: #"[{"id": 7, "title": "Seven"}]"#)
        let queue = queue(fixtures)
        let owner = ObserverOwner()
        let delivered = expectation(description: "observed")
        let results = Recorder<Result<[Post], RequestError>>()
        queue.addObserver(ownedBy: owner) { (result: Result<[Post], RequestError>) in
            results.append(result)
            delivered.fulfill()
        }

        // When a request of that type ends
        queue.add(Fetch("/posts", as: [Post].self))

        // Then the observer has its value
        wait(for: [delivered], timeout: 30)
        XCTAssertEqual(try results.all.first?.get(), [Post(id: 7, title: "Seven")])
        withExtendedLifetime(owner) {}
    }

    func testAnOptionalIsNilForAnEmptyBodyOrNullAndTheValueOtherwise() async throws {
        // Given a 204, a JSON null, a post, and a 404
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/none", status: 204)
        fixtures.stub(.get, "/null", json: "null")
        fixtures.stub(.get, "/one", json: #"{"id": 1, "title": "One"}"#)
        fixtures.stub(.get, "/missing", status: 404, json: #"{"error": "no"}"#)
        let queue = queue(fixtures)

        // Then an optional response type is nil, nil, the post, and a validation failure
        let none = try await queue.send(Fetch("/none", as: Post?.self))
        let null = try await queue.send(Fetch("/null", as: Post?.self))
        let one = try await queue.send(Fetch("/one", as: Post?.self))
        XCTAssertNil(none)
        XCTAssertNil(null)
        XCTAssertEqual(one, Post(id: 1, title: "One"))
        do {
            _ = try await queue.send(Fetch("/missing", as: Post?.self))
            XCTFail("a 404 is not an absent value")
        } catch {
            guard case .validationFailed(let response, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(response.statusCode, 404)
        }
    }

    func testStringDataAndDictionariesAreResponses() async throws {
        // Given a Latin-1 text, bytes that are no text, and a JSON object of counts
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/latin1", headers: ["Content-Type": "text/plain; charset=ISO-8859-1"], body: Data([0x63, 0x61, 0x66, 0xE9]))
        fixtures.stub(.get, "/utf8", headers: ["Content-Type": "text/plain"], body: Data("café".utf8))
        fixtures.stub(.get, "/bytes", headers: ["Content-Type": "application/octet-stream"], body: Data([0xFF, 0x00, 0xFE]))
        fixtures.stub(.get, "/counts", json: #"{"a": 1, "b": 2}"#)
        let queue = queue(fixtures)

        // Then String takes the text in its charset, Data the bytes, and a dictionary is decoded
        let latin1 = try await queue.send(Fetch("/latin1", as: String.self))
        let utf8 = try await queue.send(Fetch("/utf8", as: String.self))
        let bytes = try await queue.send(Fetch("/bytes", as: Data.self))
        let counts = try await queue.send(Fetch("/counts", as: [String: Int].self))
        XCTAssertEqual(latin1, "café")
        XCTAssertEqual(utf8, "café")
        XCTAssertEqual(bytes, Data([0xFF, 0x00, 0xFE]))
        XCTAssertEqual(counts, ["a": 1, "b": 2])

        // And bytes that are not text fail, saying to take Data
        do {
            _ = try await queue.send(Fetch("/bytes", as: String.self))
            XCTFail("expected a failure")
        } catch {
            XCTAssertEqual("\(error)", "Cannot make Swift.String from the response: the body is not valid text in its charset "
                + "(Content-Type: application/octet-stream); use Data as the response type to take its bytes.")
        }
    }

    func testAGenericDecodableRequestWhoseTypeIsStringTakesTheBodyAsText() async throws {
        // `Fetch<String>` is compiled knowing only that its type is Decodable; at run time
        // String's own way (the text, not a JSON string) still wins.
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/hello", headers: ["Content-Type": "text/plain"], body: Data("hello".utf8))
        let text = try await queue(fixtures).send(Fetch("/hello", as: String.self))
        XCTAssertEqual(text, "hello")
    }

    func testTheQueuesDecodingAppliesAndARequestsOwnWins() async throws {
        // Given ISO 8601 dates, a queue that decodes them, and a request that decodes seconds
        struct Event: Decodable, Sendable { let at: Date }
        struct EventInSeconds: Request {
            typealias ResponseType = Event
            var path: String { "/seconds" }
            var decoding: ResponseDecoding? { .default }
        }
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/iso", json: #"{"at": "2026-11-25T10:00:00Z"}"#)
        fixtures.stub(.get, "/seconds", json: #"{"at": 0}"#)
        let iso = JSONDecoder()
        iso.dateDecodingStrategy = .iso8601
        let queue = queue(fixtures, decoding: ResponseDecoding(decoder: iso))

        // Then each is decoded with the decoding that applies to it
        let fromQueue = try await queue.send(Fetch("/iso", as: Event.self))
        let fromRequest = try await queue.send(EventInSeconds())
        XCTAssertEqual(fromQueue.at, Date(timeIntervalSince1970: 1_795_600_800))
        XCTAssertEqual(fromRequest.at, Date(timeIntervalSinceReferenceDate: 0))
    }

    func testAResponseAndDecodableTypeIsDecodedWithTheQueuesDecoding() async throws {
        // Given a Courier 1 style type, Response and Decodable, and a queue decoding ISO dates
        struct Stamp: Response, Decodable { let at: Date }
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/stamp", json: #"{"at": "2026-11-25T10:00:00Z"}"#)
        let iso = JSONDecoder()
        iso.dateDecodingStrategy = .iso8601
        let queue = queue(fixtures, decoding: ResponseDecoding(decoder: iso))

        // Then its default initializer uses the queue's decoding
        let stamp = try await queue.send(PathRequest<Stamp>("/stamp"))
        XCTAssertEqual(stamp.at, Date(timeIntervalSince1970: 1_795_600_800))
    }

    func testARequestCanMakeItsValueItselfAndChooseWhatItAccepts() async throws {
        // Given an API that wraps its data in an envelope, and answers 404 for an empty search
        struct Envelope<T: Decodable>: Decodable { let data: T }
        struct Search: Request {
            typealias ResponseType = [Post]
            var path: String
            func accepts(_ head: ResponseHead) -> Bool { head.isSuccess || head.status == 404 }
            func makeResponse(body: ResponseData, head: ResponseHead, decoding: ResponseDecoding) throws -> [Post] {
                head.status == 404 ? [] : try decoding.decode(Envelope<[Post]>.self, from: body).data
            }
        }
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/search", query: ["q": "swift"], json: #"{"data": [{"id": 3, "title": "Swift"}]}"#)
        fixtures.stub(.get, "/search", query: ["q": "cobol"], status: 404, json: #"{"error": "nothing"}"#)
        let queue = queue(fixtures)

        // Then the request's own hooks decide
        let swift = try await queue.send(Search(path: "/search?q=swift"))
        let cobol = try await queue.send(Search(path: "/search?q=cobol"))
        XCTAssertEqual(swift, [Post(id: 3, title: "Swift")])
        XCTAssertEqual(cobol, [])
    }

    func testAResponseTypeReadsTheHeadAndDecidesWhatItAccepts() async throws {
        // Given a type that keeps a header and accepts a 304
        struct Tagged: Response {
            let etag: String?
            let status: Int
            init(body: ResponseData, head: ResponseHead) { etag = head.headerFields["etag"]; status = head.status }
            static func accepts(_ head: ResponseHead) -> Bool { head.isSuccess || head.status == 304 }
        }
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/tagged", status: 304, headers: ["ETag": "\"v2\""])
        let tagged = try await queue(fixtures).send(PathRequest<Tagged>("/tagged"))
        XCTAssertEqual(tagged.etag, "\"v2\"")
        XCTAssertEqual(tagged.status, 304)
    }

    func testAnEmptyBodyForANonOptionalTypeSaysSo() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/empty", status: 200)
        do {
            _ = try await queue(fixtures).send(Fetch("/empty", as: [Post].self))
            XCTFail("expected a failure")
        } catch {
            XCTAssertTrue("\(error)".contains("The response has an empty body, but Array<Post> needs one"), "\(error)")
        }
    }
}
