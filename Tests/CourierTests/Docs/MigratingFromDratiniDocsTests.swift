// Mirrors the article "Migrating from Dratini" (Courier.docc/MigratingFromDratini.md).
// The article's Dratini sample is Dratini code and is not compiled; the Courier one is.
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class MigratingFromDratiniDocsTests: XCTestCase {
    // Scaffolding: the parameters the sample keeps from Dratini.
    struct LogInParameters: URLEncodedBodyData { let username: String; let password: String }

    // Migrating from Dratini › API mapping, the Courier sample (verbatim)
    struct LogInRequest: Request {
        typealias ResponseType = LogInResponse
        var parameters: LogInParameters
        var path: String { "/login" }
        var method: HTTPMethod { .post }
    }
    struct LogInResponse: Decodable {
        let name: String
    }

    func testMigratedRequestAndObserver() throws {
        let fixtures = FixtureTransport()
        fixtures.add(Fixture(method: .post, path: "/login", bodyContains: "username=ada&password=secret",
                             body: Data(#"{"name": "Ada"}"#.utf8)))
        let queue = DocsSupport.queue(fixtures)
        let printed = Recorder<String>()
        let done = expectation(description: "observer")
        let print: @Sendable (Any) -> Void = { printed.append("\($0)"); done.fulfill() }

        let id = queue.add(LogInRequest(parameters: LogInParameters(username: "ada", password: "secret")))
        queue.addObserver(for: id) { (result: Result<LogInResponse, RequestError>) in
            guard let response = try? result.get() else { return }
            print(response.name)
        }
        wait(for: [done], timeout: 30)
        XCTAssertEqual(printed.all, ["Ada"])
    }

    // Migrating from Dratini › API mapping: RequestID is a Comparable struct around a UInt64;
    // delegate methods all have defaults; the shared queue has no base URL.
    func testMappingFacts() {
        final class Empty: RequestQueueDelegate {}
        struct R: Request { typealias ResponseType = EmptyResponse; var path: String { "/x" }; var method: HTTPMethod { .get } }
        let queue = DocsSupport.queue(FixtureTransport(), delegate: Empty())
        let first = queue.add(R()), second = queue.add(R())
        XCTAssertLessThan(first, second)
        XCTAssertEqual(second.rawValue, first.rawValue + 1)
        XCTAssertNil(RequestQueue.shared.baseURL)
        queue.cancelAll()
    }

    // Migrating from Dratini › Behaviour Courier fixes: a cancel right after add is not lost,
    // isFinished is false until delivery, and the ID observer is told.
    func testCancelRightAfterAdd() throws {
        struct R: Request { typealias ResponseType = EmptyResponse; var path: String { "/x" }; var method: HTTPMethod { .get } }
        let fixtures = FixtureTransport()
        fixtures.holdsAnswers = true   // the answer never comes: only the cancel can end the request
        fixtures.stub(.get, "/x")
        let queue = DocsSupport.queue(fixtures)
        let id = queue.add(R())
        XCTAssertFalse(queue.isFinished(id))
        queue.cancel(id)
        let done = expectation(description: "told")
        queue.addObserver(for: id) { (result: Result<EmptyResponse, RequestError>) in
            if case .failure(.cancelled) = result { done.fulfill() }
        }
        wait(for: [done], timeout: 30)
        XCTAssertEqual(fixtures.heldRequests, [])
    }
}
