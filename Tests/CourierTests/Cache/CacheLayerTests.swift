import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The cache layer through a queue, against a stub origin and a clock the tests set: what is
/// answered from the cache, what is sent (with which validators), what each result says of its source.
final class CacheLayerTests: XCTestCase {
    private let clock = TestClock()
    private let metrics = MetricsRecorder()

    private static func date(_ offset: Double = 0) -> String { CacheRuleFixtures.date(offset) }
    private func date(_ offset: Double = 0) -> String { Self.date(offset) }

    /// An origin that answers from `reply` and records the requests it got.
    private func origin(_ reply: @escaping @Sendable (URLRequest) -> StubTransport.Reply) -> StubTransport {
        StubTransport(reply: reply)
    }

    private func ok(_ body: String, _ headers: [String: String]) -> StubTransport.Reply { Self.ok(body, headers) }

    private static func ok(_ body: String, _ headers: [String: String]) -> StubTransport.Reply {
        .status(200, headers: headers, body: Data(body.utf8))
    }

    private func value(_ result: Result<Text, RequestError>?) -> String? {
        (try? result?.get())?.text
    }

    // MARK: - Freshness

    func testAFreshStoredResponseAnswersWithoutARequest() {
        // Given an origin whose response is fresh for 60 s
        let transport = origin { _ in Self.ok("v1", ["Cache-Control": "max-age=60", "Date": Self.date()]) }
        let (queue, _) = cachedQueue(transport, clock: clock, metrics: metrics)
        // When it is asked twice within the minute
        let (first, firstResult) = fetch(CachedRequest(path: "/a"), on: queue)
        clock.advance(59)
        let (second, secondResult) = fetch(CachedRequest(path: "/a"), on: queue)
        // Then one request reached the origin; the second came from the cache, fresh
        XCTAssertEqual(value(firstResult), "v1")
        XCTAssertEqual(value(secondResult), "v1")
        XCTAssertEqual(transport.started.count, 1)
        XCTAssertEqual(metrics[first]?.source, .network)
        XCTAssertEqual(metrics[second]?.source, .cache(.fresh))
        XCTAssertEqual(metrics[second]?.bytesReceived, 0)
        XCTAssertEqual(metrics[first]?.bytesReceived, 2)
    }

    func testAStaleResponseIsValidatedAndA304AnswersWithTheStoredBody() throws {
        // Given a stored response with both validators, 61 s old when it is asked again
        let transport = origin { request in
            if request.value(forHTTPHeaderField: "If-None-Match") != nil { return .status(304, headers: ["Date": Self.date(61)]) }
            return Self.ok("v1", ["Cache-Control": "max-age=60", "ETag": "\"e1\"", "Last-Modified": Self.date(-3600),
                                  "Date": Self.date()])
        }
        let (queue, _) = cachedQueue(transport, clock: clock, metrics: metrics)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        clock.advance(61)
        // When it is asked again
        let (id, result) = fetch(CachedRequest(path: "/a"), on: queue)
        // Then the request carried both validators, and the 304 made the stored body the answer
        let sent = try XCTUnwrap(transport.started.last)
        XCTAssertEqual(sent.value(forHTTPHeaderField: "If-None-Match"), "\"e1\"")
        XCTAssertEqual(sent.value(forHTTPHeaderField: "If-Modified-Since"), date(-3600))
        XCTAssertEqual(value(result), "v1")
        XCTAssertEqual(metrics[id]?.source, .cache(.revalidated))
        XCTAssertEqual(metrics[id]?.statusCode, 200)
        // And the freshened response is fresh again for another minute: no third request
        clock.advance(30)
        let (third, _) = fetch(CachedRequest(path: "/a"), on: queue)
        XCTAssertEqual(metrics[third]?.source, .cache(.fresh))
        XCTAssertEqual(transport.started.count, 2)
    }

