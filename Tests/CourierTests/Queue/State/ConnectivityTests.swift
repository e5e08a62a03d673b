import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The rules of `Connectivity`, event by event, on a clock of the test's (nanoseconds).
final class ConnectivityTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000
    private let t0: UInt64 = 1_000_000_000_000

    func testOnlyFailuresThatMeanTheNetworkIsGoneTakeItOffline() {
        // Given a queue online
        var connectivity = Connectivity()

        // When a request times out, and another gets a bad server response
        let timedOut = connectivity.transportFailed(.timedOut, now: t0)
        let badResponse = connectivity.transportFailed(.badServerResponse, now: t0)

        // Then the queue stays online: the server was there
        XCTAssertEqual(timedOut, [])
        XCTAssertEqual(badResponse, [])
        XCTAssertEqual(connectivity.status, .online)
        XCTAssertEqual([URLError.Code.notConnectedToInternet, .cannotFindHost, .dnsLookupFailed, .cannotConnectToHost,
                        .networkConnectionLost, .timedOut, .secureConnectionFailed, .cancelled].map(Connectivity.meansOffline),
                       [true, true, true, true, true, false, false, false])
    }

    func testTheNetworkGoneStopsAttemptsAndSchedulesOneProbe() {
        var connectivity = Connectivity()

        // When a request cannot reach its host, then another fails the same way
        let first = connectivity.transportFailed(.cannotConnectToHost, now: t0)
        let second = connectivity.transportFailed(.notConnectedToInternet, now: t0 + 10)

        // Then the queue is offline from the first, with one probe a second later; the second changes nothing
        XCTAssertEqual(first, [.statusChanged(.offline(since: t0)), .scheduleProbe(at: t0 + self.second)])
        XCTAssertEqual(second, [])
        XCTAssertFalse(connectivity.admitsAttempts)
    }

    func testProbesBackOffDoublingToTheMaximumAndAResponseBringsTheQueueBack() {
        // Given an offline queue probing from 1 s to 4 s
        var connectivity = Connectivity(initialDelay: 1, maximumDelay: 4)
        _ = connectivity.transportFailed(.cannotFindHost, now: t0)
        var now = t0
        var delays: [UInt64] = []

        // When four probes fail in a row
        for _ in 0..<4 {
            now = connectivity.probeDue!
            XCTAssertEqual(connectivity.probeTimerFired(now: now), [.sendProbe])
            XCTAssertNil(connectivity.probeDue, "one probe at a time: none scheduled while one is in flight")
            guard case .scheduleProbe(let due) = connectivity.transportFailed(.cannotFindHost, now: now).first else {
                return XCTFail("no probe scheduled")
            }
            delays.append((due - now) / second)
        }
        // And the fifth gets a response
        now = connectivity.probeDue!
        _ = connectivity.probeTimerFired(now: now)
        let back = connectivity.responded(now: now)

        // Then the delays were 2, 4, 4, 4 s after the first 1 s, and the queue is online and starts what waited
        XCTAssertEqual(delays, [2, 4, 4, 4])
        XCTAssertEqual(back, [.statusChanged(.online), .startWaiting])
        XCTAssertTrue(connectivity.admitsAttempts)

        // And the next time it goes offline, probes start again at the initial delay
        XCTAssertEqual(connectivity.transportFailed(.cannotFindHost, now: now), [.statusChanged(.offline(since: now)),
                                                                                 .scheduleProbe(at: now + second)])
    }

    func testARequestsResponseWhileOfflineCancelsTheScheduledProbe() {
        var connectivity = Connectivity()
        _ = connectivity.transportFailed(.networkConnectionLost, now: t0)
        XCTAssertEqual(connectivity.responded(now: t0 + 5), [.statusChanged(.online), .cancelProbe, .startWaiting])
        XCTAssertNil(connectivity.probeDue)
    }

    func testAProbeThatReachesSomethingEvenAnErrorMeansTheNetworkIsBack() {
        var connectivity = Connectivity()
        _ = connectivity.transportFailed(.cannotConnectToHost, now: t0)
        _ = connectivity.probeTimerFired(now: t0 + second)
        XCTAssertEqual(connectivity.transportFailed(.secureConnectionFailed, now: t0 + second),
                       [.statusChanged(.online), .startWaiting])
    }

    func testAnEarlyOrRepeatedTimerSendsNoProbe() {
        var connectivity = Connectivity()
        XCTAssertEqual(connectivity.probeTimerFired(now: t0), [], "online: nothing to probe")
        _ = connectivity.transportFailed(.cannotConnectToHost, now: t0)
        XCTAssertEqual(connectivity.probeTimerFired(now: t0 + second - 1), [], "before it is due")
        XCTAssertEqual(connectivity.probeTimerFired(now: t0 + second), [.sendProbe])
        XCTAssertEqual(connectivity.probeTimerFired(now: t0 + 2 * second), [], "one in flight already")
    }

    func testThePauseHidesTheNetworksStateWithoutLosingIt() {
        // Given a paused queue
        var connectivity = Connectivity()
        XCTAssertEqual(connectivity.pause(), [.statusChanged(.paused)])

        // When the network goes while paused, then the app resumes
        let whilePaused = connectivity.transportFailed(.notConnectedToInternet, now: t0)
        let resumed = connectivity.resume()

        // Then the status stayed paused, and on resume it shows the network gone; nothing starts
        XCTAssertEqual(whilePaused, [.scheduleProbe(at: t0 + second)])
        XCTAssertEqual(resumed, [.statusChanged(.offline(since: t0))])
        XCTAssertFalse(connectivity.admitsAttempts)

        // And pausing and resuming while online starts what waited
        _ = connectivity.responded(now: t0 + 1)
        _ = connectivity.pause()
        XCTAssertEqual(connectivity.resume(), [.statusChanged(.online), .startWaiting])
    }
}
