import Foundation
import XCTest
@testable import Courier

/// Which stored responses an unsafe request makes obsolete: RFC 9111 §4.4.
final class InvalidationTests: XCTestCase {
    private let target = URL(string: "https://Example.com/items/7?full=1#top")!

    private func keys(_ method: String = "POST", status: Int = 200, headers: HTTPFields = [:],
                      url: URL? = nil) -> [String] {
        Invalidation.invalidatedKeys(method: method, requestURL: url ?? target, statusCode: status, responseHeaders: headers)
    }

    func testAnUnsafeRequestInvalidatesItsTarget() {
        // Given a POST answered 200
        // Then its target URI, as a primary key, is invalidated
        XCTAssertEqual(keys(), ["https://example.com/items/7?full=1"])
    }

    func testEveryMethodButTheSafeOnesIsUnsafe() {
        for method in ["POST", "PUT", "DELETE", "PATCH", "PURGE", "get", "head"] {
            XCTAssertEqual(keys(method), ["https://example.com/items/7?full=1"], method)
        }
        for method in ["GET", "HEAD", "OPTIONS", "TRACE"] {
            XCTAssertEqual(keys(method, headers: ["Location": "/items/8"]), [], method)
        }
    }

    func testOnlyANonErrorStatusInvalidates() {
        for status in [200, 201, 204, 299, 301, 303, 304, 399] {
            XCTAssertEqual(keys(status: status), ["https://example.com/items/7?full=1"], "\(status)")
        }
        for status in [100, 199, 400, 404, 409, 500, 503] {
            XCTAssertEqual(keys(status: status), [], "\(status)")
        }
    }

    func testLocationAndContentLocationOfTheSameOriginAreInvalidated() {
        // Given a relative Location and an absolute Content-Location on the same origin
        let result = keys(status: 201, headers: ["Location": "/items/8", "Content-Location": "https://EXAMPLE.com:443/items/8/view#x"])
        // Then both are invalidated after the target, resolved and normalised as primary keys
        XCTAssertEqual(result, ["https://example.com/items/7?full=1", "https://example.com/items/8",
                                "https://example.com/items/8/view"])
    }

    func testRelativeReferencesResolveAgainstTheRequestURL() {
        XCTAssertEqual(keys(headers: ["location": "8"]), ["https://example.com/items/7?full=1", "https://example.com/items/8"])
        XCTAssertEqual(keys(headers: ["Content-Location": "?full=2"]),
                       ["https://example.com/items/7?full=1", "https://example.com/items/7?full=2"])
        XCTAssertEqual(keys(headers: ["Location": "//example.com/other"]),
                       ["https://example.com/items/7?full=1", "https://example.com/other"])
    }

    func testAnotherOriginIsNeverInvalidated() {
        // §4.4: not for another scheme, host or port
        for location in ["https://other.com/items/8", "http://example.com/items/8", "https://example.com:8443/items/8",
                         "https://sub.example.com/items/8"] {
            XCTAssertEqual(keys(headers: ["Location": location, "Content-Location": location]),
                           ["https://example.com/items/7?full=1"], location)
        }
    }

    func testADefaultPortIsTheSameOrigin() {
        let plain = URL(string: "http://example.com/a")!
        XCTAssertEqual(keys(headers: ["Location": "http://example.com:80/b"], url: plain),
                       ["http://example.com/a", "http://example.com/b"])
        XCTAssertEqual(keys(headers: ["Location": "http://example.com:443/b"], url: plain), ["http://example.com/a"])
    }

    func testNoKeyIsListedTwice() {
        let result = keys(headers: ["Location": "/items/7?full=1#again", "Content-Location": "/items/8"])
        XCTAssertEqual(result, ["https://example.com/items/7?full=1", "https://example.com/items/8"])
        let same = keys(headers: ["Location": "/items/8", "Content-Location": "https://example.com/items/8"])
        XCTAssertEqual(same, ["https://example.com/items/7?full=1", "https://example.com/items/8"])
    }

    func testAFieldThatIsNotAURIIsIgnored() {
        XCTAssertEqual(keys(headers: ["Location": "http://[oops", "Content-Location": ""]), ["https://example.com/items/7?full=1"])
    }

    func testATargetWithoutHostInvalidatesNothing() {
        XCTAssertEqual(keys(url: URL(string: "file:///tmp/x")!), [])
    }
}
