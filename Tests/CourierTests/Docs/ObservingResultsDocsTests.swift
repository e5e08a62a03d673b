// Mirrors the article "Observing Results" (Courier.docc/ObservingResults.md).
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class ObservingResultsDocsTests: XCTestCase {
    // Scaffolding: the types of the Getting Started article.
    typealias Profile = GettingStartedDocsTests.Profile
    typealias ProfileRequest = GettingStartedDocsTests.ProfileRequest
    struct DownloadRequest: Request {
        typealias ResponseType = EmptyResponse
        var path: String { "/files/report.pdf" }
        var method: HTTPMethod { .get }
    }

    // Observing Results › Observers by response type (verbatim)
    @MainActor
    final class ProfileScreen {
        var name = ""

        init(queue: RequestQueue) {
            queue.addObserver(ownedBy: self) { [weak self] (result: Result<Profile, RequestError>) in
                MainActor.assumeIsolated {      // the callback queue is .main
                    if case .success(let profile) = result { self?.name = profile.name }
                }
            }
        }
    }

    private func fixtures() -> FixtureTransport {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/42", json: #"{"id": 42, "name": "Ada"}"#)
        fixtures.stub(.get, "/users/7", json: #"{"id": 7, "name": "Grace"}"#)
        return fixtures
    }

    // Observing Results › Observers by request ID: an observer added after the response.
    func testLateObserverGetsTheKeptResult() async throws {
        let queue = DocsSupport.queue(fixtures())
        let printed = Recorder<String>()
        let delivered = expectation(description: "late observer")
        let print: @Sendable (Any) -> Void = { printed.append("\($0)"); delivered.fulfill() }

        let id = queue.add(ProfileRequest(userID: 42))
        _ = try await queue.send(ProfileRequest(userID: 7))   // `id` may or may not be done: either way it is delivered
        queue.addObserver(for: id) { (result: Result<Profile, RequestError>) in
            print(result)
        }
        await fulfillment(of: [delivered], timeout: 30)
        XCTAssertEqual(printed.all.count, 1)
        XCTAssertTrue(printed.all[0].contains("Ada"), printed.all[0])
    }

    // Observing Results › Observers by request ID: retention bounds and resultUnavailable,
    // and a mismatched type.
    func testRetentionBoundsAndResultUnavailable() async throws {
        var configuration = RequestQueueConfiguration.default
        configuration.resultRetentionCount = 1024     // results kept for late observers
        configuration.resultRetentionInterval = 120   // seconds
        XCTAssertEqual(configuration.resultRetentionCount, 1024)
        XCTAssertEqual(RequestQueueConfiguration.default.resultRetentionCount, 256)
        XCTAssertEqual(RequestQueueConfiguration.default.resultRetentionInterval, 30)

        let queue = DocsSupport.queue(fixtures()) { $0.resultRetentionCount = 1 }
        let first = queue.add(ProfileRequest(userID: 42))
        // Requests run concurrently and may finish in any order: wait for `first` itself
        // before the next result pushes it out of a retention of one.
        let firstDone = expectation(description: "first finished")
        queue.addObserver(for: first) { (_: Result<Profile, RequestError>) in firstDone.fulfill() }
        await fulfillment(of: [firstDone], timeout: 30)
        DocsSupport.callbacks.sync {}   // its delivery has ended: from now on its result is only kept, and can be evicted
        _ = try await queue.send(ProfileRequest(userID: 7))   // keeps only this one now
        let results = Recorder<Result<Profile, RequestError>>()
        let mismatches = Recorder<Result<EmptyResponse, RequestError>>()
        let done = expectation(description: "told")
        done.expectedFulfillmentCount = 2
        queue.addObserver(for: first) { (result: Result<Profile, RequestError>) in results.append(result); done.fulfill() }
        let held = queue.add(ProfileRequest(userID: 42))
        queue.addObserver(for: held) { (result: Result<EmptyResponse, RequestError>) in mismatches.append(result); done.fulfill() }
        await fulfillment(of: [done], timeout: 30)
        guard case .failure(.resultUnavailable(let id))? = results.all.first else { return XCTFail("\(results.all)") }
        XCTAssertEqual(id, first)
        guard case .failure(.responseTypeMismatch)? = mismatches.all.first else { return XCTFail("\(mismatches.all)") }
    }

    // Observing Results › Observers by response type: the owner's observer, on the main queue.
    @MainActor
    func testTypeObserverWithAMainActorOwner() throws {
        let fixtures = fixtures()
        var configuration = RequestQueueConfiguration.default   // callbacks on .main
        configuration.transport = .fixtures(fixtures)
        let queue = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))
        let screen = ProfileScreen(queue: queue)
        let delivered = expectation(description: "delivered")
        queue.addObserver(for: queue.add(ProfileRequest(userID: 42))) { (_: Result<Profile, RequestError>) in delivered.fulfill() }
        wait(for: [delivered], timeout: 30)   // serves the main queue; type observers run after ID observers
        let flushed = expectation(description: "main queue flushed")
        DispatchQueue.main.async { flushed.fulfill() }
        wait(for: [flushed], timeout: 30)
        XCTAssertEqual(screen.name, "Ada")
    }

    // Observing Results › Observers by response type: a released owner is not called again,
    // and removeObservers (both forms) stops observers.
    func testReleasedOwnerAndRemoveObservers() async throws {
        final class Screen: Sendable {}
        let fixtures = fixtures()
        fixtures.stub(.head, "/ping", status: 204)
        let queue = DocsSupport.queue(fixtures)
        let calls = Recorder<String>()
        var gone: Screen? = Screen()
        let screen = Screen(), other = Screen()
        queue.addObserver(ownedBy: gone!) { (_: Result<Profile, RequestError>) in calls.append("gone") }
        queue.addObserver(ownedBy: screen) { (_: Result<Profile, RequestError>) in calls.append("screen profile") }
        queue.addObserver(ownedBy: screen) { (_: Result<EmptyResponse, RequestError>) in calls.append("screen empty") }
        let otherCalled = expectation(description: "other")
        queue.addObserver(ownedBy: other) { (_: Result<Profile, RequestError>) in calls.append("other"); otherCalled.fulfill() }
        gone = nil

        queue.removeObservers(forType: Profile.self, ownedBy: screen)   // one response type
        _ = try await queue.send(ProfileRequest(userID: 42))
        // `send` returns before the callback queue has run the type observers: wait for them.
        await fulfillment(of: [otherCalled], timeout: 30)
        DocsSupport.callbacks.sync {}
        XCTAssertEqual(calls.all, ["other"])

        queue.removeObservers(ownedBy: screen)                          // every type
        let otherEmpty = expectation(description: "other empty")
        queue.addObserver(ownedBy: other) { (_: Result<EmptyResponse, RequestError>) in calls.append("other empty"); otherEmpty.fulfill() }
        struct Ping: Request { typealias ResponseType = EmptyResponse; var path: String { "/ping" }; var method: HTTPMethod { .head } }
        _ = try await queue.send(Ping())
        await fulfillment(of: [otherEmpty], timeout: 30)
        DocsSupport.callbacks.sync {}
        XCTAssertEqual(calls.all, ["other", "other empty"])
        withExtendedLifetime((screen, other)) {}
    }

    // Observing Results › A stream of results.
    func testStreamOfResults() async throws {
        let queue = DocsSupport.queue(fixtures())
        let printed = Recorder<String>()
        let print: @Sendable (Any) -> Void = { printed.append("\($0)") }
        let stream = queue.results(of: Profile.self)
        queue.add(ProfileRequest(userID: 42))
        queue.add(ProfileRequest(userID: 7))

        try await bounded {   // (scaffolding: a result that never came fails the test, not hangs it)
            for await result in stream {
                if case .success(let profile) = result { print(profile.name) }
                if printed.all.count == 2 { break }
            }
        }
        XCTAssertEqual(Set(printed.all), ["Ada", "Grace"])
    }

    // Observing Results › A stream of results: the sample as written, with its loop in a task.
    func testStreamSampleVerbatim() async throws {
        let queue = DocsSupport.queue(fixtures())
        let printed = Recorder<String>()
        let got = expectation(description: "printed")
        got.assertForOverFulfill = false   // the adder may send again before the stream sees the first result
        let print: @Sendable (Any) -> Void = { printed.append("\($0)"); got.fulfill() }
        let consumer = Task {
            for await result in queue.results(of: Profile.self) {
                if case .success(let profile) = result { print(profile.name) }
            }
        }
        // The stream is made when the task starts: keep adding until the first result is seen.
        let adder = Task {
            while printed.all.isEmpty && !Task.isCancelled {
                _ = try? await queue.send(ProfileRequest(userID: 42))
            }
        }
        await fulfillment(of: [got], timeout: 30)
        adder.cancel()
        consumer.cancel()
        _ = await (adder.value, consumer.value)
        XCTAssertEqual(printed.all.first, "Ada")
    }

    // Observing Results › Progress: reports move forward, and the last one is full.
    func testProgressObserver() throws {
        let fixtures = FixtureTransport()
        fixtures.bytesPerSecond = 50_000
        fixtures.stub(.get, "/files/report.pdf", body: Data(count: 40_000))
        fixtures.holdsAnswers = true       // the transfer starts once the observers are in place
        let queue = DocsSupport.queue(fixtures)
        let printed = Recorder<String>()
        let firstReport = expectation(description: "a report while the answer is held")
        firstReport.assertForOverFulfill = false
        let print: @Sendable (Any) -> Void = { printed.append("\($0)"); firstReport.fulfill() }
        let done = expectation(description: "done")

        let id = queue.add(DownloadRequest())
        queue.addProgressObserver(for: id, interval: 0.05) { progress in
            print("\(Int((progress.fractionReceived ?? 0) * 100)) %")
        }
        queue.addObserver(for: id) { (_: Result<EmptyResponse, RequestError>) in done.fulfill() }
        try fixtures.waitForHeldRequests(1)
        // More than one report follows from the design, not from how many polls the machine
        // manages: one comes while the answer is held ("0 %"), and the final counts differ from
        // it, so they are reported too ("100 %").
        wait(for: [firstReport], timeout: 30)
        fixtures.releaseAll()
        wait(for: [done], timeout: 30)
        XCTAssertGreaterThan(printed.all.count, 1, "\(printed.all)")
        XCTAssertEqual(printed.all.first, "0 %")
        XCTAssertEqual(printed.all.last, "100 %")
        let percents = printed.all.compactMap { Int($0.dropLast(2)) }
        XCTAssertEqual(percents, percents.sorted())
    }

    // Observing Results › Order and completion: isFinished.
    func testIsFinished() throws {
        let fixtures = fixtures()
        fixtures.holdsAnswers = true            // the answer waits until released
        let queue = DocsSupport.queue(fixtures)
        let id = queue.add(ProfileRequest(userID: 42))
        XCTAssertFalse(queue.isFinished(id))    // false, until the observers have had the result
        try fixtures.waitForHeldRequests(1)
        XCTAssertFalse(queue.isFinished(id), "in flight")
        let done = expectation(description: "delivered")
        queue.addObserver(for: id) { (_: Result<Profile, RequestError>) in done.fulfill() }
        fixtures.releaseAll()
        wait(for: [done], timeout: 30)
        DocsSupport.callbacks.sync {}
        XCTAssertTrue(queue.isFinished(id))
    }

    // Observing Results › Overview: cancelling after the end changes nothing; each observer once.
    func testExactlyOnce() throws {
        let queue = DocsSupport.queue(fixtures())
        let calls = Recorder<String>()
        let done = expectation(description: "both")
        done.expectedFulfillmentCount = 2
        let id = queue.add(ProfileRequest(userID: 42))
        for name in ["a", "b"] {
            queue.addObserver(for: id) { (result: Result<Profile, RequestError>) in
                if case .success = result { calls.append(name) }
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 30)
        queue.cancel(id)
        DocsSupport.callbacks.sync {}
        XCTAssertEqual(calls.all.sorted(), ["a", "b"])
    }
}
