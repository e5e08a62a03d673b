// Mirrors the article "Concurrency and Cancellation" (Courier.docc/ConcurrencyAndCancellation.md).
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class ConcurrencyAndCancellationDocsTests: XCTestCase {
    // Scaffolding for the samples.
    typealias Profile = GettingStartedDocsTests.Profile
    typealias ProfileRequest = GettingStartedDocsTests.ProfileRequest
    struct Thumbnail: Response { init(body: ResponseData, head: ResponseHead) {} }
    struct ThumbnailRequest: Request {
        typealias ResponseType = Thumbnail
        let id: Int
        var path: String { "/thumbnails/\(id)" }
        var method: HTTPMethod { .get }
    }
    final class Screen: Sendable {}

    /// Fixtures for the samples; with `holding`, every answer waits until the test releases it.
    private func fixtures(holding: Bool = false) -> FixtureTransport {
        let fixtures = FixtureTransport()
        fixtures.holdsAnswers = holding
        fixtures.stub(.get, "/users/42", json: #"{"id": 42, "name": "Ada"}"#)
        fixtures.stub(.get, "/thumbnails/7", body: Data([1, 2, 3]))
        fixtures.stub(.get, "/thumbnails/8", body: Data([1, 2, 3]))
        fixtures.stub(.get, "/thumbnails/9", body: Data([1, 2, 3]))
        fixtures.stub(.get, "/thumbnails/6", body: Data([1, 2, 3]))
        return fixtures
    }

    private func result<R: Response>(of id: RequestID, on queue: RequestQueue, as type: R.Type) -> Result<R, RequestError>? {
        let log = Recorder<Result<R, RequestError>>()
        let done = expectation(description: "result of \(id)")
        queue.addObserver(for: id) { (result: Result<R, RequestError>) in log.append(result); done.fulfill() }
        wait(for: [done], timeout: 30)
        return log.all.first
    }

    /// Waits up to 30 s for `task` to end, and checks that it ended as cancelled.
    private func assertCancelled(_ task: Task<Profile, any Error>, line: UInt = #line) async {
        let outcome = Recorder<Result<Profile, any Error>>()
        let ended = expectation(description: "send returned")
        Task { outcome.append(await task.result); ended.fulfill() }
        await fulfillment(of: [ended], timeout: 30)
        guard case .failure(RequestError.cancelled)? = outcome.all.first else {
            return XCTFail("expected cancelled, got \(outcome.all)", line: line)
        }
    }

    // Concurrency and Cancellation › A concurrency limit + Priorities: with 2 slots taken, a
    // .high request starts before an earlier .low one, and each priority is first in first out.
    func testLimitAndPriorities() throws {
        let fixtures = fixtures(holding: true)   // no slot frees until the test says so
        var configuration = RequestQueueConfiguration.default
        configuration.maxConcurrentRequests = 2
        configuration.callbackQueue = DocsSupport.callbacks
        configuration.transport = .fixtures(fixtures)
        let queue = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))

        queue.add(ThumbnailRequest(id: 8))
        queue.add(ThumbnailRequest(id: 9))   // (an identical request would share the first one's transfer)
        try fixtures.waitForHeldRequests(2)   // both slots taken

        queue.add(ThumbnailRequest(id: 7), priority: .low)
        queue.add(ProfileRequest(userID: 42), priority: .high)   // starts before every waiting .normal and .low
        let last = queue.add(ThumbnailRequest(id: 6), priority: .low)
        XCTAssertEqual(fixtures.receivedRequests.count, 2, "the limit holds the others back")
        fixtures.holdsAnswers = false
        fixtures.releaseAll()   // both slots free; the waiting requests start by priority
        XCTAssertNotNil(result(of: last, on: queue, as: Thumbnail.self))
        XCTAssertEqual(fixtures.receivedRequests.map { $0.url!.path },
                       ["/v1/thumbnails/8", "/v1/thumbnails/9", "/v1/users/42", "/v1/thumbnails/7", "/v1/thumbnails/6"])
    }

    // Concurrency and Cancellation › Cancelling: every form, each request ends once as cancelled.
    func testCancellingOneAGroupOrAll() throws {
        let fixtures = fixtures(holding: true)   // nothing is answered: every request ends by a cancel
        let queue = DocsSupport.queue(fixtures)
        let screen = Screen()
        let id = queue.add(ProfileRequest(userID: 42))
        let thumbnail = queue.add(ThumbnailRequest(id: 7))
        let owned = queue.add(ProfileRequest(userID: 42), owner: screen)
        let other = queue.add(ProfileRequest(userID: 42))

        let outcomes = Recorder<String>()
        let done = expectation(description: "all cancelled")
        done.expectedFulfillmentCount = 4
        for (name, request) in [("one", id), ("owned", owned), ("other", other)] {
            queue.addObserver(for: request) { (result: Result<Profile, RequestError>) in
                if case .failure(.cancelled) = result { outcomes.append(name) }
                done.fulfill()
            }
        }
        queue.addObserver(for: thumbnail) { (result: Result<Thumbnail, RequestError>) in
            if case .failure(.cancelled) = result { outcomes.append("type") }
            done.fulfill()
        }

        queue.cancel(id)                          // one request
        queue.cancelAll(ofType: Thumbnail.self)   // every request whose response type is Thumbnail
        queue.cancelAll(ownedBy: screen)          // every request added with owner: screen
        XCTAssertFalse(queue.isFinished(other))
        queue.cancelAll()                         // everything, waiting or in flight
        wait(for: [done], timeout: 30)
        XCTAssertEqual(Set(outcomes.all), ["one", "type", "owned", "other"])
        XCTAssertEqual(outcomes.all.count, 4)
        queue.cancel(id)   // after the end: changes nothing
        withExtendedLifetime(screen) {}
    }

    // Concurrency and Cancellation › Cancelling: a waiting request never reaches the network;
    // the owner sample line.
    func testCancelledWaitingRequestIsNeverSent() throws {
        let fixtures = fixtures(holding: true)   // the one slot stays taken until the test frees it
        let queue = DocsSupport.queue(fixtures) { $0.maxConcurrentRequests = 1 }
        let screen = Screen()
        queue.add(ProfileRequest(userID: 42))
        try fixtures.waitForHeldRequests(1)
        let id = queue.add(ThumbnailRequest(id: 7), owner: screen)
        queue.cancelAll(ownedBy: screen)
        guard case .failure(.cancelled)? = result(of: id, on: queue, as: Thumbnail.self) else { return XCTFail() }
        fixtures.holdsAnswers = false
        fixtures.releaseAll()
        let next = queue.add(ThumbnailRequest(id: 8))
        XCTAssertNotNil(result(of: next, on: queue, as: Thumbnail.self))
        XCTAssertEqual(fixtures.receivedRequests.map { $0.url!.path }, ["/v1/users/42", "/v1/thumbnails/8"])
        withExtendedLifetime(screen) {}
    }

    // Concurrency and Cancellation › Cancelling a Task.
    // The answer is held and never released, so only the cancel can end the request; were the
    // cancel lost, the expectation would give up after 30 s.
    func testCancellingTheTaskCancelsTheRequest() async throws {
        let fixtures = fixtures(holding: true)
        let queue = DocsSupport.queue(fixtures)

        let task = Task {
            try await queue.send(ProfileRequest(userID: 42))
        }
        task.cancel()    // the request is cancelled; send throws RequestError.cancelled

        await assertCancelled(task)
        XCTAssertEqual(fixtures.heldRequests, [])
    }

    // Concurrency and Cancellation › Cancelling a Task, once the request is in flight.
    func testCancellingTheTaskOfARequestInFlight() async throws {
        let fixtures = fixtures(holding: true)
        let queue = DocsSupport.queue(fixtures)
        let task = Task {
            try await queue.send(ProfileRequest(userID: 42))
        }
        try await fixtures.waitForHeldRequests(1)   // in flight
        task.cancel()
        await assertCancelled(task)
        XCTAssertEqual(fixtures.heldRequests, [], "the cancelled request is no longer held")
        XCTAssertEqual(fixtures.receivedRequests.count, 1)
    }

    // Concurrency and Cancellation › Releasing a queue: observers hear .cancelled, delegates nothing.
    func testReleasedQueueCancelsWhatItHolds() throws {
        final class Told: RequestQueueDelegate {
            let log: Recorder<String>
            init(log: Recorder<String>) { self.log = log }
            func requestQueue(_ queue: RequestQueue, didFailWith request: URLRequest?, error: RequestError) { log.append("didFail") }
        }
        let delegateLog = Recorder<String>()
        var queue: RequestQueue? = DocsSupport.queue(fixtures(holding: true), delegate: Told(log: delegateLog))
        weak let released = queue
        let done = expectation(description: "cancelled")
        let id = queue!.add(ProfileRequest(userID: 42))
        queue!.addObserver(for: id) { (result: Result<Profile, RequestError>) in
            if case .failure(.cancelled) = result { done.fulfill() }
        }
        queue = nil
        wait(for: [done], timeout: 30)
        XCTAssertNil(released)
        XCTAssertEqual(delegateLog.all, [])
    }

    // Concurrency and Cancellation › Threads and Sendable: IDs are unique and increase.
    func testIDsIncrease() {
        let a = DocsSupport.queue(fixtures()), b = DocsSupport.queue(fixtures())
        let first = a.add(ProfileRequest(userID: 42))
        let second = b.add(ProfileRequest(userID: 42))
        XCTAssertLessThan(first, second)
        XCTAssertNotEqual(first, second)
        XCTAssertEqual(RequestQueueConfiguration.default.maxConcurrentRequests, 6)
    }
    // Concurrency and Cancellation › Which thread starts a request: an observer on a background
    // callback queue adds the next page, which starts on that thread once the observer returns.
    func testObserverAddsTheNextPage() {
        struct Page: Response, Decodable { let items: [Int]; let next: Int? }
        struct PageRequest: Request {
            typealias ResponseType = Page
            let page: Int
            var path: String { "/pages/\(page)" }
            var method: HTTPMethod { .get }
        }
        final class Starts: RequestQueueDelegate {
            let log = Recorder<String>()
            func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {
                log.append("\(request.url!.lastPathComponent) on the main thread: \(Thread.isMainThread)")
            }
        }
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/pages/1", json: #"{"items": [1, 2], "next": 2}"#)
        fixtures.stub(.get, "/pages/2", json: #"{"items": [3], "next": null}"#)
        let starts = Starts()
        let lastPage = expectation(description: "page 2")

        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = DispatchQueue(label: "results")   // a background callback queue
        configuration.transport = .fixtures(fixtures)
        let queue = RequestQueue(configuration: configuration, delegate: starts,
                                 baseURL: URL(string: "https://api.example.com/v1"))
        let first = queue.add(PageRequest(page: 1))
        queue.addObserver(for: first) { (result: Result<Page, RequestError>) in
            guard case .success(let page) = result, let next = page.next else { return }
            let id = queue.add(PageRequest(page: next))   // starts on this thread once this observer returns
            queue.addObserver(for: id) { (result: Result<Page, RequestError>) in
                if case .success(let page) = result, page.items == [3] { lastPage.fulfill() }
            }
        }
        wait(for: [lastPage], timeout: 30)
        XCTAssertEqual(starts.log.all, ["1 on the main thread: false", "2 on the main thread: false"])
    }
}