    func testA304ForAnotherRepresentationIsAskedAgainWithoutValidators() throws {
        // Given an origin whose 304 names another ETag than the stored one
        let transport = origin { request in
            if request.value(forHTTPHeaderField: "If-None-Match") != nil { return .status(304, headers: ["ETag": "\"other\""]) }
            return Self.ok("v2", ["Cache-Control": "max-age=60", "ETag": "\"e1\"", "Date": Self.date()])
        }
        let (queue, _) = cachedQueue(transport, clock: clock, metrics: metrics)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        clock.advance(61)
        let (id, result) = fetch(CachedRequest(path: "/a"), on: queue)
        // Then the cache asked once more, unconditionally, and the full response answered
        XCTAssertEqual(transport.started.count, 3)
        XCTAssertNil(transport.started.last?.value(forHTTPHeaderField: "If-None-Match"))
        XCTAssertEqual(value(result), "v2")
        XCTAssertEqual(metrics[id]?.source, .network)
    }

    func testAStaleResponseWithoutValidatorsIsLoadedAgain() {
        let count = Locked(0)
        let transport = origin { _ in
            let n = count.withLock { $0 += 1; return $0 }
            return Self.ok("v\(n)", ["Cache-Control": "max-age=10", "Date": Self.date()])
        }
        let (queue, _) = cachedQueue(transport, clock: clock, metrics: metrics)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        clock.advance(11)
        let (id, result) = fetch(CachedRequest(path: "/a"), on: queue)
        XCTAssertNil(transport.started.last?.value(forHTTPHeaderField: "If-None-Match"))
        XCTAssertNil(transport.started.last?.value(forHTTPHeaderField: "If-Modified-Since"))
        XCTAssertEqual(value(result), "v2")
        XCTAssertEqual(metrics[id]?.source, .network)
    }

    // MARK: - Serving stale

    /// A queue whose origin stored "v1" with `cacheControl` at the start of the clock, and from
    /// then on fails with `failure`; the clock is 120 s on.
    private func storedThenFailing(_ cacheControl: String, failure: StubTransport.Reply) -> RequestQueue {
        let failing = Locked(false)
        let transport = origin { _ in
            failing.withLock { $0 } ? failure : Self.ok("v1", ["Cache-Control": cacheControl, "Date": Self.date()])
        }
        // An origin found gone stays so for the test's length (nothing waits for it, so its probe would forget it).
        let (queue, _) = cachedQueue(transport, clock: clock, metrics: metrics,
                                     connectivity: Connectivity(initialDelay: 3_600, maximumDelay: 3_600))
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        failing.withLock { $0 = true }
        clock.advance(120)
        return queue
    }

    func testStaleIfErrorServesTheStoredResponseWhenTheOriginFails() {
        // Given a stored response allowed 600 s of staleness on errors, and an origin that then fails
        let queue = storedThenFailing("max-age=60, stale-if-error=600", failure: .status(503))
        // When it is asked again, the origin answering 503
        let (id, result) = fetch(CachedRequest(path: "/a"), on: queue)
        // Then the stored response answers, marked stale; the origin answered, so the network is there
        XCTAssertEqual(value(result), "v1")
        XCTAssertEqual(metrics[id]?.source, .cache(.stale))
        XCTAssertNil(metrics[id]?.networkFailure)
        XCTAssertEqual(queue.networkStatus.unreachableOrigins, [:])
        // But past the window the error is the answer
        clock.advance(600)
        let (_, late) = fetch(CachedRequest(path: "/a"), on: queue)
        XCTAssertEqual(late.flatMap { try? $0.get() }, nil)
        guard case .failure(.validationFailed(let response, _))? = late else { return XCTFail("got \(String(describing: late))") }
        XCTAssertEqual(response.statusCode, 503)
    }

    func testStaleIfErrorServesTheStoredResponseWhenTheNetworkFails() {
        // Given a stored response allowed 600 s of staleness on errors, and an origin that then refuses connections
        let queue = storedThenFailing("max-age=60, stale-if-error=600", failure: .failure(.cannotConnectToHost))
        // When it is asked again
        let (id, result) = fetch(CachedRequest(path: "/a"), on: queue)
        // Then the stored response answers, marked stale, with the failure it stands in for
        XCTAssertEqual(value(result), "v1")
        XCTAssertEqual(metrics[id]?.source, .cache(.stale))
        XCTAssertEqual(metrics[id]?.networkFailure?.code, .cannotConnectToHost)
        // And the queue learned the origin is gone, as if the request had failed
        XCTAssertEqual(Array(queue.networkStatus.unreachableOrigins.keys), ["https://api.example.com:443"])
    }

