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
    private let api = Connectivity.Origin(URL(string: "https://API.example.com/v1/posts")!)!
    private let images = Connectivity.Origin(URL(string: "http://images.example.com:8080/a.png")!)!

    func testAnOriginIsSchemeHostAndPortWithTheDefaultPortSpelledOut() {
        XCTAssertEqual(api.description, "https://api.example.com:443")
        XCTAssertEqual(images.description, "http://images.example.com:8080")
        XCTAssertEqual(Connectivity.Origin(URL(string: "http://example.com/")!)?.description, "http://example.com:80")
        XCTAssertNil(Connectivity.Origin(URL(string: "/relative/path")!))
    }

    func testOnlyFailuresThatSayNothingAnsweredCount() {
        // Given a queue online
        var connectivity = Connectivity()

        // When a request times out, and another gets a bad server response
        let timedOut = connectivity.transportFailed(.timedOut, origin: api, now: t0)
        let badResponse = connectivity.transportFailed(.badServerResponse, origin: api, now: t0)

        // Then the queue stays online and admits the origin: the server was there
        XCTAssertEqual(timedOut, [])
        XCTAssertEqual(badResponse, [])
        XCTAssertEqual(connectivity.status, .online)
        XCTAssertTrue(connectivity.admits(api))
        let codes: [URLError.Code] = [.notConnectedToInternet, .dataNotAllowed, .cannotFindHost, .dnsLookupFailed,
                                      .cannotConnectToHost, .networkConnectionLost, .timedOut, .secureConnectionFailed, .cancelled]
        XCTAssertEqual(codes.map(Connectivity.meansNoNetwork), [true, true, false, false, false, false, false, false, false])
        XCTAssertEqual(codes.map(Connectivity.meansUnreachable), [false, false, true, true, true, true, false, false, false])
    }

    func testAnUnreachableOriginHoldsBackOnlyItsOwnAttempts() {
        var connectivity = Connectivity()

        // When the API cannot be reached, then a second request to it fails the same way
        let first = connectivity.transportFailed(.cannotConnectToHost, origin: api, now: t0)
        let second = connectivity.transportFailed(.cannotConnectToHost, origin: api, now: t0 + 10)

        // Then the API's attempts wait, with one probe a second later; the images' go on; the queue is online
        XCTAssertEqual(first, [.scheduleProbe(.origin(api), at: t0 + self.second)])
        XCTAssertEqual(second, [])
        XCTAssertFalse(connectivity.admits(api))
        XCTAssertTrue(connectivity.admits(images))
        XCTAssertEqual(connectivity.status, .online)
        XCTAssertEqual(connectivity.unreachableOrigins, [api: t0])
    }

    func testNoNetworkHoldsBackEveryAttemptWithOneProbe() {
        var connectivity = Connectivity()

        // When the system says there is no network, twice
        let first = connectivity.transportFailed(.notConnectedToInternet, origin: api, now: t0)
        let second = connectivity.transportFailed(.notConnectedToInternet, origin: images, now: t0 + 10)

        // Then the queue is offline from the first, with one probe (to the API) a second later
        XCTAssertEqual(first, [.statusChanged(.offline(since: t0)), .scheduleProbe(.network, at: t0 + self.second)])
        XCTAssertEqual(second, [])
        XCTAssertFalse(connectivity.admits(api))
        XCTAssertFalse(connectivity.admits(images))
    }

    func testProbesBackOffDoublingToTheMaximumAndAResponseBringsTheOriginBack() {
        // Given an unreachable API, probed from 1 s to 4 s
        var connectivity = Connectivity(initialDelay: 1, maximumDelay: 4)
        _ = connectivity.transportFailed(.cannotFindHost, origin: api, now: t0)
        var now = t0
        var delays: [UInt64] = []

        // When four probes fail in a row
        for _ in 0..<4 {
            now = connectivity.probeDue(for: .origin(api))!
            XCTAssertEqual(connectivity.probeTimerFired(.origin(api), now: now), [.sendProbe(.origin(api))])
            XCTAssertNil(connectivity.probeDue(for: .origin(api)), "one probe at a time: none scheduled while one is in flight")
            guard case .scheduleProbe(_, let due) = connectivity.transportFailed(.cannotFindHost, origin: api, probe: .origin(api),
                                                                                 now: now).first else {
                return XCTFail("no probe scheduled")
            }
            delays.append((due - now) / second)
        }
        // And the fifth gets a response
        now = connectivity.probeDue(for: .origin(api))!
        _ = connectivity.probeTimerFired(.origin(api), now: now)
        let back = connectivity.responded(origin: api, now: now)

        // Then the delays were 2, 4, 4, 4 s after the first 1 s, and the API's waiting attempts start
        XCTAssertEqual(delays, [2, 4, 4, 4])
        XCTAssertEqual(back, [.startWaiting(api)])
        XCTAssertTrue(connectivity.admits(api))

        // And the next time it is unreachable, probes start again at the initial delay
        XCTAssertEqual(connectivity.transportFailed(.cannotFindHost, origin: api, now: now), [.scheduleProbe(.origin(api), at: now + second)])
    }

    func testARequestsFailureWhileAProbeIsOutSchedulesNoSecondProbe() {
        var connectivity = Connectivity()
        _ = connectivity.transportFailed(.cannotConnectToHost, origin: api, now: t0)
        XCTAssertEqual(connectivity.probeTimerFired(.origin(api), now: t0 + second), [.sendProbe(.origin(api))])

        // A request sent before the API went away fails meanwhile: nothing new
        XCTAssertEqual(connectivity.transportFailed(.cannotConnectToHost, origin: api, now: t0 + second + 1), [])
        XCTAssertNil(connectivity.probeDue(for: .origin(api)))
        // The probe's own failure schedules the next
        XCTAssertEqual(connectivity.transportFailed(.cannotConnectToHost, origin: api, probe: .origin(api), now: t0 + 2 * second),
                       [.scheduleProbe(.origin(api), at: t0 + 4 * second)])
    }

    func testARequestsResponseCancelsTheScheduledProbe() {
        var connectivity = Connectivity()
        _ = connectivity.transportFailed(.networkConnectionLost, origin: api, now: t0)
        XCTAssertEqual(connectivity.responded(origin: api, now: t0 + 5), [.cancelProbe(.origin(api)), .startWaiting(api)])
        XCTAssertNil(connectivity.probeDue(for: .origin(api)))
    }

    func testAProbeThatReachesSomethingEvenAnErrorMeansItIsBack() {
        var connectivity = Connectivity()
        _ = connectivity.transportFailed(.notConnectedToInternet, origin: api, now: t0)
        XCTAssertEqual(connectivity.probeTimerFired(.network, now: t0 + second), [.sendProbe(.network)])
        XCTAssertEqual(connectivity.transportFailed(.secureConnectionFailed, origin: api, probe: .network, now: t0 + second),
                       [.statusChanged(.online), .startWaiting(nil)])
        XCTAssertTrue(connectivity.admits(images))
    }

    func testTheNetworkGoneSetsTheOriginsProbesAsideAndBackTheyProbeAgain() {
        // Given the images' origin unreachable, its probe scheduled
        var connectivity = Connectivity()
        _ = connectivity.transportFailed(.cannotConnectToHost, origin: images, now: t0)

        // When the network goes, and comes back with an answer from the API
        let gone = connectivity.transportFailed(.notConnectedToInternet, origin: api, now: t0 + 10)
        let timerMeanwhile = connectivity.probeTimerFired(.origin(images), now: t0 + second)
        let back = connectivity.responded(origin: api, now: t0 + 2 * second)

        // Then the images' probe stood aside while the network's went to the API, and came back after
        XCTAssertEqual(gone, [.statusChanged(.offline(since: t0 + 10)), .cancelProbe(.origin(images)), .scheduleProbe(.network, at: t0 + 10 + second)])
        XCTAssertEqual(timerMeanwhile, [])
        XCTAssertEqual(back, [.statusChanged(.online), .cancelProbe(.network), .scheduleProbe(.origin(images), at: t0 + 3 * second), .startWaiting(nil)])
        XCTAssertTrue(connectivity.admits(api))
        XCTAssertFalse(connectivity.admits(images))
    }

    func testAnEarlyOrRepeatedTimerSendsNoProbe() {
        var connectivity = Connectivity()
        XCTAssertEqual(connectivity.probeTimerFired(.origin(api), now: t0), [], "nothing gone: nothing to probe")
        _ = connectivity.transportFailed(.cannotConnectToHost, origin: api, now: t0)
        XCTAssertEqual(connectivity.probeTimerFired(.origin(api), now: t0 + second - 1), [], "before it is due")
        XCTAssertEqual(connectivity.probeTimerFired(.origin(images), now: t0 + second), [], "another origin")
        XCTAssertEqual(connectivity.probeTimerFired(.origin(api), now: t0 + second), [.sendProbe(.origin(api))])
        XCTAssertEqual(connectivity.probeTimerFired(.origin(api), now: t0 + 2 * second), [], "one in flight already")
    }

    func testThePauseHidesTheNetworksStateWithoutLosingIt() {
        // Given a paused queue
        var connectivity = Connectivity()
        XCTAssertEqual(connectivity.pause(), [.statusChanged(.paused)])

        // When the network goes while paused, then the app resumes
        let whilePaused = connectivity.transportFailed(.notConnectedToInternet, origin: api, now: t0)
        let resumed = connectivity.resume(now: t0 + 2)

        // Then the status stayed paused, and on resume it shows the network gone; nothing starts
        XCTAssertEqual(whilePaused, [.scheduleProbe(.network, at: t0 + second)])
        XCTAssertEqual(resumed, [.statusChanged(.offline(since: t0)), .scheduleProbe(.network, at: t0 + second)])
        XCTAssertFalse(connectivity.admits(api))

        // And a response while paused brings the network back without starting anything; resuming starts it
        _ = connectivity.pause()
        XCTAssertEqual(connectivity.responded(origin: api, now: t0 + 1), [.cancelProbe(.network)])
        XCTAssertFalse(connectivity.admits(api))
        XCTAssertEqual(connectivity.resume(now: t0 + 3), [.statusChanged(.online), .startWaiting(nil)])
    }

    func testTheNetworksProbeRefusedByItsHostMeansTheNetworkIsBackAndThatHostIsNot() {
        // Given no network, its probe out to the API
        var connectivity = Connectivity()
        _ = connectivity.transportFailed(.notConnectedToInternet, origin: api, now: t0)
        _ = connectivity.probeTimerFired(.network, now: t0 + second)

        // When the API refuses the probe's connection
        let refused = connectivity.transportFailed(.cannotConnectToHost, origin: api, probe: .network, now: t0 + second)

        // Then the queue is online, the API unreachable with a probe of its own, and the others start
        XCTAssertEqual(refused, [.statusChanged(.online), .scheduleProbe(.origin(api), at: t0 + 2 * second), .startWaiting(nil)])
        XCTAssertTrue(connectivity.admits(images))
        XCTAssertFalse(connectivity.admits(api))
    }

    func testAnUnansweredProbeIsScheduledAgainWithTheSameDelay() {
        // Given an unreachable API whose first probe failed (next delay 2 s) and whose second is out
        var connectivity = Connectivity()
        _ = connectivity.transportFailed(.cannotConnectToHost, origin: api, now: t0)
        _ = connectivity.probeTimerFired(.origin(api), now: t0 + second)
        _ = connectivity.transportFailed(.cannotConnectToHost, origin: api, probe: .origin(api), now: t0 + second)
        _ = connectivity.probeTimerFired(.origin(api), now: t0 + 3 * second)

        // When the probe's request is cancelled, then cancelled again
        let first = connectivity.probeUnanswered(.origin(api), now: t0 + 4 * second)
        let again = connectivity.probeUnanswered(.origin(api), now: t0 + 4 * second)

        // Then the next probe is due after the same 2 s, once
        XCTAssertEqual(first, [.scheduleProbe(.origin(api), at: t0 + 6 * second)])
        XCTAssertEqual(again, [])
    }

    func testWhatNobodyWaitsForIsForgotten() {
        // Given the API unreachable, then the network gone
        var connectivity = Connectivity()
        _ = connectivity.transportFailed(.cannotConnectToHost, origin: api, now: t0)
        XCTAssertEqual(connectivity.forget(.origin(api)), [])
        XCTAssertTrue(connectivity.admits(api))
        _ = connectivity.transportFailed(.cannotConnectToHost, origin: images, now: t0)
        _ = connectivity.transportFailed(.notConnectedToInternet, origin: api, now: t0)

        // When the network's probe is due and nothing waits
        let forgotten = connectivity.forget(.network)

        // Then the queue is online and nothing is held back any more
        XCTAssertEqual(forgotten, [.statusChanged(.online)])
        XCTAssertFalse(connectivity.restricts)
    }
}
