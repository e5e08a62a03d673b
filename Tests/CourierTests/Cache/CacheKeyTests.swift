import Foundation
import XCTest
@testable import Courier

/// The primary cache key: its fast path agrees with the parse it replaces.
final class CacheKeyTests: XCTestCase {
    func testKeysDropTheFragmentAndDefaultPortAndLowercaseSchemeAndHost() {
        XCTAssertEqual(CacheKey.make(for: URL(string: "HTTP://Example.COM:80/a?b=1#frag")!), "http://example.com/a?b=1")
        XCTAssertEqual(CacheKey.make(for: URL(string: "https://example.com:443/a")!), "https://example.com/a")
        XCTAssertEqual(CacheKey.make(for: URL(string: "https://example.com")!), "https://example.com/")
        XCTAssertEqual(CacheKey.make(for: URL(string: "http://example.com:8080/a")!), "http://example.com:8080/a")
        XCTAssertEqual(CacheKey.make(for: URL(string: "http://example.com:180/a")!), "http://example.com:180/a")
        XCTAssertEqual(CacheKey.make(for: URL(string: "http://127.0.0.1:8080/x/y?z")!), "http://127.0.0.1:8080/x/y?z")
        XCTAssertNil(CacheKey.make(for: URL(string: "/relative")!))
        XCTAssertNil(CacheKey.make(for: URL(fileURLWithPath: "/tmp/x")))
    }

    func testTheFastPathTakesOnlyURLsThatAreTheirOwnKey() {
        // Given URLs that are keys already, and URLs that are not
        let canonical = ["http://example.com/a", "https://api.example.com/v1/users?id=42&x=%20", "http://127.0.0.1:8080/x",
                         "https://a-b.example.com:8443/", "http://example.com:443/a", "https://example.com:80/a",
                         "http://example.com:8080/"]
        let other = ["HTTP://example.com/a", "http://Example.com/a", "http://example.com:80/a", "https://example.com:443/a",
                     "http://example.com", "http://example.com/a#f", "http://user@example.com/a", "http://[::1]:8080/a",
                     "ftp://example.com/a", "http://:80/a", "httpx://example.com/a", "https:/example.com/a",
                     "https://example.com:443/"]
        // Then the fast path says so, and the keys equal what URLComponents makes of them
        for text in canonical {
            XCTAssertTrue(CacheKey.isCanonical(text), text)
            XCTAssertEqual(CacheKey.make(for: URL(string: text)!), text)
        }
        for text in other { XCTAssertFalse(CacheKey.isCanonical(text), text) }
    }
}