    func testWithoutStaleIfErrorTheFailureIsTheAnswer() {
        let queue = storedThenFailing("max-age=60", failure: .failure(.cannotConnectToHost))
        guard case .failure(.transportFailed)? = fetch(CachedRequest(path: "/a"), on: queue).1 else { return XCTFail() }
    }

    func testStaleWhileRevalidateAnswersAtOnceAndRevalidatesInTheBackground() throws {
        // Given a stored response 120 s old allowed 600 s of stale-while-revalidate, and an origin that holds requests
        let holding = Locked(false)
        let transport = origin { request in
            if holding.withLock({ $0 }) { return .hold }
            return Self.ok("v1", ["Cache-Control": "max-age=60, stale-while-revalidate=600", "ETag": "\"e1\"", "Date": Self.date()])
        }
        let (queue, cache) = cachedQueue(transport, clock: clock, metrics: metrics)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        let firstStored = cache.memory?.responses(for: "https://api.example.com/a").first?.responseTime
        holding.withLock { $0 = true }
        clock.advance(120)
        // When it is asked again
        let (id, result) = fetch(CachedRequest(path: "/a"), on: queue)
        // Then the stale response answered at once, and a conditional request went out behind it
        XCTAssertEqual(value(result), "v1")
        XCTAssertEqual(metrics[id]?.source, .cache(.stale))
        XCTAssertTrue(transport.waitForStarts(2))
        XCTAssertEqual(transport.started.last?.value(forHTTPHeaderField: "If-None-Match"), "\"e1\"")
        // When the origin confirms it
        transport.releaseOldest(with: .status(304, headers: ["Date": date(120)]))
        // Then once that is stored, the next request is answered fresh, with nothing more sent
        // (The revalidation is stored in the background, with nothing to tell the test: polled.)
        XCTAssertTrue(eventually { cache.memory?.responses(for: "https://api.example.com/a").first?.responseTime != firstStored },
                      "the revalidated response was stored")
        let (next, _) = fetch(CachedRequest(path: "/a"), on: queue)
        XCTAssertEqual(metrics[next]?.source, .cache(.fresh))
        XCTAssertEqual(transport.started.count, 2)
    }

    // MARK: - Policies

    func testReloadIgnoresAFreshStoredResponseAndStoresTheNewOne() {
        let count = Locked(0)
        let transport = origin { _ in
            let n = count.withLock { $0 += 1; return $0 }
            return Self.ok("v\(n)", ["Cache-Control": "max-age=600", "Date": Self.date()])
        }
        let (queue, _) = cachedQueue(transport, clock: clock, metrics: metrics)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        let (id, result) = fetch(CachedRequest(path: "/a", cachePolicy: .reload), on: queue)
        XCTAssertEqual(value(result), "v2")
        XCTAssertEqual(metrics[id]?.source, .network)
        XCTAssertEqual(value(fetch(CachedRequest(path: "/a"), on: queue).1), "v2")
        XCTAssertEqual(transport.started.count, 2)
    }

    func testReturnCachedElseLoadServesAStaleResponseWithoutAsking() {
        let transport = origin { _ in Self.ok("v1", ["Cache-Control": "max-age=10", "Date": Self.date()]) }
        let (queue, _) = cachedQueue(transport, clock: clock, metrics: metrics)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        clock.advance(86_400)
        let (id, result) = fetch(CachedRequest(path: "/a", cachePolicy: .returnCachedElseLoad), on: queue)
        XCTAssertEqual(value(result), "v1")
        XCTAssertEqual(metrics[id]?.source, .cache(.stale))
        XCTAssertEqual(transport.started.count, 1)
        // And with nothing stored it loads
        XCTAssertEqual(value(fetch(CachedRequest(path: "/b", cachePolicy: .returnCachedElseLoad), on: queue).1), "v1")
        XCTAssertEqual(transport.started.count, 2)
    }

