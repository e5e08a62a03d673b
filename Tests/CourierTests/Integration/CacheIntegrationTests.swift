import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The HTTP cache against real origins, through the run's network transport (Scripts/test.sh runs
/// this with curl and with URLSession): nginx, whose ETag, Last-Modified and 304 are its own and
/// whose caching headers come from its config, and httpbin's /cache, /cache/N, /etag and
/// /response-headers. The servers' access logs prove what reached them; the cache's clock is the
/// test's, so staleness needs no waiting.
final class CacheIntegrationTests: XCTestCase {
    private let clock = TestClock(Date().timeIntervalSince1970)
    private let metrics = MetricsRecorder()

    private func queue(baseURL: URL) -> (RequestQueue, ResponseCache) {
        let cache = ResponseCache(memory: MemoryStore(capacity: 4 << 20), disk: nil, directory: nil,
                                  heuristicFreshnessLimit: 86_400, clock: { [clock] in clock.now })
        var configuration = RequestQueueConfiguration.default
        configuration.transport = HTTPBin.transport
        configuration.callbackQueue = TestQueues.callbacks
        configuration.timeoutInterval = 20
        configuration.cache = cache
        return (RequestQueue(configuration: configuration, delegate: metrics, baseURL: baseURL), cache)
    }

    private func get(_ path: String, on queue: RequestQueue, headers: [String: String] = [:],
                     policy: CachePolicy = .useProtocol, file: StaticString = #filePath, line: UInt = #line)
        throws -> (text: String, source: ResponseSource?) {
        let (id, result) = fetch(CachedRequest(path: path, headers: headers, cachePolicy: policy), on: queue, file: file, line: line)
        let value = try XCTUnwrap(result, file: file, line: line).get()
        return (value.text, metrics[id]?.source)
    }

    private static let tenDaysAgo = Date() - 10 * 86_400

    // MARK: - nginx

    func testNginxExpiresAnswersFromTheCacheWithoutReachingNginx() throws {
        // Given a file nginx serves with `expires 1h`
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write(#"{"v":1}"#, in: "expires", directory: origin.directory)
        let (queue, _) = queue(baseURL: origin.url)
        // When it is fetched twice, the second time 59 minutes later
        let first = try get(path, on: queue)
        clock.advance(59 * 60)
        let second = try get(path, on: queue)
        // Then nginx saw one request; the second answer came from the cache, fresh
        XCTAssertEqual(first.text, #"{"v":1}"#)
        XCTAssertEqual(second.text, #"{"v":1}"#)
        XCTAssertEqual(first.source, .network)
        XCTAssertEqual(second.source, .cache(.fresh))
        XCTAssertEqual(origin.log.waitForRequests(to: path, count: 1).map(\.status), [200])
        // And an hour later it asks nginx again, which confirms it with its own 304
        clock.advance(2 * 60)
        XCTAssertEqual(try get(path, on: queue).source, .cache(.revalidated))
        XCTAssertEqual(origin.log.waitForRequests(to: path, count: 2).map(\.status), [200, 304])
    }

    func testNginxValidatesAStaleFileWithItsETagAndLastModifiedAndA304KeepsTheBody() throws {
        // Given a file last modified ten days ago (heuristically fresh for a day), two days later
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write("plain text", in: "plain", directory: origin.directory, modified: Self.tenDaysAgo)
        let (queue, _) = queue(baseURL: origin.url)
        XCTAssertEqual(try get(path, on: queue).source, .network)
        XCTAssertEqual(try get(path, on: queue).source, .cache(.fresh))
        clock.advance(2 * 86_400)
        // When it is fetched again
        let again = try get(path, on: queue)
        // Then the cache sent nginx's own validators, nginx answered 304, and the body is the stored one
        XCTAssertEqual(again.text, "plain text")
        XCTAssertEqual(again.source, .cache(.revalidated))
        let requests = origin.log.waitForRequests(to: path, count: 2)
        XCTAssertEqual(requests.map(\.status), [200, 304])
        let validation = try XCTUnwrap(requests.last)
        XCTAssertNotNil(validation.ifNoneMatch)
        XCTAssertEqual(validation.ifModifiedSince, HTTPDate.format(Date(timeIntervalSince1970: Self.tenDaysAgo.timeIntervalSince1970.rounded(.down))))
    }

    func testAFileChangedOnTheOriginIsLoadedAgainAfterValidation() throws {
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write("first", in: "plain", directory: origin.directory, modified: Self.tenDaysAgo)
        let (queue, _) = queue(baseURL: origin.url)
        XCTAssertEqual(try get(path, on: queue).text, "first")
        // When the file changes and the stored copy has gone stale
        try Data("second version".utf8).write(to: origin.directory.appendingPathComponent(String(path.dropFirst())))
        clock.advance(2 * 86_400)
        let again = try get(path, on: queue)
        // Then the validation got the new file, and it is stored in place of the old one
        XCTAssertEqual(again.text, "second version")
        XCTAssertEqual(again.source, .network)
        // And the new version is what is stored now (nginx confirms it: the cache's clock runs two
        // days ahead of nginx's, so the new copy is as stale as the old one was)
        let third = try get(path, on: queue)
        XCTAssertEqual(third.text, "second version")
        XCTAssertEqual(third.source, .cache(.revalidated))
        XCTAssertEqual(origin.log.waitForRequests(to: path, count: 3).map(\.status), [200, 200, 304])
    }

    func testNoStoreReachesNginxEveryTime() throws {
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write("secret", in: "no-store", directory: origin.directory, modified: Self.tenDaysAgo)
        let (queue, cache) = queue(baseURL: origin.url)
        XCTAssertEqual(try get(path, on: queue).source, .network)
        XCTAssertEqual(try get(path, on: queue).source, .network)
        let requests = origin.log.waitForRequests(to: path, count: 2)
        XCTAssertEqual(requests.map(\.status), [200, 200])
        XCTAssertNil(requests.last?.ifNoneMatch)
        XCTAssertEqual(cache.memoryUsage, 0)
    }

    func testNoCacheIsValidatedOnEveryUse() throws {
        // Given a file old enough to be heuristically fresh, but served with no-cache
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write("checked", in: "no-cache", directory: origin.directory, modified: Self.tenDaysAgo)
        let (queue, _) = queue(baseURL: origin.url)
        XCTAssertEqual(try get(path, on: queue).source, .network)
        // Then the next use asks nginx, conditionally, and its 304 answers
        XCTAssertEqual(try get(path, on: queue).source, .cache(.revalidated))
        let requests = origin.log.waitForRequests(to: path, count: 2)
        XCTAssertEqual(requests.map(\.status), [200, 304])
        XCTAssertNotNil(requests.last?.ifNoneMatch)
    }

    func testMustRevalidateIsNeverServedStale() throws {
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write("strict", in: "must-revalidate", directory: origin.directory)
        let (queue, _) = queue(baseURL: origin.url)
        _ = try get(path, on: queue)
        clock.advance(120)
        XCTAssertEqual(try get(path, on: queue).source, .cache(.revalidated))
        XCTAssertEqual(origin.log.waitForRequests(to: path, count: 2).map(\.status), [200, 304])
    }

    func testStaleWhileRevalidateAnswersAtOnceAndNginxIsAskedBehind() throws {
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write("swr", in: "swr", directory: origin.directory)
        let (queue, cache) = queue(baseURL: origin.url)
        // (The first fetch is two minutes in the cache's past, so that its clock agrees with nginx's
        // Date when nginx confirms the response now.)
        clock.advance(-120)
        _ = try get(path, on: queue)
        let key = try XCTUnwrap(CacheKey.make(for: origin.url.appendingPathComponent(String(path.dropFirst()))))
        let firstStored = try XCTUnwrap(cache.memory?.responses(for: key).first?.responseTime)
        clock.advance(120)
        // When the stale response is asked for within its stale-while-revalidate window
        XCTAssertEqual(try get(path, on: queue).source, .cache(.stale))
        // Then nginx is asked behind the answer, and confirms it
        let requests = origin.log.waitForRequests(to: path, count: 2)
        XCTAssertEqual(requests.map(\.status), [200, 304])
        XCTAssertNotNil(requests.last?.ifNoneMatch)
        // And once that is stored, the response is fresh again
        XCTAssertTrue(eventually(timeout: 60) { cache.memory?.responses(for: key).first?.responseTime != firstStored },
                      "the revalidated response was stored")
        XCTAssertEqual(try get(path, on: queue).source, .cache(.fresh))
        XCTAssertEqual(origin.log.requests(to: path).count, 2)
    }

    func testStaleIfErrorServesTheStoredFileWhenNginxFails() throws {
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write("kept", in: "sie", directory: origin.directory)
        let (queue, _) = queue(baseURL: origin.url)
        _ = try get(path, on: queue)
        clock.advance(120)
        // When nginx answers 503 to the validation
        let answer = try get(path, on: queue, headers: ["X-Courier-Fail": "1"])
        // Then the stored file answers, marked stale
        XCTAssertEqual(answer.text, "kept")
        XCTAssertEqual(answer.source, .cache(.stale))
        XCTAssertEqual(origin.log.waitForRequests(to: path, count: 2).map(\.status), [200, 503])
    }

    func testVaryKeepsLanguagesApart() throws {
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write("bonjour", in: "vary", directory: origin.directory)
        let (queue, _) = queue(baseURL: origin.url)
        XCTAssertEqual(try get(path, on: queue, headers: ["Accept-Language": "fr"]).source, .network)
        XCTAssertEqual(try get(path, on: queue, headers: ["Accept-Language": "en"]).source, .network)
        XCTAssertEqual(try get(path, on: queue, headers: ["Accept-Language": "fr"]).source, .cache(.fresh))
        XCTAssertEqual(origin.log.waitForRequests(to: path, count: 2).count, 2)
    }

    func testOnlyCachedNeverReachesNginx() throws {
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write("offline", in: "plain", directory: origin.directory)
        let (queue, _) = queue(baseURL: origin.url)
        let (_, missing) = fetch(CachedRequest(path: path, cachePolicy: .onlyCached), on: queue)
        guard case .failure(.notCached)? = missing else { return XCTFail("got \(String(describing: missing))") }
        XCTAssertEqual(try get(path, on: queue).source, .network)
        clock.advance(30 * 86_400)
        XCTAssertEqual(try get(path, on: queue, policy: .onlyCached).source, .cache(.stale))
        XCTAssertEqual(try get(path, on: queue, policy: .returnCachedElseLoad).source, .cache(.stale))
        XCTAssertEqual(origin.log.waitForRequests(to: path, count: 1).count, 1)
    }

    func testLoadShowsTheStoredFileThenNginxsConfirmation() throws {
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write("screen", in: "plain", directory: origin.directory, modified: Self.tenDaysAgo)
        let (queue, _) = queue(baseURL: origin.url)
        _ = try get(path, on: queue)
        clock.advance(2 * 86_400)
        let updates = Recorder<ResponseUpdate<Text>>()
        let done = expectation(description: "two updates")
        done.expectedFulfillmentCount = 2
        queue.load(CachedRequest(path: path)) { updates.append($0); done.fulfill() }
        wait(for: [done], timeout: 60)
        XCTAssertEqual(updates.all.map(\.value?.text), ["screen", "screen"])
        XCTAssertEqual(updates.all.map(\.source), [.cache(.stale), .cache(.revalidated)])
        XCTAssertEqual(origin.log.waitForRequests(to: path, count: 2).map(\.status), [200, 304])
    }

    func testADiskCacheAnswersANewQueueWithoutReachingNginx() throws {
        // Given a cache in a folder, filled by one queue
        let origin = try CacheOrigin.nginx()
        let path = try CacheOrigin.write(#"{"kept":"on disk"}"#, in: "expires", directory: origin.directory)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = RequestQueueConfiguration.default
        configuration.transport = HTTPBin.transport
        configuration.callbackQueue = TestQueues.callbacks
        configuration.cache = try ResponseCache(directory: folder)
        let first = RequestQueue(configuration: configuration, delegate: metrics, baseURL: origin.url)
        XCTAssertEqual(try get(path, on: first).source, .network)
        configuration.cache?.flush()
        // When a queue with nothing in memory asks for it (as after a relaunch)
        configuration.cache = try ResponseCache(memoryCapacity: 0, directory: folder)
        let second = RequestQueue(configuration: configuration, delegate: metrics, baseURL: origin.url)
        let again = try get(path, on: second)
        // Then the file answered, fresh, and nginx saw one request
        XCTAssertEqual(again.text, #"{"kept":"on disk"}"#)
        XCTAssertEqual(again.source, .cache(.fresh))
        XCTAssertEqual(origin.log.waitForRequests(to: path, count: 1).count, 1)
        XCTAssertGreaterThan(configuration.cache?.diskUsage ?? 0, 0)
    }

    // MARK: - httpbin

    func testHttpbinCacheNIsFreshForNSeconds() throws {
        let log = try CacheOrigin.httpbinLog()
        let (queue, _) = queue(baseURL: try HTTPBin.url())
        let path = "/cache/60"
        let before = log.requests(to: path).count
        XCTAssertEqual(try get(path, on: queue).source, .network)
        clock.advance(59)
        XCTAssertEqual(try get(path, on: queue).source, .cache(.fresh))
        XCTAssertEqual(log.waitForRequests(to: path, count: before + 1).count, before + 1)
    }

    func testHttpbinCacheAnswersTheValidationWithA304() throws {
        // Given httpbin's /cache: Last-Modified now and an ETag, so stale at once; a 304 to any conditional request
        let log = try CacheOrigin.httpbinLog()
        let (queue, _) = queue(baseURL: try HTTPBin.url())
        let path = "/cache"
        let before = log.requests(to: path).count
        XCTAssertEqual(try get(path, on: queue).source, .network)
        clock.advance(1)
        XCTAssertEqual(try get(path, on: queue).source, .cache(.revalidated))
        let requests = log.waitForRequests(to: path, count: before + 2).suffix(2)
        XCTAssertEqual(requests.map(\.status), [200, 304])
        XCTAssertNotNil(requests.last?.ifNoneMatch)
        XCTAssertNotNil(requests.last?.ifModifiedSince)
    }

    func testHttpbinETagIsSentBackAndConfirmed() throws {
        let log = try CacheOrigin.httpbinLog()
        let (queue, _) = queue(baseURL: try HTTPBin.url())
        let tag = UUID().uuidString
        let path = "/etag/\(tag)"
        XCTAssertEqual(try get(path, on: queue).source, .network)
        XCTAssertEqual(try get(path, on: queue).source, .cache(.revalidated))
        let requests = log.waitForRequests(to: path, count: 2)
        XCTAssertEqual(requests.map(\.status), [200, 304])
        XCTAssertEqual(requests.last?.ifNoneMatch?.contains(tag), true)
    }

    func testAPOSTInvalidatesWhatHttpbinResponseHeadersStored() throws {
        let log = try CacheOrigin.httpbinLog()
        let (queue, _) = queue(baseURL: try HTTPBin.url())
        let path = "/response-headers?Cache-Control=max-age%3D600&n=\(UUID().uuidString)"
        let logged = "/response-headers?" + path.split(separator: "?")[1]
        XCTAssertEqual(try get(path, on: queue).source, .network)
        XCTAssertEqual(try get(path, on: queue).source, .cache(.fresh))
        // When a POST to the same URL succeeds
        let (_, posted) = fetch(CachedRequest(path: path, method: .post), on: queue)
        XCTAssertNotNil(try posted?.get())
        // Then the next GET goes to httpbin again
        XCTAssertEqual(try get(path, on: queue).source, .network)
        XCTAssertEqual(log.waitForRequests(to: logged, count: 3).map(\.method), ["GET", "POST", "GET"])
    }

    // MARK: - Shared requests in flight

    func testAHundredIdenticalGETsReachTheServerOnceAndRandomCancelsSpareTheSurvivors() throws {
        // Given a server that holds /held/KEY until released, counting arrivals
        let server = try HTTPBin.sseServer()
        let key = UUID().uuidString
        let (queue, _) = queue(baseURL: server)
        let path = "/held/\(key)"
        // When 100 identical GETs are added at once, and 30 of them (the first among them) cancelled
        let ids = (0..<100).map { _ in queue.add(CachedRequest(path: path)) }
        _ = eventually(timeout: 60) { (queue.transport as? SharingTransport)?.sharing.participants == 100 }
        XCTAssertEqual((queue.transport as? SharingTransport)?.sharing.participants, 100)
        var generator = SeededGenerator(seed: 2026)
        let cancelled = Set([ids[0]] + ids.dropFirst().shuffled(using: &generator).prefix(29))
        for id in cancelled { queue.cancel(id) }
        // (The one transfer is on its way to the server, which counts it when it arrives: the
        // count is read, over another connection, once it has, and then it must be exactly one.)
        XCTAssertTrue(eventually(timeout: 60) { ((try? HTTPBin.arrivals(key, at: server)) ?? 0) >= 1 }, "the transfer reached the server")
        XCTAssertEqual(try HTTPBin.arrivals(key, at: server), 1)
        _ = try Data(contentsOf: server.appendingPathComponent("release/\(key)"))
        // Then the server was reached once, and each of the 70 survivors has its answer
        for id in ids {
            let result = try XCTUnwrap(self.result(of: id, on: queue, as: Text.self, timeout: 60))
            if cancelled.contains(id) {
                guard case .failure(.cancelled) = result else { return XCTFail("\(id): \(result)") }
            } else {
                let text = try result.get().text
                XCTAssertTrue(text.contains("\"arrivals\":1"), "\(id): \(text)")
            }
        }
        XCTAssertEqual(try HTTPBin.arrivals(key, at: server), 1)
    }
}
