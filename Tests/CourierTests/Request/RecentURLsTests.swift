import Foundation
import XCTest
@testable import Courier

/// The URLs a queue reuses for the paths it resolved lately (`RecentURLs`, `URLRequestBuilder.resolve`).
final class RecentURLsTests: XCTestCase {
    private func url(_ text: String) throws -> URL {
        try XCTUnwrap(URL(string: text))
    }

    func testAPathKeptGivesItsURLForTheSameQueryOnly() throws {
        // Given a path kept with a query
        let recent = RecentURLs()
        let users = try url("https://api.example.com/v1/users?page=2")
        recent.keep(users, path: "/users", query: "page=2")
        // Then the same path and query give its URL, another query or none gives nothing
        XCTAssertEqual(recent.url(path: "/users", query: "page=2"), users)
        XCTAssertNil(recent.url(path: "/users", query: "page=3"))
        XCTAssertNil(recent.url(path: "/users", query: nil))
        XCTAssertNil(recent.url(path: "/users/", query: "page=2"))
        XCTAssertEqual(recent.keys, ["/users?page=2"])
    }

    func testAPathKeptTwiceKeepsItsFirstURLOnce() throws {
        let recent = RecentURLs()
        let first = try url("https://api.example.com/a")
        recent.keep(first, path: "/a", query: nil)
        recent.keep(try url("https://api.example.com/a?again"), path: "/a", query: nil)
        XCTAssertEqual(recent.url(path: "/a", query: nil), first)
        XCTAssertEqual(recent.keys, ["/a"])
    }

    func testTheURLUsedLongestAgoGoesFirstPastTheCapacity() throws {
        // Given the capacity filled, then the first path used again
        let recent = RecentURLs()
        let paths = (0..<RecentURLs.capacity).map { "/items/\($0)" }
        for path in paths { recent.keep(try url("https://api.example.com" + path), path: path, query: nil) }
        XCTAssertNotNil(recent.url(path: paths[0], query: nil))
        // When one more path is kept
        recent.keep(try url("https://api.example.com/items/new"), path: "/items/new", query: nil)
        // Then the one used longest ago (the second) went, and the rest stayed
        XCTAssertEqual(recent.keys, Array(paths[2...]) + [paths[0], "/items/new"])
        XCTAssertNil(recent.url(path: paths[1], query: nil))
    }

    func testAResolvedPathIsReusedAndGivesWhatResolvingItAnewGives() throws {
        // Given a builder that resolved paths with escapes, queries and a plain one
        let builder = URLRequestBuilder(baseURL: URL(string: "https://api.example.com/v1?key=k"), defaultTimeout: 30)
        let cases: [(path: String, query: String?, expected: String)] = [
            ("/users", "page=2", "https://api.example.com/v1/users?key=k&page=2"),
            ("/files/my report.pdf", nil, "https://api.example.com/v1/files/my%20report.pdf?key=k"),
            ("/users", "page=3", "https://api.example.com/v1/users?key=k&page=3"),
            ("/users", "", "https://api.example.com/v1/users?key=k"),
        ]
        for _ in 0..<2 {
            for item in cases {
                // Then the second round, answered from the recent URLs, gives the same URLs
                XCTAssertEqual(try builder.resolve(item.path, query: item.query).absoluteString, item.expected)
            }
        }
        // And a path that fails keeps failing
        for _ in 0..<2 { XCTAssertThrowsError(try builder.resolve("../admin")) }
    }

    func testThreadsResolvingTheSamePathsAtOnceGetTheirURLs() {
        // Given eight threads resolving four paths at once
        let builder = URLRequestBuilder(baseURL: URL(string: "https://api.example.com"), defaultTimeout: 30)
        let paths = (0..<4).map { "/shared/\($0)" }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<200 {
                let path = paths[(thread + round) % paths.count]
                XCTAssertEqual(try? builder.resolve(path).absoluteString, "https://api.example.com" + path)
            }
        }
    }
}
