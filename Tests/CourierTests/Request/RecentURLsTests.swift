import Foundation
import XCTest
@testable import Courier

/// The URLs a queue reuses for the paths it resolved lately (`RecentURLs`, `URLRequestBuilder.resolve`).
final class RecentURLsTests: XCTestCase {
    /// Looks `path` and `query` up, resolving them to `text` on a miss; returns the URL's text and
    /// whether it was resolved.
    private static func look(_ recent: RecentURLs, _ path: String, _ query: String? = nil,
                      resolvingTo text: String = "https://api.example.com/other") throws -> (url: String, resolved: Bool) {
        var resolved = false
        let url = try recent.url(path: path, query: query) { () throws(RequestError) in
            resolved = true
            guard let url = URL(string: text) else { throw RequestError.invalidURL(text, reason: "test") }
            return url
        }
        return (url.absoluteString, resolved)
    }

    func testAPathKeptGivesItsURLForTheSameQueryOnly() throws {
        // Given a path resolved with a query
        let recent = RecentURLs()
        XCTAssertEqual(try Self.look(recent, "/users", "page=2", resolvingTo: "https://api.example.com/v1/users?page=2").resolved, true)
        // Then the same path and query give its URL without resolving; another query, none, or another path resolve anew
        XCTAssertEqual(try Self.look(recent, "/users", "page=2").url, "https://api.example.com/v1/users?page=2")
        XCTAssertEqual(try Self.look(recent, "/users", "page=2").resolved, false)
        XCTAssertEqual(try Self.look(recent, "/users", "page=3").resolved, true)
        XCTAssertEqual(try Self.look(recent, "/users", nil).resolved, true)
        XCTAssertEqual(try Self.look(recent, "/users/", "page=2").resolved, true)
        XCTAssertEqual(recent.keys, ["/users?page=2", "/users?page=3", "/users", "/users/?page=2"])
    }

    func testAFailureIsThrownAndNeverKept() throws {
        let recent = RecentURLs()
        for _ in 0..<2 {
            XCTAssertThrowsError(try Self.look(recent, "/bad", resolvingTo: "")) { error in
                guard case .invalidURL(let text, let reason)? = error as? RequestError else { return XCTFail("\(error)") }
                XCTAssertEqual(text + "|" + reason, "|test")
            }
        }
        XCTAssertEqual(recent.keys, [])
    }

    func testTheURLUsedLongestAgoGoesFirstPastTheCapacity() throws {
        // Given the capacity filled, then the first path used again
        let recent = RecentURLs()
        let paths = (0..<RecentURLs.capacity).map { "/items/\($0)" }
        for path in paths { _ = try Self.look(recent, path, resolvingTo: "https://api.example.com" + path) }
        XCTAssertEqual(try Self.look(recent, paths[0]).resolved, false)
        // When one more path comes
        _ = try Self.look(recent, "/items/new")
        // Then the one used longest ago (the second) went, and the rest stayed
        XCTAssertEqual(recent.keys, Array(paths[2...]) + [paths[0], "/items/new"])
        XCTAssertEqual(try Self.look(recent, paths[1]).resolved, true)
    }

    func testAResolvedPathIsReusedAndGivesWhatResolvingItAnewGives() throws {
        // Given a builder that resolved paths with escapes, queries and a plain one
        let builder = URLRequestBuilder(baseURL: URL(string: "https://api.example.com/v1?key=k"), defaultTimeout: 30)
        let cases: [(path: String, query: String?, expected: String)] = [
            ("/users", "page=2", "https://api.example.com/v1/users?key=k&page=2"),
            ("/files/my report.pdf", nil, "https://api.example.com/v1/files/my%20report.pdf?key=k"),
            ("/users", "page=3", "https://api.example.com/v1/users?key=k&page=3"),
            ("/users", "", "https://api.example.com/v1/users?key=k"),
            ("/search?q=a b", nil, "https://api.example.com/v1/search?key=k&q=a%20b"),
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

    func testThreadsResolvingTheSamePathsAtOnceKeepEachOnce() {
        // Given eight threads resolving four paths at once
        let recent = RecentURLs()
        let paths = (0..<4).map { "/shared/\($0)" }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<200 {
                let path = paths[(thread + round) % paths.count]
                XCTAssertEqual(try? Self.look(recent, path, resolvingTo: "https://api.example.com" + path).url,
                               "https://api.example.com" + path)
            }
        }
        // Then each path is kept once
        XCTAssertEqual(recent.keys.sorted(), paths)
    }
}
