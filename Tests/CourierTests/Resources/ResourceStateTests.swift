import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The rules of `ResourceState`, event by event, without a queue or a clock.
final class ResourceStateTests: XCTestCase {
    private typealias State = ResourceState
    private let t0 = 1_000.0

    private func fresh(for seconds: Double, at now: Double, stored: Double? = nil) -> State.Freshness {
        .init(until: now + seconds, storedUntil: now + (stored ?? seconds))
    }

    private func arrival(_ value: String, _ freshness: State.Freshness, source: ResponseSource = .network) -> State.Arrival {
        .init(value: value, source: source, head: nil, freshness: freshness)
    }

    private func loaded(_ value: String = "v1", freshFor seconds: Double = 60) -> State {
        var state = State()
        _ = state.requestLoad(.ifNeeded, now: t0)
        _ = state.finished(1, with: .success(arrival(value, fresh(for: seconds, at: t0))), retry: nil, now: t0)
        return state
    }

    func testTheFirstLoadSendsWithTheRequestsOwnPolicyAndAnUnwatchedValueSetsNoTimer() {
        // Given a new resource
        var state = State()
        XCTAssertEqual("\(state.phase(as: String.self))", "idle")

        // When it loads and the value arrives, fresh for 60 s
        let start = state.requestLoad(.ifNeeded, now: t0)
        let phaseWhileLoading = "\(state.phase(as: String.self))"
        let end = state.finished(1, with: .success(arrival("v1", fresh(for: 60, at: t0))), retry: nil, now: t0)

        // Then it sent once with the request's policy, showed loading, then the value, with no timer (nobody watches)
        XCTAssertEqual(start, [.send(token: 1, policy: nil)])
        XCTAssertEqual(phaseWhileLoading, "loading")
        XCTAssertEqual(end, [])
        XCTAssertEqual(state.value as? String, "v1")
        XCTAssertFalse(state.isLoading)
        XCTAssertFalse(state.isStale)
    }

    func testALoadAskedForWhileOneRunsJoinsIt() {
        var state = State()
        _ = state.requestLoad(.always, now: t0)
        XCTAssertEqual(state.requestLoad(.always, now: t0), [])
        XCTAssertEqual(state.requestLoad(.origin, now: t0), [])
        XCTAssertEqual(state.load, .init(token: 1))
    }

    func testLoadIfNeededSendsNothingWhileFreshAndLoadsOnceStale() {
        var state = loaded(freshFor: 60)
        XCTAssertEqual(state.requestLoad(.ifNeeded, now: t0 + 59.9), [])
        XCTAssertEqual(state.requestLoad(.ifNeeded, now: t0 + 60), [.send(token: 2, policy: nil)])
    }

    func testLoadingAFreshValueAgainGoesThroughTheCacheAsTheRequestSays() {
        var state = loaded(freshFor: 60)
        XCTAssertEqual(state.requestLoad(.always, now: t0 + 1).first, .send(token: 2, policy: nil))
    }

    func testAStaleAfterShorterThanTheStoredFreshnessLoadsFromTheOrigin() {
        // Given a value fresh for the resource 10 s, for the HTTP cache 60 s
        var state = State()
        _ = state.requestLoad(.ifNeeded, now: t0)
        _ = state.finished(1, with: .success(arrival("v1", fresh(for: 10, at: t0, stored: 60))), retry: nil, now: t0)

        // When it is loaded again after 20 s (the cache would still answer with v1)
        let effects = state.requestLoad(.ifNeeded, now: t0 + 20)

        // Then the load asks the origin
        XCTAssertEqual(effects.first, .send(token: 2, policy: .reload))
    }

    func testAFailureKeepsTheValueBesideTheErrorAndASuccessClearsTheError() {
        var state = loaded()
        _ = state.requestLoad(.always, now: t0 + 1)
        _ = state.finished(2, with: .failure(.timedOut), retry: .init(), now: t0 + 1)
        XCTAssertEqual(state.value as? String, "v1")
        XCTAssertEqual("\(state.phase(as: String.self))", "loaded(\"v1\")")
        XCTAssertEqual(state.error.map { "\($0)" }, "\(RequestError.timedOut)")

        _ = state.requestLoad(.always, now: t0 + 2)
        _ = state.finished(3, with: .success(arrival("v2", fresh(for: 60, at: t0 + 2))), retry: nil, now: t0 + 2)
        XCTAssertEqual(state.value as? String, "v2")
        XCTAssertNil(state.error)
    }

