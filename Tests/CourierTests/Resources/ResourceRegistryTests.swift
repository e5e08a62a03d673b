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
        let key = Locked<ResourceRegistry.Key?>(nil)
        let reconnections = Locked(0)
        func invalidate() { invalidations.withLock { $0 += 1 } }
        func reconnected() { reconnections.withLock { $0 += 1 } }
    }

    /// Asks, as it ends, whatever `onEnd` asks, then removes its key as a resource does.
    private final class Ending: AnyResource {
        let key = Locked<ResourceRegistry.Key?>(nil)
        let registry: ResourceRegistry
        init(registry: ResourceRegistry) { self.registry = registry }
        let onEnd = Locked<(@Sendable () -> Void)?>(nil)
        func invalidate() {}
        func reconnected() {}
        deinit {
            onEnd.withLock { $0 }?()
            key.withLock { $0 }.map(registry.remove)
        }
    }

    private func key(_ text: String, options: ResourceOptions = ResourceOptions()) -> ResourceRegistry.Name {
        .init(requestType: ObjectIdentifier(Stub.self), request: text, options: options)
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

    func testAResourceThatEndsRemovesItsOwnEntryNeverTheOneMadeSinceForItsKey() throws {
        // Given a resource whose key outlives it, and a new resource for the same key
        let registry = ResourceRegistry()
        var old: Stub? = registry.resource(for: key("GET https://x/a")) { key in
            let stub = Stub()
            stub.key.withLock { $0 = key }
            return stub
        }
        let oldKey = old?.key.withLock { $0 }
        old = nil
        let new = registry.resource(for: key("GET https://x/a")) { _ in Stub() }
        XCTAssertFalse(registry.isEmpty)

        // When the old one's key is removed (its deinit, late)
        registry.remove(try XCTUnwrap(oldKey))

        // Then the new one is still found
        XCTAssertTrue(registry.resource(for: key("GET https://x/a")) { _ in Stub() } === new)
        XCTAssertFalse(registry.isEmpty)
    }

    func testResourcesShareTheirRequestAndOptionsWhileTheyLiveAndTheLastToGoReleasesThem() {
        // Given three resources: two of one request with different options, one of another
        let registry = ResourceRegistry()
        let minute = ResourceOptions(staleAfter: .seconds(60)), hour = ResourceOptions(staleAfter: .seconds(3_600))
        var keys: [ResourceRegistry.Key] = []
        func make(_ text: String, _ options: ResourceOptions) -> Stub {
            registry.resource(for: key(text, options: options)) { keys.append($0); return Stub() }
        }
        var a: Stub? = make("GET https://x/a", minute)
        var aHourly: Stub? = make("GET https://x/a", hour)
        var b: Stub? = make("GET https://x/b", minute)

        // Then they are three resources with three keys, holding two requests and two options
        XCTAssertFalse(a === aHourly)
        XCTAssertEqual(Set(keys).count, 3)
        XCTAssertEqual(registry.sharedCounts.requests, 2)
        XCTAssertEqual(registry.sharedCounts.options, 2)
        XCTAssertEqual(keys.map(\.options), [minute, hour, minute])
        XCTAssertEqual(keys.map { String($0.url) }, ["https://x/a", "https://x/a", "https://x/b"])

        // When they end one by one (their deinits remove their keys)
        a = nil
        registry.remove(keys[0])
        XCTAssertEqual(registry.sharedCounts.requests, 2)
        XCTAssertEqual(registry.sharedCounts.options, 2)
        aHourly = nil
        registry.remove(keys[1])
        XCTAssertEqual(registry.sharedCounts.requests, 1)
        XCTAssertEqual(registry.sharedCounts.options, 1)
        XCTAssertFalse(registry.isEmpty)
        b = nil
        registry.remove(keys[2])

        // Then nothing is held
        XCTAssertEqual(registry.sharedCounts.requests, 0)
        XCTAssertEqual(registry.sharedCounts.options, 0)
        XCTAssertTrue(registry.isEmpty)
        XCTAssertNil(a ?? aHourly ?? b)
    }

    func testAResourceEndingWhileANewOneTakesItsPlaceLeavesTheNewOnesEntry() {
        // Given a resource that, as it ends, is asked for again before it removes its entry
        let registry = ResourceRegistry()
        let replacement = Locked<Stub?>(nil)
        var old: Ending? = registry.resource(for: key("GET https://x/a")) { key in
            let ending = Ending(registry: registry)
            ending.key.withLock { $0 = key }
            return ending
        }
        let name = key("GET https://x/a")
        old?.onEnd.withLock { $0 = { replacement.withLock { $0 = registry.resource(for: name) { _ in Stub() } } } }

        // When it ends
        old = nil

        // Then the new one is still found, and the count of entries kept
        let new = replacement.withLock { $0 }
        XCTAssertNotNil(new)
        XCTAssertTrue(registry.resource(for: key("GET https://x/a")) { _ in Stub() } === new)
        XCTAssertFalse(registry.isEmpty)
        XCTAssertEqual(registry.sharedCounts.requests, 1)
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
