import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The queue and the network (``NetworkStatus``, ``OfflinePolicy``, pause and resume), against
/// a stub transport whose origins go down and come back on the test's word.
final class NetworkWaitTests: XCTestCase {
    /// Which origins are down, and every request the transport got with whether its origin was up.
    private final class Origins: Sendable {
        private let down = Locked<Set<String>>([])
        let log = Recorder<(path: String, up: Bool)>()

        func setDown(_ host: String, _ isDown: Bool) {
            down.withLock { if isDown { $0.insert(host) } else { $0.remove(host) } }
        }

        func reply(_ request: URLRequest) -> StubTransport.Reply {
            let host = request.url?.host ?? ""
            let isDown = down.withLock { $0.contains(host) }
            log.append((request.url?.path ?? "", !isDown))
            return isDown ? .failure(.cannotConnectToHost) : .json(#"{"message":"\#(request.url?.path ?? "")"}"#)
        }

        /// The paths of the requests that reached an origin that was up, in order.
        var reached: [String] { log.all.filter(\.up).map(\.path) }
    }

    private func queue(_ transport: StubTransport, whileOffline: OfflinePolicy = .wait, cache: ResponseCache? = nil) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.whileOffline = whileOffline
        configuration.cache = cache
        return RequestQueue(configuration: configuration, delegate: nil, baseURL: nil, transport: transport,
                            connectivity: Connectivity(initialDelay: 0.02, maximumDelay: 0.1))
    }

    /// The API's feed as a resource that changes on `context`, retrying after 20 ms (up to 50), and
    /// the task watching it (cancel it to stop watching).
    private func watchedFeed(on queue: RequestQueue, context: DispatchQueue) -> (Resource<PathRequest<Greeting>>, Task<Void, Never>) {
        let feed = queue.resource(PathRequest<Greeting>("https://api.example.com/feed"),
                                  options: ResourceOptions(retry: .init(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(50)),
                                                           updatesOn: .queue(context)))
        return (feed, Task { await feed.watch() })
    }

    /// A queue whose requests wait, and the origins of its transport, the API's down.
    private func apiDown() -> (Origins, RequestQueue) {
        let origins = Origins()
        origins.setDown("api.example.com", true)
        return (origins, queue(StubTransport(reply: origins.reply)))
    }

    /// Attempts the queue holds for the network or the app's resume (not those still in line to start).
    private func held(_ queue: RequestQueue) -> Int {
        queue.state.withLock { $0.heldForNetwork }
    }

    /// Collects the statuses a queue reports, as descriptions.
    private func watch(_ queue: RequestQueue) -> (Recorder<String>, Task<Void, Never>) {
        let seen = Recorder<String>()
        let started = expectation(description: "first status")
        let updates = queue.networkStatusUpdates
        let task = Task {
            var first = true
            for await status in updates {
                seen.append(status.description)
                if first { started.fulfill(); first = false }
            }
        }
        wait(for: [started], timeout: 10)
        return (seen, task)
    }

    func testWaitingRequestsHoldWhileTheirOriginIsDownAndGoOldestFirstWhenAProbeGetsThrough() throws {
        // Given an API that is down, and a queue whose requests wait
        let origins = Origins()
        origins.setDown("api.example.com", true)
        let transport = StubTransport(reply: origins.reply)
        let queue = queue(transport)
        let (statuses, watching) = watch(queue)
        defer { watching.cancel() }

        // When three requests go to the API and one to the images' origin
        let ids = (1...3).map { queue.add(PathRequest<Greeting>("https://api.example.com/\($0)")) }
        let image = try XCTUnwrap(result(of: queue.add(PathRequest<Greeting>("https://images.example.com/a")), on: queue, as: Greeting.self))

        // Then the image came while the API's three wait, none failed
        XCTAssertEqual(try image.get(), Greeting(message: "/a"))
        XCTAssertTrue(eventually { self.held(queue) == 3 }, "the API's requests are not all held: \(held(queue))")
        XCTAssertEqual(Array(queue.networkStatus.unreachableOrigins.keys), ["https://api.example.com:443"])

        // When the API comes back
        origins.setDown("api.example.com", false)
        let results = ids.map { self.result(of: $0, on: queue, as: Greeting.self) }

        // Then a probe (the oldest) got through and the others followed in order, each once
        XCTAssertEqual(results.map { try? $0?.get() }, ["/1", "/2", "/3"].map { Greeting(message: $0) })
        XCTAssertEqual(origins.reached, ["/a", "/1", "/2", "/3"])
        XCTAssertEqual(held(queue), 0)
        XCTAssertTrue(eventually { statuses.all.last == "online" })
        XCTAssertEqual(statuses.all, ["online", "online, https://api.example.com:443 unreachable", "online"])
    }

