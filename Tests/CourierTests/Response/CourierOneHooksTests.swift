import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The Courier 1 hooks taking an `HTTPURLResponse` are called for the types that implement them,
/// and for no other: those get their answer without an `HTTPURLResponse` being made.
final class CourierOneHooksTests: XCTestCase {
    private let url = URL(string: "https://api.example.com/items")!

    private func head(_ status: Int) -> ResponseHead {
        ResponseHead(status: status, headerFields: ["X-Kind": "test"], url: url)
    }

    // Each test uses types of its own: what is learnt about a type lasts for the process.

    func testAResponseTypeWithoutValidateIsAcceptedWithoutAnHTTPURLResponseAfterTheFirst() {
        // Given a Response type that implements neither accepts nor validate
        struct Plain: Response { init(body: ResponseData, head: ResponseHead) {} }

        // When it is asked about responses, after a first one
        XCTAssertTrue(Plain.accepts(head(200)))
        let ok = head(204), refused = head(404)

        // Then the answers are the default's, and no HTTPURLResponse was made for them
        XCTAssertTrue(Plain.accepts(ok))
        XCTAssertFalse(Plain.accepts(refused))
        XCTAssertFalse(ok.hasHTTPURLResponse)
        XCTAssertFalse(refused.hasHTTPURLResponse)
    }

    func testAResponseTypesOwnValidateIsAskedEveryTime() {
        // Given a Courier 1 type that accepts 404 too, counting its calls
        let calls = Locked(0)
        struct Lenient: Response {
            nonisolated(unsafe) static var calls: Locked<Int>?
            init(body: ResponseData, head: ResponseHead) {}
            static func validate(_ response: HTTPURLResponse) -> Bool {
                calls?.withLock { $0 += 1 }
                return (200..<300).contains(response.statusCode) || response.statusCode == 404
            }
        }
        Lenient.calls = calls

        // Then its validate decides every time, the first included
        XCTAssertTrue(Lenient.accepts(head(404)))
        XCTAssertTrue(Lenient.accepts(head(404)))
        XCTAssertFalse(Lenient.accepts(head(500)))
        XCTAssertEqual(calls.withLock { $0 }, 3)
    }

    func testAValidateThatCallsAnotherTypesDefaultIsStillItsOwn() {
        // Given a type whose validate builds on another type's default validate
        struct Other: Response { init(body: ResponseData, head: ResponseHead) {} }
        struct Builds: Response {
            init(body: ResponseData, head: ResponseHead) {}
            static func validate(_ response: HTTPURLResponse) -> Bool {
                Other.validate(response) || response.statusCode == 304
            }
        }

        // Then its own rule keeps applying after the first call
        XCTAssertTrue(Builds.accepts(head(304)))
        XCTAssertTrue(Builds.accepts(head(304)))
        XCTAssertFalse(Builds.accepts(head(500)))
    }

    func testADelegateHearsResponsesInTheFormItImplementsAndOthersCostNothing() throws {
        // Given three delegates: one with the new hook, one with the Courier 1 hook, one with neither
        final class New: RequestQueueDelegate {
            let heard = Recorder<Int>()
            func requestQueue(_ queue: RequestQueue, didReceive head: ResponseHead) { heard.append(head.status) }
        }
        final class Old: RequestQueueDelegate {
            let heard = Recorder<Int>()
            func requestQueue(_ queue: RequestQueue, didReceive response: HTTPURLResponse) { heard.append(response.statusCode) }
        }
        final class Neither: RequestQueueDelegate {}
        let queue = RequestQueue(baseURL: url)
        let (new, old, neither) = (New(), Old(), Neither())

        // When each hears three responses
        let heads = [head(200), head(201), head(404)]
        for head in heads {
            new.requestQueue(queue, didReceive: head)
            old.requestQueue(queue, didReceive: head)
        }
        let quiet = [head(200), head(200)]
        for head in quiet { neither.requestQueue(queue, didReceive: head) }

        // Then each implemented form heard all three; the delegate with neither made an
        // HTTPURLResponse for the first response only
        XCTAssertEqual(new.heard.all, [200, 201, 404])
        XCTAssertEqual(old.heard.all, [200, 201, 404])
        XCTAssertTrue(quiet[0].hasHTTPURLResponse)
        XCTAssertFalse(quiet[1].hasHTTPURLResponse)
    }

    func testAnAuthenticatorWithoutEitherCheckRefusesOn401WithoutAnHTTPURLResponse() {
        // Given an authenticator that implements neither form of the check
        struct Tokens: Authenticator {
            func authenticate(_ request: inout URLRequest) {}
            func refresh() async throws {}
        }
        XCTAssertTrue(Tokens().isAuthenticationFailure(head(401)))

        // Then later answers are the default's, 401, with no HTTPURLResponse made
        let refused = head(401), forbidden = head(403)
        XCTAssertTrue(Tokens().isAuthenticationFailure(refused))
        XCTAssertFalse(Tokens().isAuthenticationFailure(forbidden))
        XCTAssertFalse(refused.hasHTTPURLResponse)
        XCTAssertFalse(forbidden.hasHTTPURLResponse)
    }
}