    func testAStoredValueAnsweredInPlaceOfAFailureIsShownWithTheFailureAndRetried() {
        // Given a watched resource with a value, retrying after 5 s
        var state = loaded()
        _ = state.watch(now: t0)
        let offline = RequestError.transportFailed(URLError(.notConnectedToInternet))
        // When its next load is answered by the cache in place of the network's failure (stale-if-error)
        _ = state.requestLoad(.always, now: t0 + 70)
        var stale = arrival("v1", fresh(for: 0, at: t0 + 70), source: .cache(.stale))
        stale.failure = offline
        let effects = state.finished(2, with: .success(stale), retry: .init(initialDelay: .seconds(5)), now: t0 + 70)

        // Then the stored value shows, stale, with the failure beside it; a retry is due in 5 s
        XCTAssertEqual("\(state.phase(as: String.self))", "loaded(\"v1\")")
        XCTAssertEqual(state.source, .cache(.stale))
        XCTAssertTrue(state.isStale)
        XCTAssertEqual(state.error.map { "\($0)" }, "\(offline)")
        XCTAssertEqual(effects, [.setTimer(at: t0 + 75)])
        // And when the origin comes back it loads at once; a real answer clears the error
        XCTAssertEqual(state.reconnected(now: t0 + 71), [.send(token: 3, policy: nil), .clearTimer])
        _ = state.finished(3, with: .success(arrival("v2", fresh(for: 60, at: t0 + 72))), retry: .init(), now: t0 + 72)
        XCTAssertEqual(state.value as? String, "v2")
        XCTAssertNil(state.error)
        XCTAssertEqual(state.failures, 0)
    }

    func testAFailureBeforeAnyValueIsTheFailedPhase() {
        var state = State()
        _ = state.requestLoad(.always, now: t0)
        _ = state.finished(1, with: .failure(.timedOut), retry: nil, now: t0)
        XCTAssertEqual("\(state.phase(as: String.self))", "failed(\(RequestError.timedOut))")
    }

    func testACancelledLoadSetsNoErrorAndLoadsNothingAgain() {
        // Given a watched resource whose load after an invalidation is running
        var state = loaded()
        _ = state.watch(now: t0)
        _ = state.invalidate(now: t0 + 1)
        state.started(2, id: RequestID(rawValue: 77))

        // When the app cancels it
        let cancel = state.cancel()
        let end = state.finished(2, with: .failure(.cancelled), retry: .init(), now: t0 + 1)

        // Then the request is cancelled, no error shows and nothing loads by itself
        XCTAssertEqual(cancel, [.cancel(RequestID(rawValue: 77))])
        XCTAssertNil(state.error)
        XCTAssertFalse(end.contains { if case .send = $0 { true } else { false } })
        XCTAssertTrue(state.isStale)
    }

    func testInvalidationMakesTheValueStaleAndTheNextLoadAsksTheOrigin() {
        var state = loaded()
        XCTAssertEqual(state.invalidate(now: t0 + 1), [])
        XCTAssertTrue(state.isStale)
        XCTAssertEqual(state.requestLoad(.ifNeeded, now: t0 + 1), [.send(token: 2, policy: .reload)])
        _ = state.finished(2, with: .success(arrival("v2", fresh(for: 60, at: t0 + 1))), retry: nil, now: t0 + 1)
        XCTAssertFalse(state.isStale)
        XCTAssertFalse(state.isInvalidated)
    }

    func testAWatchedResourceLoadsAtOnceWhenInvalidated() {
        var state = loaded()
        XCTAssertEqual(state.watch(now: t0), [.setTimer(at: t0 + 60)], "watched: a timer for when its value goes stale")
        XCTAssertEqual(state.invalidate(now: t0 + 1), [.send(token: 2, policy: .reload), .clearTimer])
    }

    func testAnInvalidationDuringALoadLoadsAgainAfterItForAWatchedResource() {
        // Given a watched resource loading
        var state = State()
        _ = state.watch(now: t0)
        XCTAssertEqual(state.load?.token, 1)

        // When a write invalidates it before the answer comes
        XCTAssertEqual(state.invalidate(now: t0 + 1), [])
        let end = state.finished(1, with: .success(arrival("v1", fresh(for: 60, at: t0 + 2))), retry: nil, now: t0 + 2)

        // Then the answer shows, stale, and the resource loads again from the origin
        XCTAssertEqual(state.value as? String, "v1")
        XCTAssertTrue(state.isStale)
        XCTAssertEqual(end, [.send(token: 2, policy: .reload)])
    }

    func testAWatchedResourceRetriesAfterFailuresWithADoublingBackoffAndStopsWhenUnwatched() {
        // Given a watched resource, retrying from 1 s to 3 s
        let retry = ResourceOptions.Retry(initialDelay: .seconds(1), maximumDelay: .seconds(3))
        var state = State()
        _ = state.watch(now: t0)

        // When its loads fail three times
        let first = state.finished(1, with: .failure(.timedOut), retry: retry, now: t0)
        let retry1 = state.timerFired(now: t0 + 1)
        let second = state.finished(2, with: .failure(.timedOut), retry: retry, now: t0 + 1)
        let retry2 = state.timerFired(now: t0 + 3)
        let third = state.finished(3, with: .failure(.timedOut), retry: retry, now: t0 + 3)

        // Then it waited 1 s, 2 s, then 3 s (the maximum), and nothing once unwatched
        XCTAssertEqual(first, [.setTimer(at: t0 + 1)])
        XCTAssertEqual(retry1, [.send(token: 2, policy: nil)])
        XCTAssertEqual(second, [.setTimer(at: t0 + 3)])
        XCTAssertEqual(retry2, [.send(token: 3, policy: nil)])
        XCTAssertEqual(third, [.setTimer(at: t0 + 6)])
        XCTAssertEqual(state.unwatch(now: t0 + 4), [.clearTimer])
        XCTAssertNil(state.retryAt)
    }

