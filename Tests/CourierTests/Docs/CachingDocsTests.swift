// Mirrors the article "Caching, Shared Requests and Offline Use" (Courier.docc/CachingAndOfflineUse.md).
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class CachingDocsTests: XCTestCase {
    struct Profile: Response, Decodable, Equatable { let id: Int; let name: String }

    struct ProfileRequest: Request {
        typealias ResponseType = Profile
        let userID: Int
        var path: String { "/users/\(userID)" }
        var method: HTTPMethod { .get }
    }

    struct Timeline: Response, Decodable { let posts: [String] }

    // Caching › Choosing per request (verbatim)
    struct TimelineRequest: Request {
        typealias ResponseType = Timeline
        var path: String { "/timeline" }
        var method: HTTPMethod { .get }
        var cachePolicy: CachePolicy { .returnCachedElseLoad }
    }

    // Caching › Where a response came from (verbatim but for the print)
    final class CacheLog: RequestQueueDelegate {
        let printed = Recorder<String>()
        func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics) {
            printed.append(metrics.source.map { "\($0)" } ?? "no response")   // "cache (fresh)"
        }
    }

    // Caching › Show cached data first, then fresh data (verbatim, with states recorded for the test)
    @MainActor final class ProfileViewModel {
        private(set) var profile: Profile?
        private(set) var isShowingSavedData = false
        private(set) var error: RequestError?
        private let queue: RequestQueue
        let states = Recorder<String>()

        init(queue: RequestQueue) { self.queue = queue }

        func appear() {
            queue.load(ProfileRequest(userID: 42), owner: self) { [weak self] update in
                // The queue calls back on its callback queue: the main queue by default.
                MainActor.assumeIsolated { self?.apply(update) }
            }
        }

        private func apply(_ update: ResponseUpdate<Profile>) {
            if let profile = update.value { self.profile = profile }
            isShowingSavedData = update.source == .cache(.stale) || update.cachedValueStands
            error = update.error
            states.append("\(profile?.name ?? "-") saved=\(isShowingSavedData) error=\(error != nil) final=\(update.isFinal)")
        }
    }

    // Caching › Overview: the second send is answered from memory.
    func testAFreshResponseIsAnsweredFromMemory() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/42", headers: ["Cache-Control": "max-age=60"], json: #"{"id": 42, "name": "Ada"}"#)
        let log = CacheLog()
        let queue = DocsSupport.queue(fixtures, delegate: log)
        let first = try await queue.send(ProfileRequest(userID: 42))    // from the network
        let again = try await queue.send(ProfileRequest(userID: 42))    // from memory
        XCTAssertEqual(first, again)
        XCTAssertEqual(fixtures.receivedRequests.count, 1)
        XCTAssertEqual(log.printed.all, ["network", "cache (fresh)"])
    }

    // Caching › Overview: a cache in a folder, kept across queues (and launches).
    func testADiskCacheKeepsResponsesForTheNextQueue() async throws {
        let folder = try DocsSupport.temporaryFolder("cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/42", headers: ["Cache-Control": "max-age=600"], json: #"{"id": 42, "name": "Ada"}"#)
        var configuration = RequestQueueConfiguration.default
        configuration.cache = try ResponseCache(directory: folder)
        configuration.transport = .fixtures(fixtures)
        configuration.callbackQueue = DocsSupport.callbacks
        _ = try await RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))
            .send(ProfileRequest(userID: 42))
        configuration.cache?.flush()
        // A new cache on the same folder, with nothing in memory: the response is on disk.
        configuration.cache = try ResponseCache(memoryCapacity: 0, directory: folder)
        let offline = try await RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))
            .send(ProfileRequest(userID: 42))
        XCTAssertEqual(offline.name, "Ada")
        XCTAssertEqual(fixtures.receivedRequests.count, 1)
    }

    // Caching › Choosing per request: returnCachedElseLoad serves old data without asking.
    func testReturnCachedElseLoadAndOnlyCached() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/timeline", json: #"{"posts": ["hello"]}"#)
        let queue = DocsSupport.queue(fixtures)
        do {
            _ = try await queue.send(OfflineTimeline())
            XCTFail("nothing was stored yet")
        } catch {
            guard case .notCached = error else { return XCTFail("\(error)") }
        }
        let loaded = try await queue.send(TimelineRequest())      // nothing stored: loaded
        let stored = try await queue.send(TimelineRequest())      // stored, though stale: not asked
        let offline = try await queue.send(OfflineTimeline())
        XCTAssertEqual([loaded.posts, stored.posts, offline.posts], [["hello"], ["hello"], ["hello"]])
        XCTAssertEqual(fixtures.receivedRequests.count, 1)
    }

    struct OfflineTimeline: Request {
        typealias ResponseType = Timeline
        var path: String { "/timeline" }
        var method: HTTPMethod { .get }
        var cachePolicy: CachePolicy { .onlyCached }
    }

    // Caching › Show cached data first: the view model shows the saved profile, then the fresh one.
    @MainActor
    func testTheViewModelShowsSavedDataFirstThenFreshData() throws {
        // Yesterday's server stored a profile that is stale at once (max-age=0); today's has a new name.
        let yesterday = FixtureTransport()
        yesterday.stub(.get, "/users/42", headers: ["Cache-Control": "max-age=0"], json: #"{"id": 42, "name": "Ada"}"#)
        let today = FixtureTransport()
        today.stub(.get, "/users/42", headers: ["Cache-Control": "max-age=0"], json: #"{"id": 42, "name": "Ada Lovelace"}"#)
        var configuration = RequestQueueConfiguration.default   // callbacks on the main queue, the default
        configuration.transport = .fixtures(yesterday)
        let before = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))
        // (Waiting runs the main queue, which delivers.)
        XCTAssertNotNil(try result(of: before.add(ProfileRequest(userID: 42)), on: before, as: Profile.self)?.get())
        configuration.transport = .fixtures(today)              // copies of a configuration share its cache
        let queue = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))

        let model = ProfileViewModel(queue: queue)
        model.appear()
        // (The updates come on the main queue, which only runs while this test spins it; the bound
        // only runs out when the second update never comes.)
        let deadline = DispatchTime.now() + 30
        while model.states.count < 2 && DispatchTime.now() < deadline { RunLoop.main.run(until: Date() + 0.01) }
        XCTAssertEqual(model.states.all, ["Ada saved=true error=false final=false",
                                          "Ada Lovelace saved=false error=false final=true"])
        XCTAssertEqual(model.profile?.name, "Ada Lovelace")
    }

    // Caching › Show cached data first: the async form (verbatim loop), saved data then fresh data.
    func testLoadFromAsyncCodeGivesTheSavedThenTheFreshProfile() async throws {
        let yesterday = FixtureTransport()
        yesterday.stub(.get, "/users/42", headers: ["Cache-Control": "max-age=0"], json: #"{"id": 42, "name": "Ada"}"#)
        let today = FixtureTransport()
        today.stub(.get, "/users/42", headers: ["Cache-Control": "max-age=0"], json: #"{"id": 42, "name": "Ada Lovelace"}"#)
        var configuration = RequestQueueConfiguration.default
        configuration.transport = .fixtures(yesterday)
        _ = try await RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))
            .send(ProfileRequest(userID: 42))
        configuration.transport = .fixtures(today)
        let queue = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))
        let printed = Recorder<String>()
        let print: @Sendable (Any...) -> Void = { printed.append($0.map { "\($0)" }.joined(separator: " ")) }

        try await bounded {
            for await update in queue.load(ProfileRequest(userID: 42)) {
                if let profile = update.value { print(profile.name, update.source == .cache(.stale) ? "(saved)" : "") }
            }
        }
        XCTAssertEqual(printed.all, ["Ada (saved)", "Ada Lovelace "])
    }

    // Caching › Shared requests in flight (verbatim): five adds, one transfer, five results.
    func testFiveIdenticalRequestsShareOneTransfer() throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/42", json: #"{"id": 42, "name": "Ada"}"#)
        fixtures.holdsAnswers = true
        let sends = SendCounter()
        let queue = DocsSupport.queue(fixtures, delegate: sends)
        var ids: [RequestID] = []
        for _ in 0..<5 { ids.append(queue.add(ProfileRequest(userID: 42))) }   // one transfer, five results
        // Every one of them has joined the transfer (each is "sent") before the answer comes.
        XCTAssertTrue(sends.waitForSends(5), "five sends")
        XCTAssertEqual(sends.count, 5)
        try fixtures.waitForHeldRequests(1)
        let results = Recorder<String>()
        let done = expectation(description: "five results")
        done.expectedFulfillmentCount = 5
        for id in ids {
            queue.addObserver(for: id) { (result: Result<Profile, RequestError>) in
                results.append((try? result.get().name) ?? "\(result)")
                done.fulfill()
            }
        }
        fixtures.holdsAnswers = false
        fixtures.releaseAll()
        wait(for: [done], timeout: 30)
        XCTAssertEqual(results.all, Array(repeating: "Ada", count: 5))
        XCTAssertEqual(fixtures.receivedRequests.count, 1)
    }
}

/// Counts the requests the queue handed over to be sent.
final class SendCounter: RequestQueueDelegate {
    private let sent = Recorder<String>()
    private let signal = DispatchSemaphore(value: 0)
    var count: Int { sent.count }
    func requestQueue(_ queue: RequestQueue, didSend request: URLRequest) {
        sent.append(request.url?.path ?? "")
        signal.signal()
    }
    /// Waits until `count` more requests were handed over (30 s at most: only a broken queue
    /// makes it wait that long); false on timeout.
    func waitForSends(_ count: Int) -> Bool {
        (0..<count).allSatisfy { _ in signal.wait(timeout: .now() + 30) == .success }
    }
}
