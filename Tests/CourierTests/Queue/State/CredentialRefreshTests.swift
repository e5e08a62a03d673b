import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

final class CredentialRefreshTests: XCTestCase {
    private func attempt(_ raw: UInt64, generation: Int = 0) -> Attempt {
        var attempt = Attempt(id: RequestID(rawValue: raw), box: RequestBox(request: PathRequest<Greeting>("/me")),
                              original: PreparedRequest(urlRequest: URLRequest(url: URL(string: "https://example.com/me")!)))
        attempt.credentialGeneration = generation
        return attempt
    }

    func testTheFirstRefusedStartsTheOneRefreshAndTheOthersWait() {
        var refresh = CredentialRefresh()
        XCTAssertEqual(refresh.refused(attempt(1)), .startRefresh)
        XCTAssertEqual(refresh.refused(attempt(2)), .wait)
        XCTAssertEqual(refresh.refused(attempt(3)), .wait)

        // Every waiting attempt comes back once, when the refresh ends
        XCTAssertEqual(refresh.finish(succeeded: true).map(\.id.rawValue), [1, 2, 3])
        XCTAssertEqual(refresh.waitingCount, 0)
        XCTAssertEqual(refresh.generation, 1)
        XCTAssertEqual(refresh.finish(succeeded: true).count, 0, "none is handed back twice")
    }

    func testAnAttemptSentWithOldCredentialsIsRetriedWithoutAnotherRefresh() {
        var refresh = CredentialRefresh()
        XCTAssertEqual(refresh.refused(attempt(1)), .startRefresh)
        _ = refresh.finish(succeeded: true)

        // Sent before that refresh (generation 0): the new credentials may work
        XCTAssertEqual(refresh.refused(attempt(2, generation: 0)), .retryNow)
        XCTAssertEqual(refresh.waitingCount, 0)
        // Sent with the new credentials and refused again: a new refresh
        XCTAssertEqual(refresh.refused(attempt(3, generation: 1)), .startRefresh)
    }

    func testAFailedRefreshKeepsTheGenerationAndAllowsTheNextOne() {
        var refresh = CredentialRefresh()
        XCTAssertEqual(refresh.refused(attempt(1)), .startRefresh)
        XCTAssertEqual(refresh.finish(succeeded: false).map(\.id.rawValue), [1])
        XCTAssertEqual(refresh.generation, 0)
        XCTAssertEqual(refresh.refused(attempt(2)), .startRefresh)
    }

    func testARequestThatEndsWhileWaitingIsNotHandedBack() {
        var refresh = CredentialRefresh()
        _ = refresh.refused(attempt(1))
        _ = refresh.refused(attempt(2))
        refresh.forget(RequestID(rawValue: 1))
        XCTAssertEqual(refresh.finish(succeeded: true).map(\.id.rawValue), [2])
    }
}
