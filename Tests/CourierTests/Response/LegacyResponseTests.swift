import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Response types written for Courier 1, against `HTTPURLResponse`, keep working.
final class LegacyResponseTests: XCTestCase {
    /// A Courier 1 type: its initializer and validation take an `HTTPURLResponse`. (Marked
    /// deprecated only so that the deprecation warning that users get does not fail this build.)
    @available(*, deprecated)
    struct Banner: Response, ResponseDelegate {
        static let seen = Recorder<String>()
        let text: String
        let contentType: String?
        init(data: ResponseData, response: HTTPURLResponse) throws {
            text = data.string ?? ""
            contentType = response.value(forHTTPHeaderField: "Content-Type")
        }
        static func validate(_ response: HTTPURLResponse) -> Bool {
            response.statusCode == 200 || response.statusCode == 410
        }
        func responseDidReceive(_ response: HTTPURLResponse) {
            Self.seen.append("\(response.statusCode) \(response.url?.path ?? "")")
        }
    }

    /// A type that adopts `Response` and implements no initializer.
    @available(*, deprecated)
    struct Nothing: Response {}

    private func queue(_ fixtures: FixtureTransport) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .fixtures(fixtures)
        return RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com"))
    }

    @available(*, deprecated)
    func testACourier1ResponseTypeIsMadeValidatedAndToldAsBefore() async throws {
        // Given a 410 the type's validate accepts, and a 404 it refuses
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/gone", status: 410, headers: ["Content-Type": "text/plain"], body: Data("gone".utf8))
        fixtures.stub(.get, "/missing", status: 404)
        let queue = queue(fixtures)

        // When both are sent
        let gone = try await queue.send(PathRequest<Banner>("/gone"))
        do {
            _ = try await queue.send(PathRequest<Banner>("/missing"))
            XCTFail("validate refuses a 404")
        } catch {
            guard case .validationFailed(let response, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(response.statusCode, 404)
        }

        // Then its own initializer, validation and delegate ran with an HTTPURLResponse
        XCTAssertEqual(gone.text, "gone")
        XCTAssertEqual(gone.contentType, "text/plain")
        XCTAssertEqual(Banner.seen.all, ["410 /gone"])
    }

    @available(*, deprecated)
    func testATypeWithNoInitializerFailsSayingWhatToImplement() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/x", json: "{}")
        do {
            _ = try await queue(fixtures).send(PathRequest<Nothing>("/x"))
            XCTFail("expected a failure")
        } catch {
            XCTAssertEqual("\(error)", "Cannot make CourierTests.LegacyResponseTests.Nothing from the response: the type adopts "
                + "Response but implements neither init(body:head:) nor init(data:response:); implement init(body:head:), "
                + "or drop Response and adopt Decodable to be decoded from JSON.")
        }
    }
}
