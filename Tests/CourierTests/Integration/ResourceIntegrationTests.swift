import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Resources against real origins, through the run's network transport (Scripts/test.sh runs this
/// with curl and with URLSession): httpbin's /cache/N, /etag, /anything, /links and
/// /response-headers, and nginx's own caching. The servers' access logs prove what reached them.
final class ResourceIntegrationTests: XCTestCase {
    private let context = DispatchQueue(label: "ResourceIntegrationTests.context")
    private let clock = ManualResourceClock(Date().timeIntervalSince1970)

    private var options: ResourceOptions {
        var options = ResourceOptions(updatesOn: .queue(context))
        options.clock = clock.clock
        return options
    }

    private func queue(baseURL: URL) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.transport = HTTPBin.transport
        configuration.callbackQueue = TestQueues.callbacks
        configuration.timeoutInterval = 20
        configuration.cache = ResponseCache(memory: MemoryStore(capacity: 4 << 20), disk: nil, directory: nil,
                                            heuristicFreshnessLimit: 86_400, clock: { Date().timeIntervalSince1970 })
        return RequestQueue(configuration: configuration, delegate: nil, baseURL: baseURL)
    }

    /// Fresh for a minute whatever the origin says (httpbin's pages say nothing), so that waiting
    /// for a page with `fetch()` never loads it again.
    private var pageOptions: ResourceOptions {
        var options = options
        options.staleAfter = .seconds(60)
        return options
    }

    /// A path of the test's own, so that the log's lines are this test's.
    private func unique(_ path: String) -> String {
        path.replacingOccurrences(of: "{id}", with: UUID().uuidString)
    }

    func testAFreshValueIsNotLoadedAgainAndTwoScreensShareOneArrival() async throws {
        // Given httpbin's /cache/60 (fresh for a minute), asked for by two screens at once
        let log = try CacheOrigin.httpbinLog()
        let queue = queue(baseURL: try HTTPBin.url())
        let path = "/cache/60"
        let before = log.requests(to: path).count
        let first = queue.resource(CachedRequest(path: path), options: options)
        let second = queue.resource(CachedRequest(path: path), options: options)

        // When both load if needed, twice, and fetch
        first.loadIfNeeded()
        second.loadIfNeeded()
        _ = try await first.fetch()
        second.loadIfNeeded()
        _ = try await second.fetch()

        // Then httpbin saw one request, and both show its value from the network
        XCTAssertEqual(log.waitForRequests(to: path, count: before + 1).count, before + 1)
        XCTAssertTrue(first === second)
        XCTAssertEqual(first.source, .network)
        XCTAssertFalse(first.isStale)
    }

    func testAWriteToTheResourcesURLMakesAWatchedResourceLoadAgain() async throws {
        // Given a watched resource of /anything/posts/<id>, loaded once
        let log = try CacheOrigin.httpbinLog()
        let queue = queue(baseURL: try HTTPBin.url())
        let path = unique("/anything/posts/{id}")
        let resource = queue.resource(CachedRequest(path: path), options: options)
        let recorder = ResourceRecorder(resource, on: context)
        let watching = Task { await resource.watch() }
        XCTAssertTrue(recorder.wait(until: { $0.last?.hasPrefix("loaded") == true }, timeout: 20))

        // When a PUT to that URL goes through the queue
        _ = try await queue.send(CachedRequest(path: path, method: .put))

        // Then the resource loaded again at once: httpbin saw GET, PUT, GET
        XCTAssertEqual(log.waitForRequests(to: path, count: 3).map(\.method), ["GET", "PUT", "GET"])
        XCTAssertTrue(recorder.wait(until: { lines in
            guard let reload = lines.firstIndex(where: { $0.hasSuffix("stale loading") }) else { return false }
            return lines[(reload + 1)...].contains { $0.hasPrefix("loaded") && !$0.contains("loading") }
        }, timeout: 20), "\(recorder.all)")
        watching.cancel()
        await watching.value
    }

    func testRefreshRevalidatesNothingAndAsksTheOriginWhileLoadIfNeededUsesTheETag() async throws {
        // Given httpbin's /etag/<id>, which answers with its ETag and no freshness
        let log = try CacheOrigin.httpbinLog()
        let queue = queue(baseURL: try HTTPBin.url())
        let path = unique("/etag/{id}")
        let resource = queue.resource(CachedRequest(path: path), options: options)

        // When it loads, loads if needed (stale at once), then is refreshed
        _ = try await resource.fetch()
        _ = try await resource.fetch()
        await resource.refresh()

        // Then the second load was the cache's conditional GET (304), the refresh a plain one
        let requests = log.waitForRequests(to: path, count: 3)
        XCTAssertEqual(requests.map(\.status), [200, 304, 200])
        XCTAssertEqual(requests.map { $0.ifNoneMatch != nil }, [false, true, false])
        XCTAssertEqual(resource.source, .network)
    }

    func testPagesFollowLinkFieldsToTheLastPage() async throws {
        // Given page 1 of httpbin's /response-headers, whose Link names page 2, which names none
        let log = try CacheOrigin.httpbinLog()
        let queue = queue(baseURL: try HTTPBin.url())
        let id = UUID().uuidString
        let second = "/response-headers?page=2&id=\(id)"
        let link = "<\(second)>; rel=\"next\"".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let first = "/response-headers?page=1&id=\(id)&Link=\(link)"
        let pages = queue.pages(CachedRequest(path: first), options: pageOptions)

        // When the list loads its pages until there is no more
        var count = 0
        while try await pages.nextPage() != nil { count += 1 }

        // Then httpbin served the two pages, once each, and the list knows it ended
        XCTAssertFalse(pages.hasMore)
        XCTAssertEqual(count, 2)
        XCTAssertEqual(pages.pages.count, 2)
        XCTAssertTrue(pages.pages[1].text.contains("\"page\": \"2\""), pages.pages[1].text)
        XCTAssertEqual(log.waitForRequests(to: "/response-headers?page=2&id=\(id)", count: 1).count, 1)
        XCTAssertEqual(log.requests(to: "/response-headers?page=1&id=\(id)&Link=\(link)").count, 1)
    }

    func testPagesByTheAppsRuleFollowHttpbinsLinksPages() async throws {
        // Given httpbin's /links/3/0, whose pages the app numbers itself
        let log = try CacheOrigin.httpbinLog()
        let queue = queue(baseURL: try HTTPBin.url())
        let pages = queue.pages(CachedRequest(path: "/links/3/0"), options: pageOptions) { _, head in
            let offset = Int(head.url.lastPathComponent)!
            return offset < 2 ? CachedRequest(path: "/links/3/\(offset + 1)") : nil
        }
        let before = (0..<3).map { log.requests(to: "/links/3/\($0)").count }

        // When it loads every page, as a screen would: one more each time the list's end shows
        pages.loadIfNeeded()
        _ = try await pages.nextPage()
        while pages.hasMore { _ = try await pages.nextPage() }

        // Then each page reached httpbin once, in order, and there is no more
        XCTAssertEqual(pages.pages.count, 3)
        XCTAssertFalse(pages.hasMore)
        for offset in 0..<3 {
            XCTAssertEqual(log.waitForRequests(to: "/links/3/\(offset)", count: before[offset] + 1).count, before[offset] + 1)
        }
    }

    func testNginxsExpiresKeepsTheResourceFreshOnItsClockAndItLoadsOnceStale() async throws {
        // Given a file nginx serves with `expires 1h`
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write(#"{"v":1}"#, in: "expires", directory: origin.directory)
        let resource = queue(baseURL: origin.url).resource(CachedRequest(path: path), options: options)
        _ = try await resource.fetch()

        // When it is asked for again within the hour, and after it
        clock.advance(59 * 60)
        context.sync {}
        _ = try await resource.fetch()
        let staleBefore = resource.isStale
        clock.advance(2 * 60)
        context.sync {}
        let staleAfter = resource.isStale

        // Then nginx saw one request; the value went stale when the hour ended
        XCTAssertEqual(origin.log.waitForRequests(to: path, count: 1).count, 1)
        XCTAssertFalse(staleBefore)
        XCTAssertTrue(staleAfter)
    }

}
