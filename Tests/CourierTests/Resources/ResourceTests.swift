import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Observation
import XCTest
@testable import Courier

/// Resources through a real queue: exact sequences of what they show, driven by held answers
/// and a clock the test moves, observed with `withObservationTracking`.
final class ResourceTests: XCTestCase {
    private let clock = TestClock()
    private let resourceClock = ManualResourceClock()
    private let context = DispatchQueue(label: "ResourceTests.context")

    private var options: ResourceOptions {
        var options = ResourceOptions(updatesOn: .queue(context))
        options.clock = resourceClock.clock
        return options
    }

    /// A cache in memory on the test's clock.
    private func memoryCache() -> ResponseCache {
        ResponseCache(memory: MemoryStore(capacity: 1 << 20), disk: nil, directory: nil, heuristicFreshnessLimit: 86_400,
                      clock: { [clock] in clock.now })
    }

    /// A queue with a cache (`shared`, or one of its own, or none), answering from `transport`.
    private func queue(_ transport: StubTransport, cached: Bool = true, shared: ResponseCache? = nil) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.cache = cached ? shared ?? memoryCache() : nil
        return RequestQueue(configuration: configuration, delegate: nil, baseURL: URL(string: "https://api.example.com"),
                            transport: transport)
    }

    private func text(_ text: String, maxAge: Int? = nil) -> StubTransport.Reply {
        var headers = ["Date": CacheRuleFixtures.date(0)]
        if let maxAge { headers["Cache-Control"] = "max-age=\(maxAge)" }
        return .status(200, headers: headers, body: Data(text.utf8))
    }

    /// Runs `body` on the context and waits for it.
    private func onContext(_ body: @Sendable () -> Void) {
        context.sync(execute: body)
    }

    func testTheFirstLoadGoesFromIdleToLoadingToLoaded() {
        // Given a resource of an origin that answers when the test says
        let transport = StubTransport { _ in .hold }
        let queue = queue(transport, cached: false)
        let resource = queue.resource(CachedRequest(path: "/profile"), options: options)
        let recorder = ResourceRecorder(resource, on: context)

        // When it loads and the answer comes
        resource.loadIfNeeded()
        XCTAssertTrue(transport.waitForStarts(1))
        transport.releaseOldest(with: text("v1", maxAge: 60))

        // Then it showed nothing, loading, then the value from the network, fresh
        XCTAssertTrue(recorder.wait(for: "loaded v1 network"))
        XCTAssertEqual(recorder.all, ["idle - -", "loading - - loading", "loaded v1 network"])
    }

    func testAStoredValueShowsAtOnceThenTheFreshOne() {
        // Given a stored v1 that has gone stale, and an origin now at v2 that answers when the test says
        // (stored through a queue and origin of their own, so that the resource's queue is idle: a
        // load on an idle queue is answered by the cache on the context, at once, in the change
        // that starts it)
        let primer = StubTransport { _ in
            .status(200, headers: ["Cache-Control": "max-age=60", "Date": CacheRuleFixtures.date(0)], body: Data("v1".utf8))
        }
        let transport = StubTransport { _ in .hold }
        let cache = memoryCache()
        XCTAssertEqual(try queue(primer, shared: cache).sendAndWait(CachedRequest(path: "/feed")).text, "v1")
        clock.advance(61)

        // When a new resource loads it, and the origin's answer comes once the stored one shows
        let resource = queue(transport, shared: cache).resource(CachedRequest(path: "/feed"), options: options)
        let recorder = ResourceRecorder(resource, on: context)
        resource.load()
        XCTAssertTrue(recorder.wait(for: "loaded v1 cache (stale) stale loading"))
        // The stored response shows before the request reaches the origin.
        XCTAssertTrue(eventually { transport.heldCount == 1 })
        transport.releaseOldest(with: .status(200, headers: ["Cache-Control": "max-age=60", "Date": CacheRuleFixtures.date(61)],
                                              body: Data("v2".utf8)))

        // Then it showed the stored v1 at once (one change: never loading without it), stale, while
        // loading, then v2 from the network
        XCTAssertTrue(recorder.wait(for: "loaded v2 network"))
        XCTAssertEqual(recorder.all, ["idle - -", "loaded v1 cache (stale) stale loading", "loaded v2 network"])
    }

    func testALoadTheCacheAnswersAtOnceIsOneChangeAndTakesTheCachesFreshness() throws {
        // Given a response the cache holds, fresh for 60 s, of which 40 s have passed
        let transport = StubTransport { _ in .status(200, headers: ["Cache-Control": "max-age=60"], body: Data("v2".utf8)) }
        // (stored through a queue and origin of their own: the resource's queue is idle, as above)
        let primer = StubTransport { _ in .status(200, headers: ["Cache-Control": "max-age=60"], body: Data("v1".utf8)) }
        let cache = memoryCache()
        XCTAssertEqual(try queue(primer, shared: cache).sendAndWait(CachedRequest(path: "/feed")).text, "v1")
        clock.advance(40)

        // When a new resource loads it
        let resource = queue(transport, shared: cache).resource(CachedRequest(path: "/feed"), options: options)
        let recorder = ResourceRecorder(resource, on: context)
        resource.load()

        // Then it went from nothing to the stored value in one change, never loading, and asked no origin
        XCTAssertTrue(recorder.wait(for: "loaded v1 cache (fresh)"))
        onContext {}
        XCTAssertEqual(recorder.all, ["idle - -", "loaded v1 cache (fresh)"])
        XCTAssertEqual(transport.started.count, 0)
        // And it stays fresh for the 20 s the cache still counts, not the response's whole 60
        resourceClock.advance(19)
        XCTAssertFalse(resource.isStale)
        resourceClock.advance(2)
        XCTAssertTrue(resource.isStale)
    }

    func testAScreenThatShowsOnlyThePhaseIsToldOfEachChangeOfItAndNotOfARefreshBehindAValue() {
        // Given a screen that reads only the phase of a resource whose origin answers when told
        let transport = StubTransport { _ in .hold }
        let resource = queue(transport, cached: false).resource(CachedRequest(path: "/profile"), options: options)
        let recorder = ResourceRecorder(resource, on: context, reading: { _ = $0.phase })
        // Two turns of the context: the change, then what its observer queued.
        func settle() { onContext {}; onContext {} }

        // When it loads, the answer comes, and it loads again behind the value
        resource.load()
        XCTAssertTrue(transport.waitForStarts(1))
        settle()
        transport.releaseOldest(with: text("v1", maxAge: 60))
        XCTAssertTrue(recorder.wait(until: { $0.count == 3 }))
        resource.load()
        XCTAssertTrue(transport.waitForStarts(1))
        settle()
        let beforeTheAnswer = recorder.all
        transport.releaseOldest(with: text("v2", maxAge: 60))
        XCTAssertTrue(recorder.wait(until: { $0.count == 4 }))

        // Then it was told of idle → loading (no value yet, so the phase changed) and of each
        // value, but not of the second load's start, which left the phase loaded
        XCTAssertEqual(beforeTheAnswer, ["idle - -", "loading - - loading", "loaded v1 network"])
        XCTAssertEqual(recorder.all, ["idle - -", "loading - - loading", "loaded v1 network", "loaded v2 network"])
    }

    func testAFailureKeepsTheLastValueBesideTheError() {
        // Given a resource showing v1
        let answers = Locked([text("v1"), StubTransport.Reply.failure(.notConnectedToInternet)])
        let transport = StubTransport { _ in answers.withLock { $0.removeFirst() } }
        let resource = queue(transport, cached: false).resource(CachedRequest(path: "/profile"), options: options)
        let recorder = ResourceRecorder(resource, on: context)
        resource.load()
        XCTAssertTrue(recorder.wait(for: "loaded v1 network stale"))

        // When the next load fails
        resource.load()

        // Then v1 stays, with the error beside it, and the phase stays loaded
        XCTAssertTrue(recorder.wait(for: "loaded v1 network stale error=transport(-1009)"))
        XCTAssertEqual(recorder.all, ["idle - -", "loading - - loading", "loaded v1 network stale",
                                      "loaded v1 network stale loading", "loaded v1 network stale error=transport(-1009)"])
    }

    func testLoadIfNeededSendsNothingWhileTheValueIsFreshAndRefreshAsksTheOrigin() async {
        // Given a resource with a value fresh for 60 s, stored by the cache too
        let count = Locked(0)
        let transport = StubTransport { _ in
            let n = count.withLock { $0 += 1; return $0 }
            return .status(200, headers: ["Cache-Control": "max-age=60", "Date": CacheRuleFixtures.date(0)], body: Data("v\(n)".utf8))
        }
        let resource = queue(transport).resource(CachedRequest(path: "/profile"), options: options)
        _ = try? await resource.fetch()

        // When it is loaded if needed within its freshness, then refreshed
        resource.loadIfNeeded()
        let beforeRefresh = try? await resource.fetch()
        await resource.refresh()

        // Then only the refresh went out, past the fresh stored response, and brought v2
        XCTAssertEqual(beforeRefresh?.text, "v1")
        XCTAssertEqual(transport.started.count, 2)
        XCTAssertEqual(resource.value?.text, "v2")
        XCTAssertEqual(resource.source, .network)
    }

    func testFreshnessRunsOutOnTheResourcesClockAndStaleAfterReplacesTheHTTPFreshness() async throws {
        // Given a response fresh for 60 s by its headers, for a resource that counts 10 s
        let transport = StubTransport { _ in .status(200, headers: ["Cache-Control": "max-age=60"], body: Data("v1".utf8)) }
        var options = options
        options.staleAfter = .seconds(10)
        let resource = queue(transport).resource(CachedRequest(path: "/a"), options: options)
        _ = try await resource.fetch()
        let freshAtFirst = resource.isStale

        // When 10 s pass on the resource's clock
        resourceClock.advance(10)
        onContext {}
        _ = try await resource.fetch()

        // Then the value went stale and the next fetch loaded from the origin, although the cache would still answer
        XCTAssertFalse(freshAtFirst)
        XCTAssertEqual(transport.started.count, 2)
        XCTAssertEqual(resource.source, .network)
    }

    func testAWriteThroughTheQueueMakesTheResourceOfItsURLStaleAndAWatchedOneLoadsAgain() async throws {
        // Given a watched resource of /posts/7, fresh for an hour, and one of /posts/8
        // (answered at once, until the test holds its GETs)
        let version = Locked(1)
        let holdsGets = Locked(false)
        let transport = StubTransport { request in
            if request.httpMethod == "PUT" { version.withLock { $0 += 1 }; return .status(204) }
            if holdsGets.withLock({ $0 }) { return .hold }
            return .status(200, headers: ["Cache-Control": "max-age=3600"], body: Data("v\(version.withLock { $0 })".utf8))
        }
        let queue = queue(transport)
        let post = queue.resource(CachedRequest(path: "/posts/7"), options: options)
        let other = queue.resource(CachedRequest(path: "/posts/8"), options: options)
        let recorder = ResourceRecorder(post, on: context)
        let watching = Task { await post.watch() }
        XCTAssertTrue(recorder.wait(for: "loaded v1 network"))
        _ = try await other.fetch()

        // When a PUT to /posts/7 succeeds
        holdsGets.withLock { $0 = true }
        _ = try await queue.send(CachedRequest(path: "/posts/7", method: .put))

        // Then the watched resource loaded again at once, from the origin; the other one is untouched
        XCTAssertTrue(eventually { transport.heldCount == 1 })
        transport.releaseOldest(with: .status(200, headers: ["Cache-Control": "max-age=3600"], body: Data("v2".utf8)))
        XCTAssertTrue(recorder.wait(for: "loaded v2 network"))
        XCTAssertEqual(recorder.all, ["idle - -", "loading - - loading", "loaded v1 network", "loaded v1 network stale loading",
                                      "loaded v2 network"])
        XCTAssertFalse(other.isStale)
        watching.cancel()
        await watching.value
    }

    func testInvalidatingUnderAURLMakesItsPathsStaleWhateverTheirQueryButNotItsNeighbours() async throws {
        // Given resources of /posts, /posts?page=2, /posts/7 and /postscript
        let transport = StubTransport { _ in .status(200, headers: ["Cache-Control": "max-age=3600"], body: Data("v".utf8)) }
        let queue = queue(transport)
        let paths = ["/posts", "/posts?page=2", "/posts/7", "/postscript"]
        let resources = paths.map { queue.resource(CachedRequest(path: $0), options: options) }
        for resource in resources { _ = try await resource.fetch() }

        // When the app invalidates what is under /posts
        queue.invalidateResources(under: URL(string: "https://API.example.com/posts")!)
        onContext {}

        // Then the first three are stale, /postscript is not
        XCTAssertEqual(resources.map(\.isStale), [true, true, true, false])
    }

    func testAWatchedResourceRetriesAfterAFailureWhenItsBackoffPassesOnTheClock() {
        // Given a watched resource whose first load fails
        let answers = Locked([StubTransport.Reply.failure(.cannotConnectToHost), text("v1")])
        let transport = StubTransport { _ in answers.withLock { $0.removeFirst() } }
        let resource = queue(transport, cached: false).resource(CachedRequest(path: "/profile"), options: options)
        let recorder = ResourceRecorder(resource, on: context)
        let watching = Task { await resource.watch() }
        XCTAssertTrue(recorder.wait(for: "failed - - error=transport(-1004)"))
        onContext {}
        XCTAssertEqual(resourceClock.nextDue, resourceClock.now + 1)

        // When the clock passes the first backoff (1 s)
        resourceClock.advance(1)

        // Then it loaded again and shows the value
        XCTAssertTrue(recorder.wait(for: "loaded v1 network stale"))
        XCTAssertEqual(recorder.all, ["idle - -", "loading - - loading", "failed - - error=transport(-1004)",
                                      "loading - - loading error=transport(-1004)", "loaded v1 network stale"])
        watching.cancel()
    }

    func testTwoScreensOfOneRequestShareOneResourceAndOneTransfer() async throws {
        // Given an origin that holds its answers
        let transport = StubTransport { _ in .hold }
        let queue = queue(transport)

        // When two screens ask for the same request's resource and both load
        let first = queue.resource(CachedRequest(path: "/profile"), options: options)
        let second = queue.resource(CachedRequest(path: "/profile"), options: options)
        let different = queue.resource(CachedRequest(path: "/profile", headers: ["Accept-Language": "fr"]), options: options)
        first.loadIfNeeded()
        second.loadIfNeeded()
        let fetching = Task { try await second.fetch() }
        XCTAssertTrue(transport.waitForStarts(1))
        // Fresh, so that a fetch that starts only after the answer takes it without a request.
        transport.releaseOldest(with: text("v1", maxAge: 60))
        let value = try await fetching.value

        // Then they are one resource, which sent one request; other header fields make another resource
        XCTAssertTrue(first === second)
        XCTAssertFalse(first === different)
        XCTAssertEqual(value.text, "v1")
        XCTAssertEqual(transport.started.count, 1)
    }

    func testADroppedResourceCancelsItsLoadAndLeavesTheQueue() {
        // Given a resource whose load is in flight
        let transport = StubTransport { _ in .hold }
        let queue = queue(transport)
        var resource: Resource<CachedRequest>? = queue.resource(CachedRequest(path: "/profile"), options: options)
        resource?.load()
        XCTAssertTrue(transport.waitForStarts(1))
        XCTAssertEqual(transport.heldCount, 1)

        // When nobody holds it any more
        resource = nil
        onContext {}

        // Then its request was cancelled and the queue hands out a new resource
        XCTAssertTrue(eventually { transport.heldCount == 0 })
        XCTAssertTrue(queue.resources.isEmpty)
    }

    func testFetchThrowsTheLoadsErrorAndACancelledFetchLeavesTheLoadRunning() async {
        // Given an origin that holds
        let transport = StubTransport { _ in .hold }
        let resource = queue(transport, cached: false).resource(CachedRequest(path: "/profile"), options: options)

        // When a fetch's task is cancelled while the load runs
        let fetching = Task { try await resource.fetch() }
        XCTAssertTrue(transport.waitForStarts(1))
        fetching.cancel()
        let cancelled = await fetching.result

        // Then that fetch ends cancelled, the load goes on, and a second fetch gets its failure
        XCTAssertEqual(cancelled.failureDescription, "\(RequestError.cancelled)")
        XCTAssertEqual(transport.heldCount, 1)
        let second = Task { try await resource.fetch() }
        // The second fetch has joined the load once its change has run on the context.
        XCTAssertTrue(eventually { resource.waiterCount == 1 })
        transport.releaseOldest(with: .status(503))
        let failure = await second.result.failureDescription ?? ""
        XCTAssertTrue(failure.contains("503"), failure)
    }

    func testAResourceNobodyReadHasNoRegistrarAndTheFirstReadTracksFromWhatCameBefore() async throws {
        // Given a resource that loaded v1 while nothing read it (a fetch reads no property)
        let transport = StubTransport { _ in .hold }
        let resource = queue(transport, cached: false).resource(CachedRequest(path: "/profile"), options: options)
        let fetching = Task { try await resource.fetch() }
        XCTAssertTrue(transport.waitForStarts(1))
        transport.releaseOldest(with: text("v1", maxAge: 60))
        let first = try await fetching.value
        XCTAssertEqual(first.text, "v1")

        // Then it has no observation registrar yet: nothing can be tracking it
        XCTAssertFalse(resource.hasObservationRegistrar)

        // When a screen reads it, tracking it, and it loads again
        let changes = Locked(0)
        onContext {
            withObservationTracking {
                XCTAssertEqual(resource.value?.text, "v1")
            } onChange: {
                changes.withLock { $0 += 1 }
            }
        }
        XCTAssertTrue(resource.hasObservationRegistrar)
        resource.load()

        // Then the screen hears of the change (once: tracking ends at its first change)
        XCTAssertTrue(transport.waitForStarts(1))
        transport.releaseOldest(with: text("v2", maxAge: 60))
        XCTAssertTrue(eventually { self.context.sync { resource.value?.text == "v2" } })
        XCTAssertEqual(changes.withLock { $0 }, 1)
    }

    func testAResourceOnTheMainActorChangesOnTheMainThread() async throws {
        // Given a resource with the default context
        let transport = StubTransport { _ in .status(200, body: Data("v1".utf8)) }
        var options = ResourceOptions()
        options.clock = resourceClock.clock
        let resource = queue(transport, cached: false).resource(CachedRequest(path: "/profile"), options: options)
        let changedOnMain = Locked<[Bool]>([])

        // When it loads while observed
        await MainActor.run {
            withObservationTracking { _ = resource.value } onChange: { changedOnMain.withLock { $0.append(Thread.isMainThread) } }
            resource.load()
            XCTAssertTrue(resource.isLoading, "a load started on the main actor shows at once")
        }
        let value = try await resource.fetch()

        // Then the value arrived on the main thread
        XCTAssertEqual(value.text, "v1")
        XCTAssertEqual(changedOnMain.withLock { $0 }, [true])
    }
}

private extension Result {
    var failureDescription: String? {
        if case .failure(let error) = self { return "\(error)" }
        return nil
    }
}

private extension RequestQueue {
    /// Sends and waits, for a test's set-up.
    func sendAndWait<R: Request>(_ request: R) throws -> R.ResponseType {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Result<R.ResponseType, RequestError>?>(nil)
        let id = add(request)
        addObserver(for: id) { (outcome: Result<R.ResponseType, RequestError>) in
            result.withLock { $0 = outcome }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 30)
        return try XCTUnwrap(result.withLock { $0 }).get()
    }
}