    func testByDefaultARequestFailsAsTheNetworkFailsAndTheQueueForgetsWhatNobodyWaitsFor() throws {
        // Given an API that is down, and a queue with the default policy
        let origins = Origins()
        origins.setDown("api.example.com", true)
        let transport = StubTransport(reply: origins.reply)
        let queue = queue(transport, whileOffline: .fail)
        let (statuses, watching) = watch(queue)
        defer { watching.cancel() }

        // When a request goes to it
        let result = try XCTUnwrap(self.result(of: queue.add(PathRequest<Greeting>("https://api.example.com/1")), on: queue, as: Greeting.self))

        // Then it failed after one attempt, saying why; the origin was unreachable until its
        // probe came due with nothing waiting for it
        guard case .failure(.transportFailed(let error)) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(error.code, .cannotConnectToHost)
        XCTAssertEqual(transport.started.count, 1)
        XCTAssertTrue(eventually { statuses.all.count == 3 })
        XCTAssertEqual(statuses.all, ["online", "online, https://api.example.com:443 unreachable", "online"])
    }

    func testARequestThatWaitsCanChooseToFail() throws {
        // Given a queue whose requests wait, and an API that is down
        let (_, queue) = apiDown()

        // When a request that chooses to fail goes to it
        struct Impatient: Request {
            typealias ResponseType = Greeting
            var path: String { "https://api.example.com/now" }
            var whileOffline: OfflinePolicy? { .fail }
        }
        let result = try XCTUnwrap(self.result(of: queue.add(Impatient()), on: queue, as: Greeting.self))

        // Then it failed at once
        guard case .failure(.transportFailed(let error)) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(error.code, .cannotConnectToHost)
    }

    func testAWaitingRequestsTimeoutStillRuns() throws {
        // Given an API that is down for good
        let (_, queue) = apiDown()

        // When a request with a short timeout waits for it
        let result = try XCTUnwrap(self.result(of: queue.add(PathRequest<Greeting>("https://api.example.com/1", timeout: 0.3)),
                                               on: queue, as: Greeting.self))

        // Then it ended with its timeout, and nothing is left held
        guard case .failure(.timedOut) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(held(queue), 0)
    }

    func testPauseHoldsEveryRequestAndResumeSendsThemInOrder() throws {
        // Given a paused queue (its requests would fail rather than wait)
        let origins = Origins()
        let transport = StubTransport(reply: origins.reply)
        let queue = queue(transport, whileOffline: .fail)
        let (statuses, watching) = watch(queue)
        defer { watching.cancel() }
        queue.pause()
        queue.pause()

        // When three requests are added
        let ids = (1...3).map { queue.add(PathRequest<Greeting>("https://api.example.com/\($0)")) }

        // Then they are held, and none was sent
        XCTAssertTrue(eventually { self.held(queue) == 3 })
        XCTAssertEqual(transport.started.count, 0)
        XCTAssertFalse(queue.networkStatus.isOnline)

        // When the app resumes
        queue.resume()

        // Then they went in the order added, each with its result
        XCTAssertEqual(ids.map { try? self.result(of: $0, on: queue, as: Greeting.self)?.get() }, ["/1", "/2", "/3"].map { Greeting(message: $0) })
        XCTAssertEqual(origins.reached, ["/1", "/2", "/3"])
        XCTAssertTrue(eventually { statuses.all.count == 3 })
        XCTAssertEqual(statuses.all, ["online", "paused, online", "online"])
    }

    func testCancellingAHeldRequestEndsItAndTheOthersStillGo() throws {
        // Given two requests held for a down API
        let (origins, queue) = apiDown()
        let first = queue.add(PathRequest<Greeting>("https://api.example.com/1"))
        let second = queue.add(PathRequest<Greeting>("https://api.example.com/2"))
        XCTAssertTrue(eventually { self.held(queue) == 2 })

        // When the first is cancelled and the API comes back
        queue.cancel(first)
        let cancelled = result(of: first, on: queue, as: Greeting.self)
        origins.setDown("api.example.com", false)

        // Then the first ended cancelled, the second came, and only it reached the API
        guard case .failure(.cancelled) = cancelled else { return XCTFail("got \(String(describing: cancelled))") }
        XCTAssertEqual(try result(of: second, on: queue, as: Greeting.self)?.get(), Greeting(message: "/2"))
        XCTAssertEqual(origins.reached, ["/2"])
    }

