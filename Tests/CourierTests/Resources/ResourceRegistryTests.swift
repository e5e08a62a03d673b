import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The invariants of `ResourceRegistry`, with stand-in resources.
final class ResourceRegistryTests: XCTestCase {
    private final class Stub: AnyResource {
        let invalidations = Locked(0)
        let registration = Locked<ResourceRegistry.Registration?>(nil)
        let reconnections = Locked(0)
        func invalidate() { invalidations.withLock { $0 += 1 } }
        func reconnected() { reconnections.withLock { $0 += 1 } }
    }

    private func key(_ text: String) -> ResourceRegistry.Key {
        .init(requestType: ObjectIdentifier(Stub.self), request: text, options: ResourceOptions())
    }

    func testAKeyGivesItsLiveResourceAgainAndANewOneOnceItEnded() {
        // Given a registry with a resource for a key
        let registry = ResourceRegistry()
        var made = 0
        var first: Stub? = registry.resource(for: key("GET https://x/a")) { _ in made += 1; return Stub() }
        var again: Stub? = registry.resource(for: key("GET https://x/a")) { _ in made += 1; return Stub() }

        // Then while it lives the same resource comes back
        XCTAssertTrue(first === again)
        XCTAssertEqual(made, 1)

        // When nobody holds it any more, the next ask makes a new one
        first = nil
        again = nil
        let third = registry.resource(for: key("GET https://x/a")) { _ in made += 1; return Stub() }
        XCTAssertEqual(made, 2)
        XCTAssertNotNil(third)
    }

    func testAResourceThatEndsRemovesItsOwnEntryNeverTheOneMadeSinceForItsKey() {
        // Given a resource whose registration outlives it, and a new resource for the same key
        let registry = ResourceRegistry()
        var old: Stub? = registry.resource(for: key("GET https://x/a")) { registration in
            let stub = Stub()
            stub.registration.withLock { $0 = registration }
            return stub
        }
        let oldRegistration = old?.registration.withLock { $0 }
        old = nil
        let new = registry.resource(for: key("GET https://x/a")) { _ in Stub() }
        XCTAssertFalse(registry.isEmpty)

        // When the old one's registration is removed (its deinit, late)
        oldRegistration?.remove()

        // Then the new one is still found
        XCTAssertTrue(registry.resource(for: key("GET https://x/a")) { _ in Stub() } === new)
        XCTAssertFalse(registry.isEmpty)
    }

    func testAWriteInvalidatesTheResourcesOfItsURLAndLocationOnlyForANonErrorUnsafeMethod() throws {
        // Given resources of /posts/7, /posts and /other
        let registry = ResourceRegistry()
        let post = registry.resource(for: key("GET https://api.example.com/posts/7")) { _ in Stub() }
        let list = registry.resource(for: key("GET https://api.example.com/posts")) { _ in Stub() }
        let other = registry.resource(for: key("GET https://api.example.com/other")) { _ in Stub() }
        var put = URLRequest(url: try XCTUnwrap(URL(string: "https://api.example.com/posts/7")))
        put.httpMethod = "PUT"
        var get = put
        get.httpMethod = "GET"
        let url = try XCTUnwrap(put.url)

        // When a GET, a failed PUT, then a PUT answered with a Location of /posts succeed
        registry.invalidate(after: ResponseHead(status: 200, url: url), to: get)
        registry.invalidate(after: ResponseHead(status: 500, url: url), to: put)
        registry.invalidate(after: ResponseHead(status: 204, headerFields: ["Location": "/posts"], url: url), to: put)

        // Then only the last invalidated, /posts/7 and /posts, once each
        XCTAssertEqual([post, list, other].map { $0.invalidations.withLock { $0 } }, [1, 1, 0])
    }

    func testAPrefixNamesItsPathAndWhatContinuesItWithASlashOrAQueryOnTheSameOrigin() throws {
        let matches = try XCTUnwrap(ResourceRegistry.prefixMatcher(for: try XCTUnwrap(URL(string: "HTTPS://API.example.com:443/v1/posts/?x=1"))))
        XCTAssertEqual([
            "https://api.example.com/v1/posts", "https://api.example.com/v1/posts/7", "https://api.example.com/v1/posts?page=2",
            "https://api.example.com/v1/postscript", "https://api.example.com/v1", "http://api.example.com/v1/posts",
            "https://other.example.com/v1/posts",
        ].map { matches(Substring($0)) }, [true, true, true, false, false, false, false])
    }

    func testTheResourcesOfAnOriginThatCameBackAreTold() {
        // Given resources of two origins (the API's with its default port spelled out or not)
        let registry = ResourceRegistry()
        let posts = registry.resource(for: key("GET https://api.example.com/posts")) { _ in Stub() }
        let users = registry.resource(for: key("GET https://api.example.com:443/users?page=2")) { _ in Stub() }
        let image = registry.resource(for: key("GET http://images.example.com/a.png")) { _ in Stub() }

        // When the API comes back, then the network
        registry.reconnected(Connectivity.Origin(URL(string: "https://api.example.com")!))
        registry.reconnected(nil)

        // Then the API's resources heard twice, the image's once
        XCTAssertEqual([posts, users, image].map { $0.reconnections.withLock { $0 } }, [2, 2, 1])
    }
}
