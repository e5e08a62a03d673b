import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The response head of Courier's own, and the `HTTPURLResponse` it makes on demand.
final class ResponseHeadTests: XCTestCase {
    private let url = URL(string: "https://api.example.com/v1/posts?page=2")!

    func testAHeadMadeFromAnHTTPURLResponseHasItsStatusFieldsAndURL() throws {
        // Given a Foundation response
        let http = try XCTUnwrap(HTTPURLResponse(url: url, statusCode: 201, httpVersion: "HTTP/1.1",
                                                 headerFields: ["Location": "/posts/3", "Content-Type": "application/json"]))

        // When a head is made from it
        let head = ResponseHead(http)

        // Then it has the status, the fields sorted by name, and the URL; asking for the
        // HTTPURLResponse gives the very one it came from
        XCTAssertEqual(head.status, 201)
        XCTAssertTrue(head.isSuccess)
        XCTAssertEqual(head.headerFields.map(\.name), ["Content-Type", "Location"])
        XCTAssertEqual(head.headerFields["location"], "/posts/3")
        XCTAssertEqual(head.url, url)
        XCTAssertTrue(head.httpURLResponse === http)
    }

    func testAnHTTPURLResponseIsMadeFromAHeadWithRepeatedNamesJoined() {
        // Given a head with two lines of one name
        let head = ResponseHead(status: 304, headerFields: [HTTPField(name: "Link", value: "<a>; rel=next"),
                                                           HTTPField(name: "Link", value: "<b>; rel=last"),
                                                           HTTPField(name: "ETag", value: "\"v1\"")], url: url)

        // When its HTTPURLResponse is asked for
        let http = head.httpURLResponse

        // Then it has the status, the URL and the fields, repeated ones joined with ", "
        XCTAssertEqual(http.statusCode, 304)
        XCTAssertEqual(http.url, url)
        XCTAssertEqual(http.value(forHTTPHeaderField: "link"), "<a>; rel=next, <b>; rel=last")
        XCTAssertEqual(http.value(forHTTPHeaderField: "ETag"), "\"v1\"")
        XCTAssertFalse(head.isSuccess)
    }

    func testTheHTTPURLResponseIsMadeOnceAndSharedByTheHeadsCopies() {
        // Given a head of Courier's own and a copy of it
        let head = ResponseHead(status: 200, headerFields: ["A": "1"], url: url)
        let copy = head

        // When each is asked for its HTTPURLResponse, twice
        let first = head.httpURLResponse

        // Then it is one object: made once (it is costly on Linux), whoever asks
        XCTAssertTrue(head.httpURLResponse === first)
        XCTAssertTrue(copy.httpURLResponse === first)
    }

    func testThreadsAskingAtOnceAllGetTheOneKept() {
        // Given heads of Courier's own, each asked by eight threads at once
        for round in 0..<50 {
            let head = ResponseHead(status: 200, headerFields: ["A": "\(round)"], url: url)
            let got = Locked<[HTTPURLResponse]>([])
            // When they ask together
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let response = head.httpURLResponse
                got.withLock { $0.append(response) }
            }
            // Then all of them, and any later asker, hold the same object
            let first = head.httpURLResponse
            XCTAssertEqual(got.withLock { $0.count }, 8)
            XCTAssertTrue(got.withLock { $0.allSatisfy { $0 === first } }, "round \(round)")
        }
    }

    func testAStatusFoundationRefusesStillMakesAnHTTPURLResponse() {
        // Given heads whose status Foundation does not take (a server's 999, a user's 0)
        let high = ResponseHead(status: 999, url: url), low = ResponseHead(status: 0, url: url)

        // Then the HTTPURLResponse gets the nearest it takes, and the head keeps the real one
        XCTAssertEqual(high.httpURLResponse.statusCode, 599)
        XCTAssertEqual(low.httpURLResponse.statusCode, 100)
        XCTAssertEqual(high.status, 999)
    }

    func testHeadsAreEqualByStatusFieldsAndURL() throws {
        let http = try XCTUnwrap(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["A": "1"]))
        XCTAssertEqual(ResponseHead(http), ResponseHead(status: 200, headerFields: ["A": "1"], url: url))
        XCTAssertNotEqual(ResponseHead(http), ResponseHead(status: 200, headerFields: ["A": "2"], url: url))
        XCTAssertEqual(Set([ResponseHead(http), ResponseHead(status: 200, headerFields: ["A": "1"], url: url)]).count, 1)
    }
}