    func testAWatchedResourceLoadsAtOnceWhenItsOriginComesBackAfterAFailureOrWithAStaleValue() {
        // Given a watched resource whose load failed (its retry due in 30 s)
        var failed = State()
        _ = failed.watch(now: t0)
        _ = failed.finished(1, with: .failure(.transportFailed(URLError(.cannotConnectToHost))), retry: .init(initialDelay: .seconds(30)), now: t0)
        // And a watched one whose value went stale, and one fresh
        var stale = loaded(freshFor: 10)
        _ = stale.watch(now: t0)
        var fresh = loaded(freshFor: 60)
        _ = fresh.watch(now: t0)
        // And one that failed but nobody watches
        var unwatched = State()
        _ = unwatched.requestLoad(.always, now: t0)
        _ = unwatched.finished(1, with: .failure(.timedOut), retry: .init(), now: t0)

        // When the origin comes back 20 s later
        let effects = [failed.reconnected(now: t0 + 20), stale.reconnected(now: t0 + 20), fresh.reconnected(now: t0 + 20),
                       unwatched.reconnected(now: t0 + 20)]

        // Then the failed and the stale ones load now, the others do nothing
        XCTAssertEqual(effects[0], [.send(token: 2, policy: nil), .clearTimer])
        XCTAssertEqual(effects[1], [.send(token: 2, policy: nil), .clearTimer])
        XCTAssertEqual(effects[2], [])
        XCTAssertEqual(effects[3], [])
        XCTAssertNil(failed.retryAt)
        XCTAssertTrue(failed.isLoading)
        XCTAssertNotNil(failed.error, "the error stays beside the value until a load succeeds")
    }

    func testAnUnwatchedResourceNeverRetries() {
        var state = State()
        _ = state.requestLoad(.always, now: t0)
        XCTAssertEqual(state.finished(1, with: .failure(.timedOut), retry: .init(), now: t0), [])
        XCTAssertNil(state.retryAt)
    }

    func testAWatchedValueLoadsAgainWhenItsFreshnessRunsOutButAValueStaleOnArrivalDoesNotLoop() {
        // Given a watched value fresh for 60 s
        var state = loaded(freshFor: 60)
        _ = state.watch(now: t0)

        // When its timer fires at its staleness
        let effects = state.timerFired(now: t0 + 60)

        // Then it is stale and loads again
        XCTAssertTrue(state.isStale)
        XCTAssertEqual(effects, [.send(token: 2, policy: nil)])

        // And an answer stale on arrival (no freshness) sets no timer, so nothing loads again by itself
        XCTAssertEqual(state.finished(2, with: .success(arrival("v2", fresh(for: 0, at: t0 + 60))), retry: nil, now: t0 + 60), [])
        XCTAssertTrue(state.isStale)
        XCTAssertNil(state.timerAt)
    }

    func testUpdatesOfALoadThatIsNotTheRunningOneAreIgnored() {
        var state = loaded()
        XCTAssertEqual(state.showStored(1, arrival("old", fresh(for: 0, at: t0), source: .cache(.stale)), now: t0), [])
        XCTAssertEqual(state.finished(1, with: .success(arrival("old", fresh(for: 0, at: t0))), retry: nil, now: t0), [])
        XCTAssertEqual(state.value as? String, "v1")
    }

    func testAStoredValueShownFirstIsStaleAndTheLoadGoesOn() {
        var state = State()
        _ = state.requestLoad(.always, now: t0)
        _ = state.showStored(1, arrival("stored", fresh(for: 0, at: t0), source: .cache(.stale)), now: t0)
        XCTAssertEqual(state.value as? String, "stored")
        XCTAssertTrue(state.isStale)
        XCTAssertTrue(state.isLoading)
        XCTAssertEqual("\(state.phase(as: String.self))", "loaded(\"stored\")")
    }
}

/// An app may keep thousands of resources: what each keeps inline stays within its budget
/// (a resource's core is one allocation of 16 + 8 + the storage's bytes; 184 fits malloc's 192).
final class ResourceLayoutTests: XCTestCase {
    func testTheStateAndTheStorageFitTheirBudget() {
        XCTAssertLessThanOrEqual(MemoryLayout<ResourceState>.size, 117)
        XCTAssertLessThanOrEqual(MemoryLayout<ResourceStorage>.size, 160)
        XCTAssertLessThanOrEqual(MemoryLayout<ResourceRegistry.Key>.size, 16)
    }
}