    func testOnlyCachedFailsWithNotCachedWhenNothingIsStoredAndNeverSends() throws {
        // Given a response without any freshness (a plain 200: stored, stale at once)
        let transport = origin { _ in Self.ok("v1", [:]) }
        let (queue, _) = cachedQueue(transport, clock: clock, metrics: metrics)
        // When an offline request finds nothing
        let (_, missing) = fetch(CachedRequest(path: "/a", cachePolicy: .onlyCached), on: queue)
        guard case .failure(.notCached(let url))? = missing else { return XCTFail("got \(String(describing: missing))") }
        XCTAssertEqual(url?.absoluteString, "https://api.example.com/a")
        XCTAssertEqual(transport.started.count, 0)
        // When it was loaded once online
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        let (id, offline) = fetch(CachedRequest(path: "/a", cachePolicy: .onlyCached), on: queue)
        // Then offline it answers with it, marked stale
        XCTAssertEqual(value(offline), "v1")
        XCTAssertEqual(metrics[id]?.source, .cache(.stale))
        XCTAssertEqual(transport.started.count, 1)
    }

    // MARK: - What is stored, and for whom

    func testNoStoreIsNeverStoredAndRemovesWhatWas() {
        let noStore = Locked(false)
        let transport = origin { _ in
            Self.ok("v", ["Cache-Control": noStore.withLock { $0 } ? "no-store" : "max-age=600", "Date": Self.date()])
        }
        let (queue, cache) = cachedQueue(transport, clock: clock)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        XCTAssertGreaterThan(cache.memoryUsage, 0)
        noStore.withLock { $0 = true }
        _ = fetch(CachedRequest(path: "/a", cachePolicy: .reload), on: queue)
        XCTAssertEqual(cache.memoryUsage, 0)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        XCTAssertEqual(transport.started.count, 3)
    }

    func testVaryKeepsVariantsApart() {
        let transport = origin { request in
            let language = request.value(forHTTPHeaderField: "Accept-Language") ?? "none"
            return Self.ok(language, ["Cache-Control": "max-age=600", "Vary": "Accept-Language", "Date": Self.date()])
        }
        let (queue, _) = cachedQueue(transport, clock: clock)
        XCTAssertEqual(value(fetch(CachedRequest(path: "/a", headers: ["Accept-Language": "en"]), on: queue).1), "en")
        XCTAssertEqual(value(fetch(CachedRequest(path: "/a", headers: ["Accept-Language": "fr"]), on: queue).1), "fr")
        XCTAssertEqual(value(fetch(CachedRequest(path: "/a", headers: ["Accept-Language": "en"]), on: queue).1), "en")
        XCTAssertEqual(value(fetch(CachedRequest(path: "/a"), on: queue).1), "none")
        XCTAssertEqual(transport.started.count, 3)
    }

    func testAResponseToOneUsersCredentialsNeverAnswersAnother() {
        let transport = origin { request in
            Self.ok(request.value(forHTTPHeaderField: "Authorization") ?? "anonymous", ["Cache-Control": "max-age=600", "Date": Self.date()])
        }
        let (queue, _) = cachedQueue(transport, clock: clock)
        XCTAssertEqual(value(fetch(CachedRequest(path: "/me", headers: ["Authorization": "Bearer ada"]), on: queue).1), "Bearer ada")
        XCTAssertEqual(value(fetch(CachedRequest(path: "/me", headers: ["Authorization": "Bearer bob"]), on: queue).1), "Bearer bob")
        XCTAssertEqual(value(fetch(CachedRequest(path: "/me", headers: ["Authorization": "Bearer ada"]), on: queue).1), "Bearer ada")
        XCTAssertEqual(transport.started.count, 2)
    }

