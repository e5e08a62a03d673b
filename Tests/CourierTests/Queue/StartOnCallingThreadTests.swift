import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Requests added from an observer on a background callback queue start on that thread when the
/// observer returns (no thread hop); the exceptions that keep this from ever hanging or blocking.
final class StartOnCallingThreadTests: XCTestCase {
    /// Records what the queue's delegate sees, and can hold `willSend` until a signal.
    private final class Events: RequestQueueDelegate, Sendable {
        let log = Recorder<String>()
        let holdWillSend: DispatchSemaphore?
        let sent = DispatchSemaphore(value: 0)

        init(holdWillSend: DispatchSemaphore? = nil) {
            self.holdWillSend = holdWillSend
        }

        func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {
            let path = request.url!.path
            if path != "/v1/first", let holdWillSend {
                let freed = holdWillSend.wait(timeout: .now() + 5) == .success
                log.append(freed ? "willSend \(path) after the callback queue was free"
                                 : "willSend \(path) timed out waiting for the callback queue")
            } else {
                log.append("willSend \(path)")
            }
        }

        func requestQueue(_ queue: RequestQueue, didSend request: URLRequest) {
            sent.signal()
        }
    }

    /// - Parameter patient: Give observers 10 s instead of 10 ms before the watchdog takes a
    ///   deferred start over, for tests that check what happens within one observer block (a
    ///   thread preempted for 10 ms on a loaded machine would otherwise change the order).
    private func queue(transport: StubTransport, delegate: Events, callbacks: DispatchQueue,
                       maxConcurrent: Int = 4, patient: Bool = false) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = callbacks
        configuration.maxConcurrentRequests = maxConcurrent
        return RequestQueue(configuration: configuration, delegate: delegate,
                            baseURL: URL(string: "https://api.example.com/v1"), transport: transport,
                            deferredStartPatience: patient ? 10_000_000_000 : 10_000_000)
    }

    func testARequestAddedFromAnObserverStartsOnItsThreadOnceTheObserverReturns() {
        // Given a queue with a private serial callback queue
        let callbacks = DispatchQueue(label: "StartOnCallingThreadTests.callbacks")
        let events = Events()
        let transport = StubTransport { $0.url?.path == "/v1/first" ? .hold : .status(200) }
        let queue = queue(transport: transport, delegate: events, callbacks: callbacks, patient: true)
        let done = expectation(description: "second request done")

        // When an observer adds the next request, and queues a marker behind its own block
        let first = queue.add(PathRequest<EmptyResponse>("/first"))
        queue.addObserver(for: first) { (_: Result<EmptyResponse, RequestError>) in
            let second = queue.add(PathRequest<EmptyResponse>("/second"))
            queue.addObserver(for: second) { (result: Result<EmptyResponse, RequestError>) in
                if case .success = result { done.fulfill() }
            }
            callbacks.async { events.log.append("callback queue free") }
            events.log.append("observer returns")
        }
        // (the first is answered only once the start loop that sent it has ended its run, so
        // the observer's add is the one to claim the next run)
        XCTAssertTrue(transport.waitForStarts(1))
        queue.startQueue.sync {}
        transport.releaseOldest()
        wait(for: [done], timeout: 10)

        // Then the second request was prepared after the observer returned and before the
        // callback queue ran anything else: on the same block, without a hop
        XCTAssertEqual(events.log.all, ["willSend /v1/first", "observer returns", "willSend /v1/second",
                                        "callback queue free"])
    }

    func testAnObserverThatWaitsForTheRequestItAddedDoesNotHang() {
        // Given an observer that adds a request and then blocks until that request is sent
        let callbacks = DispatchQueue(label: "StartOnCallingThreadTests.callbacks")
        let events = Events()
        let transport = StubTransport { _ in .status(200) }
        let queue = queue(transport: transport, delegate: events, callbacks: callbacks)
        let observed = expectation(description: "observer finished")
        let first = queue.add(PathRequest<EmptyResponse>("/first"))
        XCTAssertEqual(events.sent.wait(timeout: .now() + 5), .success)

        // When it waits inside the observer, so the block it would start from never ends first
        queue.addObserver(for: first) { (_: Result<EmptyResponse, RequestError>) in
            queue.add(PathRequest<EmptyResponse>("/second"))
            let started = events.sent.wait(timeout: .now() + 5) == .success
            events.log.append(started ? "second sent while the observer waited" : "second never sent")
            observed.fulfill()
        }
        wait(for: [observed], timeout: 10)

        // Then the watchdog started it from the start queue within its patience
        XCTAssertEqual(events.log.all.last, "second sent while the observer waited")
    }

    func testAMultipartRequestAddedFromAnObserverIsPreparedOnTheStartQueue() throws {
        // Given a delegate whose willSend for the multipart request waits until the callback
        // queue is free: it would time out if that request were prepared on the callback queue
        let callbacks = DispatchQueue(label: "StartOnCallingThreadTests.callbacks")
        let free = DispatchSemaphore(value: 0)
        let events = Events(holdWillSend: free)
        let transport = StubTransport { _ in .status(200) }
        let queue = queue(transport: transport, delegate: events, callbacks: callbacks)
        let done = expectation(description: "upload done")

        // When an observer adds a multipart upload
        let first = queue.add(PathRequest<EmptyResponse>("/first"))
        queue.addObserver(for: first) { (_: Result<EmptyResponse, RequestError>) in
            let form = MultipartFormData()
            form.append(value: "Holiday", withName: "title")
            let upload = queue.add(BodyRequest<MultipartFormData, EmptyResponse>(parameters: form, path: "/upload"))
            queue.addObserver(for: upload) { (result: Result<EmptyResponse, RequestError>) in
                if case .success = result { done.fulfill() }
            }
            callbacks.async { free.signal() }
        }
        wait(for: [done], timeout: 10)

        // Then it was prepared elsewhere, once the callback queue had moved on
        XCTAssertEqual(events.log.all, ["willSend /v1/first", "willSend /v1/upload after the callback queue was free"])
    }

    func testARequestAddedAndCancelledByTheSameObserverNeverStarts() {
        // Given an observer that adds a request and cancels it before returning
        let callbacks = DispatchQueue(label: "StartOnCallingThreadTests.callbacks")
        let events = Events()
        let transport = StubTransport { _ in .status(200) }
        let queue = queue(transport: transport, delegate: events, callbacks: callbacks, patient: true)
        let cancelled = expectation(description: "second cancelled")
        let third = expectation(description: "third done")

        // When its start is left to the end of the block, after the cancel
        let first = queue.add(PathRequest<EmptyResponse>("/first"))
        queue.addObserver(for: first) { (_: Result<EmptyResponse, RequestError>) in
            let second = queue.add(PathRequest<EmptyResponse>("/second"))
            queue.cancel(second)
            queue.addObserver(for: second) { (result: Result<EmptyResponse, RequestError>) in
                if case .failure(.cancelled) = result { cancelled.fulfill() }
            }
            let next = queue.add(PathRequest<EmptyResponse>("/third"))
            queue.addObserver(for: next) { (result: Result<EmptyResponse, RequestError>) in
                if case .success = result { third.fulfill() }
            }
        }
        wait(for: [cancelled, third], timeout: 5)

        // Then the cancelled one never reached the transport; the one after it did
        XCTAssertEqual(transport.started.map { $0.url!.path }, ["/v1/first", "/v1/third"])
        XCTAssertEqual(events.log.all, ["willSend /v1/first", "willSend /v1/third"])
    }

    /// Holds the start loop's run in `willSend` of `/v1/zero` until the test lets it go, and says
    /// when it got there.
    private final class HeldRun: RequestQueueDelegate, Sendable {
        let log = Recorder<String>()
        let reachedZero = DispatchSemaphore(value: 0)
        let releaseZero = DispatchSemaphore(value: 0)

        func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {
            let path = request.url!.path
            log.append("willSend \(path)")
            guard path == "/v1/zero" else { return }
            reachedZero.signal()
            if releaseZero.wait(timeout: .now() + 5) == .timedOut { log.append("zero never released") }
        }
    }

    func testARequestAddedFromAnObserverWhileAStartRunIsUnderWayWaitsForTheObserverToReturn() {
        // Given a run of the start loop that is still under way when an observer runs: it is held
        // in willSend of /zero until the observer has added its request. (This interleaving once
        // sent a request that its observer then cancelled, and let it succeed first.)
        let callbacks = DispatchQueue(label: "StartOnCallingThreadTests.callbacks")
        let delegate = HeldRun()
        let transport = StubTransport { _ in .status(200) }
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = callbacks
        let queue = RequestQueue(configuration: configuration, delegate: delegate,
                                 baseURL: URL(string: "https://api.example.com/v1"), transport: transport,
                                 deferredStartPatience: 10_000_000_000)
        let cancelled = expectation(description: "second cancelled")
        let third = expectation(description: "third done")

        // When the observer adds a request, lets the run go on and waits until it has ended, and
        // then cancels that request before it returns
        let first = queue.add(PathRequest<EmptyResponse>("/first"))
        queue.addObserver(for: first) { (_: Result<EmptyResponse, RequestError>) in
            guard delegate.reachedZero.wait(timeout: .now() + 5) == .success else {
                return delegate.log.append("the run never reached /zero")
            }
            let second = queue.add(PathRequest<EmptyResponse>("/second"))
            delegate.releaseZero.signal()
            queue.startQueue.sync {}
            queue.cancel(second)
            queue.addObserver(for: second) { (result: Result<EmptyResponse, RequestError>) in
                delegate.log.append("second: \(result.isSuccess ? "succeeded" : "failed")")
                if case .failure(.cancelled) = result { cancelled.fulfill() }
            }
            let next = queue.add(PathRequest<EmptyResponse>("/third"))
            queue.addObserver(for: next) { (result: Result<EmptyResponse, RequestError>) in
                if case .success = result { third.fulfill() }
            }
        }
        queue.add(PathRequest<EmptyResponse>("/zero"))
        wait(for: [cancelled, third], timeout: 5)

        // Then the run that was under way did not take the observer's request: it was never sent
        XCTAssertEqual(transport.started.map { $0.url!.path }, ["/v1/first", "/v1/zero", "/v1/third"])
        XCTAssertEqual(delegate.log.all, ["willSend /v1/first", "willSend /v1/zero", "willSend /v1/third", "second: failed"])
    }

    func testChainsOfObserversAddingRequestsEndExactlyOnceEach() {
        // Given 8 chains of requests, each added from the previous one's observer, on two
        // callback queues, 3 slots, and observers that sometimes outlast the watchdog's patience
        let callbackQueues = [DispatchQueue(label: "StartOnCallingThreadTests.a"),
                              DispatchQueue(label: "StartOnCallingThreadTests.b")]
        let transport = StubTransport { request in
            request.url!.path.hasSuffix("/7") ? .failure(.timedOut) : .status(200)
        }
        var configuration = RequestQueueConfiguration.default
        configuration.maxConcurrentRequests = 3
        let results = Recorder<String>()
        let chains = 8, length = 60
        let finished = expectation(description: "all chains")
        finished.expectedFulfillmentCount = chains
        let queues = callbackQueues.map { callbacks in
            var configuration = configuration
            configuration.callbackQueue = callbacks
            return RequestQueue(configuration: configuration, delegate: nil,
                                baseURL: URL(string: "https://api.example.com/v1"), transport: transport)
        }

        @Sendable func step(chain: Int, link: Int) {
            // Alternate queues, so an observer of one queue adds to the other as well.
            let queue = queues[(chain + link) % 2]
            let id = queue.add(PathRequest<EmptyResponse>("/\(chain)/\(link % 10)"))
            queue.addObserver(for: id) { (result: Result<EmptyResponse, RequestError>) in
                results.append("\(chain)/\(link) \(result.isSuccess ? "ok" : "failed")")
                if link + 1 == length { return finished.fulfill() }
                step(chain: chain, link: link + 1)
                if link % 25 == 24 { Thread.sleep(forTimeInterval: 0.015) }
            }
        }

        // When all chains run at once
        for chain in 0..<chains { step(chain: chain, link: 0) }
        wait(for: [finished], timeout: 30)

        // Then every request ended once, with the result its path called for
        let all = results.all
        XCTAssertEqual(all.count, chains * length)
        XCTAssertEqual(Set(all).count, all.count, "a request ended twice")
        XCTAssertEqual(all.filter { $0.hasSuffix("failed") }.count, chains * (length / 10))
        XCTAssertEqual(queues.map { $0.bookkeeping.active }, [0, 0])
    }
}

private extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
