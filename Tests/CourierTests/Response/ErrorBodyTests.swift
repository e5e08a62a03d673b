import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// A request names the type of its server's error body; a rejected response carries it decoded.
final class ErrorBodyTests: XCTestCase {
    struct APIError: Decodable, Sendable, Equatable {
        let errorMessage: String
        let code: Int
    }

    struct Account: Decodable, Sendable { let id: Int }

    struct SignUp: Request {
        typealias ResponseType = Account
        typealias ErrorBody = APIError
        var path: String { "/accounts" }
        var method: HTTPMethod { .post }
    }

    struct Plain: Request {
        typealias ResponseType = Account
        var path: String { "/accounts" }
        var method: HTTPMethod { .post }
    }

    private func queue(_ fixtures: FixtureTransport) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .fixtures(fixtures)
        configuration.decoding = ResponseDecoding(keyStyle: .snakeCase)
        return RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com"))
    }

    private struct DidNotFail: Error {}

    private func failure<R: Request>(of request: R, on queue: RequestQueue) async throws -> RequestError {
        do {
            _ = try await queue.send(request)
        } catch {
            return error
        }
        XCTFail("the request did not fail")
        throw DidNotFail()
    }

    func testARejectedResponseCarriesItsErrorBodyDecodedWithTheRawBodyStillThere() async throws {
        // Given a 422 with a snake_case error body, and a queue decoding snake_case
        let fixtures = FixtureTransport()
        let json = #"{"error_message": "name is taken", "code": 42}"#
        fixtures.stub(.post, "/accounts", status: 422, json: json)

        // When a request naming its error body type fails
        let error = try await failure(of: SignUp(), on: queue(fixtures))

        // Then the error body is one line away, decoded with the queue's decoding, and the
        // status and raw body are still there
        XCTAssertEqual(error.errorBody(as: APIError.self), APIError(errorMessage: "name is taken", code: 42))
        XCTAssertEqual(error.statusCode, 422)
        guard case .validationFailed(_, let body) = error else { return XCTFail("\(error)") }
        XCTAssertEqual(body.string, json)
    }

    func testABodyThatDoesNotDecodeLeavesTheErrorBodyNilAndTheBytes() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.post, "/accounts", status: 502, headers: ["Content-Type": "text/html"], body: Data("<h1>Bad gateway</h1>".utf8))
        let error = try await failure(of: SignUp(), on: queue(fixtures))
        XCTAssertNil(error.errorBody(as: APIError.self))
        guard case .validationFailed(_, let body) = error else { return XCTFail("\(error)") }
        XCTAssertEqual(body.string, "<h1>Bad gateway</h1>")
    }

    func testARequestNamingNoErrorBodyHasItsBodyDecodedWhenAsked() async throws {
        // Given a 422 with a snake_case error body
        let fixtures = FixtureTransport()
        fixtures.stub(.post, "/accounts", status: 422, json: #"{"error_message": "name is taken", "code": 42}"#)
        fixtures.stub(.delete, "/accounts/1", status: 409, json: #"{"error_message": "in use", "code": 7}"#)

        // When requests that name no error body type fail: a type of one's own, and an Endpoint
        let plain = try await failure(of: Plain(), on: queue(fixtures))
        let endpoint = try await failure(of: Endpoint<EmptyParameters, EmptyResponse>.delete("/accounts/1"), on: queue(fixtures))

        // Then the body decodes when asked, with the queue's decoding (snake_case)
        XCTAssertEqual(plain.errorBody(as: APIError.self), APIError(errorMessage: "name is taken", code: 42))
        XCTAssertEqual(endpoint.errorBody(as: APIError.self), APIError(errorMessage: "in use", code: 7))

        // And a type the body does not decode as, and other errors, give nil
        XCTAssertNil(plain.errorBody(as: [String: String].self), "code is a number")
        XCTAssertNil(RequestError.timedOut.errorBody(as: APIError.self))
    }

    func testARequestsOwnDecodingDecodesItsErrorBody() async throws {
        // Given a request that decodes its responses with keys as declared, on a snake_case queue
        struct Camel: Request {
            typealias ResponseType = Account
            var path: String { "/accounts" }
            var method: HTTPMethod { .post }
            var decoding: ResponseDecoding? { .default }
        }
        let fixtures = FixtureTransport()
        fixtures.stub(.post, "/accounts", status: 422, json: #"{"errorMessage": "name is taken", "code": 42}"#)

        // When it fails, its error body decodes with the request's decoding, not the queue's
        let error = try await failure(of: Camel(), on: queue(fixtures))
        XCTAssertEqual(error.errorBody(as: APIError.self), APIError(errorMessage: "name is taken", code: 42))
    }

    func testTheErrorBodyIsNotPartOfTheBodysValue() {
        var decoded = ResponseData(Data("{}".utf8))
        decoded.errorBody = APIError(errorMessage: "x", code: 1)
        XCTAssertEqual(decoded, ResponseData(Data("{}".utf8)))
        XCTAssertEqual(decoded.hashValue, ResponseData(Data("{}".utf8)).hashValue)
    }
}