    func testAnUnsafeRequestInvalidatesWhatItChanged() {
        let transport = origin { request in
            request.httpMethod == "GET" ? Self.ok("v", ["Cache-Control": "max-age=600", "Date": Self.date()]) : .status(204)
        }
        let (queue, _) = cachedQueue(transport, clock: clock)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        XCTAssertEqual(transport.started.count, 1)
        // When a DELETE of the same URL succeeds
        _ = fetch(CachedRequest(path: "/a", method: .delete), on: queue)
        // Then the next GET goes to the origin again
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        XCTAssertEqual(transport.started.count, 3)
    }

    func testIdenticalRequestsInFlightAreLookedUpAndStoredOnce() {
        // Given an origin that holds its answer, and ten identical GETs
        let transport = origin { _ in .hold }
        let (queue, cache) = cachedQueue(transport, clock: clock)
        let ids = (0..<10).map { _ in queue.add(CachedRequest(path: "/a")) }
        XCTAssertTrue(transport.waitForStarts(1))
        XCTAssertTrue(eventually { (queue.transport as? SharingTransport)?.sharing.participants == 10 },
                      "all ten joined the held transfer")
        transport.releaseOldest(with: ok("shared", ["Cache-Control": "max-age=600", "Date": date()]))
        // Then all ten have it, one request was sent, and it was stored once
        for id in ids { XCTAssertEqual(value(result(of: id, on: queue, as: Text.self)), "shared") }
        XCTAssertEqual(transport.started.count, 1)
        XCTAssertEqual(cache.memory?.responses(for: "https://api.example.com/a").count, 1)
    }

    func testWhatTheOriginSentIsStoredAlikeInMemoryAndOnDisk() throws {
        // Given a cache in memory and on disk, and an origin whose answer varies by language
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-layer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try ResponseCache(directory: directory)
        let transport = origin { _ in
            Self.ok("v1", ["Cache-Control": "max-age=600", "Vary": "Accept-Language", "ETag": "\"e1\""])
        }
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.cache = cache
        let queue = RequestQueue(configuration: configuration, delegate: nil, baseURL: URL(string: "https://api.example.com"),
                                 transport: transport, connectivity: Connectivity())
        // When a request in English, with credentials, gets it
        XCTAssertEqual(value(fetch(CachedRequest(path: "/a", headers: ["Accept-Language": "en", "Authorization": "Bearer ada"]),
                                   on: queue).1), "v1")
        // Then each store holds the same response: its status, fields, body, variant and credential
        let inMemory = try XCTUnwrap(cache.memory).responses(for: "https://api.example.com/a")
        let onDisk = try XCTUnwrap(cache.disk).responses(for: "https://api.example.com/a")
        XCTAssertEqual(inMemory.count, 1)
        XCTAssertEqual(inMemory, onDisk)
        let stored = try XCTUnwrap(inMemory.first)
        XCTAssertEqual(stored.url, "https://api.example.com/a")
        XCTAssertEqual(stored.statusCode, 200)
        XCTAssertEqual(stored.body, Data("v1".utf8))
        XCTAssertEqual(stored.headers["ETag"], "\"e1\"")
        XCTAssertEqual(stored.headers["Vary"], "Accept-Language")
        XCTAssertEqual(stored.secondaryKey, ["en"])
        XCTAssertEqual(stored.credentialKey, Storability.credentialKey(requestHeaders: ["Authorization": "Bearer ada"]))
        XCTAssertLessThanOrEqual(stored.requestTime, stored.responseTime)
        // And the memory store counted the response's cost as the response itself does
        XCTAssertEqual(cache.memoryUsage, stored.cost)
    }

    // MARK: - Cached, then fresh

    func testLoadShowsTheStaleStoredValueFirstThenTheRevalidatedOne() {
        let transport = origin { request in
            if request.value(forHTTPHeaderField: "If-None-Match") != nil { return .status(304, headers: [:]) }
            return Self.ok("v1", ["Cache-Control": "max-age=60", "ETag": "\"e1\"", "Date": Self.date()])
        }
        let (queue, _) = cachedQueue(transport, clock: clock)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        clock.advance(61)
        let updates = loadUpdates(CachedRequest(path: "/a"), on: queue, count: 2)
        XCTAssertEqual(updates.map(\.value?.text), ["v1", "v1"])
        XCTAssertEqual(updates.map(\.source), [.cache(.stale), .cache(.revalidated)])
        XCTAssertEqual(updates.map(\.isFinal), [false, true])
    }