    func testTheStreamEndsWithTheQueue() {
        // Given a watcher of a queue's status
        var queue: RequestQueue? = self.queue(StubTransport())
        let ended = expectation(description: "stream ended")
        let updates = queue!.networkStatusUpdates
        let task = Task {
            for await _ in updates {}
            ended.fulfill()
        }
        defer { task.cancel() }

        // When the queue goes
        queue = nil

        // Then the stream ends
        wait(for: [ended], timeout: 10)
    }

    func testAWatchedResourceThatFailedWaitsForItsOriginAndLoadsWhenItComesBack() throws {
        // Given an API that is down, and a resource of it watched, retrying after 20 ms
        let origins = Origins()
        origins.setDown("api.example.com", true)
        let queue = queue(StubTransport(reply: origins.reply), whileOffline: .fail)
        let context = DispatchQueue(label: "NetworkWaitTests.resource")
        let (feed, watching) = watchedFeed(on: queue, context: context)
        defer { watching.cancel() }

        // Then its first load failed with the reason, and its retry waits for the API, the error kept
        assertRetryWaitsForItsOrigin(feed, on: context)

        // When the API comes back
        origins.setDown("api.example.com", false)

        // Then the waiting load got through: the value is there, the error gone, and it reached the API once
        XCTAssertTrue(eventually { context.sync { feed.value != nil && !feed.isLoading } })
        XCTAssertEqual(context.sync { feed.value }, Greeting(message: "/feed"))
        XCTAssertNil(context.sync { feed.error })
        XCTAssertEqual(origins.reached, ["/feed"])
    }

    func testAStoredValueAnsweringForADownOriginShowsTheFailureAndTheResourceLoadsWhenTheOriginComesBack() throws {
        // Given an API whose answers the cache may serve stale when it cannot be reached (`stale-if-error`),
        // numbered so that each answer from the API can be told apart
        let down = Locked(false)
        let answers = Locked(0)
        let transport = StubTransport(reply: { _ in
            if down.withLock({ $0 }) { return .failure(.cannotConnectToHost) }
            let number = answers.withLock { $0 += 1; return $0 }
            return .status(200, headers: ["Cache-Control": "max-age=0, stale-if-error=600", "Content-Type": "application/json"],
                           body: Data(#"{"message":"answer \#(number)"}"#.utf8))
        })
        let queue = queue(transport, whileOffline: .fail, cache: ResponseCache(memoryCapacity: 1 << 20))
        // And a resource of it watched, retrying after 20 ms, that has its first answer
        let context = DispatchQueue(label: "NetworkWaitTests.staleResource")
        let (feed, watching) = watchedFeed(on: queue, context: context)
        defer { watching.cancel() }
        XCTAssertTrue(eventually { context.sync { feed.value != nil && !feed.isLoading } })
        XCTAssertEqual(context.sync { feed.value }, Greeting(message: "answer 1"))

        // When the API goes down and the resource loads again
        down.withLock { $0 = true }
        context.sync { feed.load() }

        // Then the stored answer shows, stale, with the failure beside it, and the queue knows the API is gone
        XCTAssertTrue(eventually { context.sync { feed.error != nil } })
        guard case .transportFailed(let error)? = context.sync(execute: { feed.error }) else { return XCTFail("no transport error") }
        XCTAssertEqual(error.code, .cannotConnectToHost)
        XCTAssertEqual(context.sync { feed.value }, Greeting(message: "answer 1"))
        XCTAssertEqual(context.sync { feed.source }, .cache(.stale))
        XCTAssertTrue(eventually { !queue.networkStatus.unreachableOrigins.isEmpty })

        // When the API comes back
        down.withLock { $0 = false }

        // Then the resource's retry reached it: a new answer, the error gone, the API known to be there
        XCTAssertTrue(eventually { context.sync { feed.error == nil && feed.source == .network } })
        XCTAssertEqual(context.sync { feed.value }, Greeting(message: "answer 2"))
        XCTAssertTrue(eventually { queue.networkStatus.unreachableOrigins.isEmpty })
        XCTAssertEqual(answers.withLock { $0 }, 2)
    }
}

extension XCTestCase {
    /// Checks that a watched resource's load failed because its origin refused the connection,
    /// and that its retry is waiting for the origin with that error still shown.
    func assertRetryWaitsForItsOrigin<R: Request>(_ resource: Resource<R>, on context: DispatchQueue,
                                                  file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(eventually { context.sync { resource.error != nil && resource.isLoading } },
                      "no waiting retry: \(context.sync { (resource.error, resource.isLoading) })", file: file, line: line)
        guard case .transportFailed(let error)? = context.sync(execute: { resource.error }) else {
            return XCTFail("no transport error", file: file, line: line)
        }
        XCTAssertEqual(error.code, .cannotConnectToHost, file: file, line: line)
    }
}
