import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Observation
import XCTest
@testable import Courier

/// Pages through a real queue: following `Link: rel="next"` or the app's rule, to the last page.
final class PagedResourceTests: XCTestCase {
    private let context = DispatchQueue(label: "PagedResourceTests.context")
    private let resourceClock = ManualResourceClock()

    private var options: ResourceOptions {
        var options = ResourceOptions(updatesOn: .queue(context))
        options.clock = resourceClock.clock
        return options
    }

    /// An origin of three pages, /posts?page=1 to 3, each linking the next (the last links none).
    private func origin(links: Bool = true, loopBack: Bool = false) -> StubTransport {
        StubTransport { request in
            let page = Int(request.url?.query?.split(separator: "=").last ?? "1") ?? 1
            var headers = ["Cache-Control": "max-age=60"]
            if links, page < 3 { headers["Link"] = "</posts?page=\(page + 1)>; rel=\"next\", </posts?page=1>; rel=\"first\"" }
            if loopBack, page == 2 { headers["Link"] = "<https://api.example.com/posts?page=1>; rel=\"next\"" }
            return .status(200, headers: headers, body: Data("p\(page)".utf8))
        }
    }

    private func queue(_ transport: StubTransport) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        return RequestQueue(configuration: configuration, delegate: nil, baseURL: URL(string: "https://api.example.com"),
                            transport: transport)
    }

    /// Loads the next page and waits for it (or for nothing to happen, once the last came).
    private func next(_ pages: PagedResource<CachedRequest>) async {
        pages.loadNextPage()
        await Task.yield()
        context.sync {}
        for page in context.sync(execute: { pages.loadedPages }) { _ = try? await (page as? Resource<LinkedPage<CachedRequest>>)?.fetch() }
    }

    func testLinksAreFollowedPageByPageUntilTheLastAndTheListEndsThere() async throws {
        // Given the pages of /posts?page=1
        let transport = origin()
        let pages = queue(transport).pages(CachedRequest(path: "/posts?page=1"), options: options)
        XCTAssertTrue(pages.hasMore)

        // When the first page loads, then the next ones, one more time than there are pages
        _ = try await (pages.loadedPages.first as? Resource<CachedRequest>)?.fetch()
        let afterFirst = (pages.pages.map(\.text), pages.hasMore)
        await next(pages)
        await next(pages)
        await next(pages)

        // Then the three pages came in order from the linked URLs, and the list knows it ended
        XCTAssertEqual(afterFirst.0, ["p1"])
        XCTAssertTrue(afterFirst.1)
        XCTAssertEqual(pages.pages.map(\.text), ["p1", "p2", "p3"])
        XCTAssertFalse(pages.hasMore)
        XCTAssertEqual(transport.started.map { $0.url?.absoluteString }, [
            "https://api.example.com/posts?page=1", "https://api.example.com/posts?page=2", "https://api.example.com/posts?page=3",
        ])
        XCTAssertEqual("\(pages.phase)".hasPrefix("loaded("), true)
    }

    func testTheAppsRuleMakesTheNextRequest() async throws {
        // Given pages whose next request the app makes from the page's value (no Link fields)
        let transport = origin(links: false)
        let pages = queue(transport).pages(CachedRequest(path: "/posts?page=1"), options: options) { page, _ in
            let number = Int(page.text.dropFirst())!
            return number < 2 ? CachedRequest(path: "/posts?page=\(number + 1)") : nil
        }

        // When it loads the first page and asks for more twice
        _ = try await (pages.loadedPages.first as? Resource<CachedRequest>)?.fetch()
        pages.loadNextPage()
        context.sync {}
        _ = try await (pages.loadedPages.last as? Resource<CachedRequest>)?.fetch()
        pages.loadNextPage()
        context.sync {}

        // Then it has the two pages the rule named, and no more
        XCTAssertEqual(pages.pages.map(\.text), ["p1", "p2"])
        XCTAssertFalse(pages.hasMore)
        XCTAssertEqual(transport.started.count, 2)
    }

    func testANextLinkBackToAPageInTheListEndsIt() async throws {
        // Given a server whose page 2 links back to page 1
        let transport = origin(links: true, loopBack: true)
        let pages = queue(transport).pages(CachedRequest(path: "/posts?page=1"), options: options)

        // When the list follows its links
        _ = try await (pages.loadedPages.first as? Resource<CachedRequest>)?.fetch()
        await next(pages)
        await next(pages)

        // Then it stops at page 2, sending nothing more
        XCTAssertEqual(pages.pages.map(\.text), ["p1", "p2"])
        XCTAssertEqual(transport.started.count, 2)
    }

    func testRefreshDropsAllButTheFirstPageAndLoadsItFromTheOrigin() async throws {
        let transport = origin()
        let pages = queue(transport).pages(CachedRequest(path: "/posts?page=1"), options: options)
        _ = try await (pages.loadedPages.first as? Resource<CachedRequest>)?.fetch()
        await next(pages)
        XCTAssertEqual(pages.pages.count, 2)

        await pages.refresh()

        XCTAssertEqual(pages.pages.map(\.text), ["p1"])
        XCTAssertEqual(transport.started.count, 3)
        XCTAssertTrue(pages.hasMore)
    }

    func testAnObserverThatAsksForTheNextPageWhenThePagesChangeGetsEachPageOnce() async throws {
        // Given pages whose first page came, and an observer that asks for the next page as soon
        // as it hears of a change to the pages (on the context, while the change is being made)
        let transport = origin()
        let pages = queue(transport).pages(CachedRequest(path: "/posts?page=1"), options: options)
        _ = try await (pages.loadedPages.first as? Resource<CachedRequest>)?.fetch()
        context.sync {
            withObservationTracking { _ = pages.loadedPages } onChange: { pages.loadNextPage() }
        }

        // When the app asks for the next page
        await next(pages)

        // Then the second page is in the list once, and the observer's call joined its load
        XCTAssertEqual(pages.pages.map(\.text), ["p1", "p2"])
        XCTAssertEqual(transport.started.map { $0.url?.absoluteString }, [
            "https://api.example.com/posts?page=1", "https://api.example.com/posts?page=2",
        ])
    }
}