    func testLoadWithAFreshStoredValueGetsOneFinalUpdate() {
        let transport = origin { _ in Self.ok("v1", ["Cache-Control": "max-age=60", "Date": Self.date()]) }
        let (queue, _) = cachedQueue(transport, clock: clock)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        let updates = loadUpdates(CachedRequest(path: "/a"), on: queue, count: 1)
        XCTAssertEqual(updates.map(\.source), [.cache(.fresh)])
        XCTAssertEqual(updates.map(\.isFinal), [true])
        XCTAssertEqual(transport.started.count, 1)
    }

    func testLoadWithNothingStoredGetsTheNetworkResult() {
        let transport = origin { _ in Self.ok("v1", ["Cache-Control": "max-age=60", "Date": Self.date()]) }
        let (queue, _) = cachedQueue(transport, clock: clock)
        let updates = loadUpdates(CachedRequest(path: "/a"), on: queue, count: 1)
        XCTAssertEqual(updates.map(\.value?.text), ["v1"])
        XCTAssertEqual(updates.map(\.source), [.network])
    }

    func testLoadThatFailsAfterShowingAStoredValueSaysTheValueStands() {
        let queue = storedThenFailing("max-age=60", failure: .failure(.notConnectedToInternet))
        let updates = loadUpdates(CachedRequest(path: "/a"), on: queue, count: 2)
        XCTAssertEqual(updates.map(\.value?.text), ["v1", nil])
        XCTAssertEqual(updates.map(\.isFinal), [false, true])
        XCTAssertEqual(updates.map(\.cachedValueStands), [false, true])
        guard case .transportFailed? = updates.last?.error else { return XCTFail("got \(updates)") }
    }

    func testTypeObserversOfUpdatesSeeBothMarkedAndPlainOnesTheResultOnly() {
        let transport = origin { request in
            if request.value(forHTTPHeaderField: "If-None-Match") != nil { return .status(304, headers: [:]) }
            return Self.ok("v1", ["Cache-Control": "max-age=60", "ETag": "\"e1\"", "Date": Self.date()])
        }
        let (queue, _) = cachedQueue(transport, clock: clock)
        _ = fetch(CachedRequest(path: "/a"), on: queue)
        clock.advance(61)
        let owner = ObserverOwner()
        let marked = Recorder<ResponseUpdate<Text>>()
        let plain = Recorder<Result<Text, RequestError>>()
        queue.addObserver(ownedBy: owner, updates: { (update: ResponseUpdate<Text>) in marked.append(update) })
        queue.addObserver(ownedBy: owner) { (result: Result<Text, RequestError>) in plain.append(result) }
        let updates = loadUpdates(CachedRequest(path: "/a"), on: queue, count: 2)
        TestQueues.callbacks.sync {}
        XCTAssertEqual(updates.count, 2)
        XCTAssertEqual(marked.all.map(\.isFinal), [false, true])
        XCTAssertEqual(marked.all.map(\.source), [.cache(.stale), .cache(.revalidated)])
        XCTAssertEqual(plain.count, 1)
        withExtendedLifetime(owner) {}
    }

    private func loadUpdates(_ request: CachedRequest, on queue: RequestQueue, count: Int,
                             file: StaticString = #filePath, line: UInt = #line) -> [ResponseUpdate<Text>] {
        let updates = Recorder<ResponseUpdate<Text>>()
        let done = expectation(description: "updates")
        done.expectedFulfillmentCount = count
        queue.load(request) { update in
            updates.append(update)
            done.fulfill()
        }
        wait(for: [done], timeout: 30)
        TestQueues.callbacks.sync {}
        XCTAssertEqual(updates.count, count, "updates", file: file, line: line)
        return updates.all
    }
}
