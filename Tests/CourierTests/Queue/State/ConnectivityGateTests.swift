import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The invariants of `ConnectivityGate`: what it holds, what it gives back and in which order,
/// and which held attempt goes out as a probe.
final class ConnectivityGateTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000
    private let t0: UInt64 = 1_000_000_000_000
    private let api = Connectivity.Origin(URL(string: "https://api.example.com/")!)!
    private let images = Connectivity.Origin(URL(string: "https://images.example.com/")!)!
    private let epoch = Date(timeIntervalSinceReferenceDate: 1_000)

    private func attempt(_ raw: UInt64, _ origin: String = "api") -> Attempt {
        Attempt(id: RequestID(rawValue: raw), box: RequestBox(request: PathRequest<Greeting>("/\(raw)")),
                original: PreparedRequest(urlRequest: URLRequest(url: URL(string: "https://\(origin).example.com/\(raw)")!)))
    }

    private func ids(_ step: ConnectivityGate.Step) -> [UInt64] {
        step.released.map(\.id.rawValue)
    }

    /// A gate with the API found unreachable at t0 (its probe due at t0 + 1 s).
    private func gateWithTheAPIDown() -> ConnectivityGate {
        var gate = ConnectivityGate()
        let step = gate.note(.failed(.cannotConnectToHost), origin: api, id: RequestID(rawValue: 99), now: t0)
        XCTAssertTrue(step.statusChanged)
        XCTAssertEqual(step.timers.map(\.1), [t0 + second])
        return gate
    }

    func testAQuietGateAdmitsEverythingAndTheFirstFailureThatFindsAnOriginGoneMakesItListen() {
        var gate = ConnectivityGate()
        XCTAssertTrue(gate.isQuiet)
        XCTAssertTrue(gate.admits(api, waits: true))

        // A failure that says nothing of the network leaves it quiet
        XCTAssertTrue(gate.note(.failed(.timedOut), origin: api, id: RequestID(rawValue: 1), now: t0).isEmpty)
        XCTAssertTrue(gate.isQuiet)

        // A refused connection does not
        _ = gate.note(.failed(.cannotConnectToHost), origin: api, id: RequestID(rawValue: 2), now: t0)
        XCTAssertFalse(gate.isQuiet)
        XCTAssertFalse(gate.admits(api, waits: true))
        XCTAssertTrue(gate.admits(api, waits: false), "a request that does not wait goes anyway")
        XCTAssertTrue(gate.admits(images, waits: true))
    }

    func testATransfersOutcomeIsWhatReachedTheOriginNotWhatTheCallerGot() {
        let head = ResponseHead(status: 200, headerFields: [:], url: URL(string: "https://api.example.com/a")!)
        var stale = TransportResponse(head: head, body: Data())
        stale.source = .cache(.stale)
        XCTAssertEqual(ConnectivityGate.Outcome(.success(TransportResponse(head: head, body: Data()))), .answered)
        XCTAssertEqual(ConnectivityGate.Outcome(.success(stale)), .answered)
        // A stored response answering in place of a refused connection (stale-if-error)
        stale.networkFailure = URLError(.cannotConnectToHost)
        XCTAssertEqual(ConnectivityGate.Outcome(.success(stale)), .failed(.cannotConnectToHost))
        XCTAssertEqual(ConnectivityGate.Outcome(.failure(.transportFailed(URLError(.notConnectedToInternet)))),
                       .failed(.notConnectedToInternet))
        XCTAssertEqual(ConnectivityGate.Outcome(.failure(.timedOut)), .unanswered)
    }

    func testTheProbeIsTheOldestHeldAndTheRestFollowOldestFirstWhenItGetsThrough() {
        // Given three attempts held for the API, held out of the order they were added
        var gate = gateWithTheAPIDown()
        gate.hold(attempt(3), to: api, waits: true, added: epoch + 3)
        gate.hold(attempt(1), to: api, waits: true, added: epoch + 1)
        gate.hold(attempt(2), to: api, waits: true, added: epoch + 2)
        XCTAssertEqual(gate.heldAttempts, 3)

        // When the probe's timer fires, the probe fails, and the next one gets a response
        let probe = gate.probeTimerFired(.origin(api), now: t0 + second)
        XCTAssertTrue(gate.isProbe(RequestID(rawValue: 1)))
        let failed = gate.note(.failed(.cannotConnectToHost), origin: api, id: RequestID(rawValue: 1), now: t0 + second)
        gate.hold(attempt(1), to: api, waits: true, added: epoch + 1)
        let again = gate.probeTimerFired(.origin(api), now: t0 + 3 * second)
        let back = gate.note(.answered, origin: api, id: RequestID(rawValue: 1), now: t0 + 3 * second)

        // Then the oldest went out each time, the next probe came 2 s later, and the rest followed in order
        XCTAssertEqual(ids(probe), [1])
        XCTAssertEqual(failed.timers.map(\.1), [t0 + 3 * second])
        XCTAssertEqual(ids(again), [1], "held again, the probe kept its place")
        XCTAssertEqual(ids(back), [2, 3])
        XCTAssertTrue(back.statusChanged)
        XCTAssertEqual(gate.heldAttempts, 0)
        XCTAssertFalse(gate.isProbe(RequestID(rawValue: 1)))
        XCTAssertTrue(gate.isQuiet)
    }

    func testAnOriginsComebackReleasesOnlyItsOwnAttempts() {
        // Given attempts held for the API and for the images' origin, both down
        var gate = gateWithTheAPIDown()
        _ = gate.note(.failed(.cannotFindHost), origin: images, id: RequestID(rawValue: 98), now: t0)
        gate.hold(attempt(1), to: api, waits: true, added: epoch + 1)
        gate.hold(attempt(2, "images"), to: images, waits: true, added: epoch + 2)

        // When a request to the images' origin gets a response
        let back = gate.note(.answered, origin: images, id: RequestID(rawValue: 3), now: t0 + 10)

        // Then only its attempt goes; the API's waits
        XCTAssertEqual(ids(back), [2])
        XCTAssertEqual(gate.heldAttempts, 1)
        XCTAssertEqual(gate.status(now: t0 + 10).unreachableOrigins.keys.sorted(), ["https://api.example.com:443"])
    }

    func testAProbeDueWithNothingHeldForgetsTheOrigin() {
        var gate = gateWithTheAPIDown()
        let step = gate.probeTimerFired(.origin(api), now: t0 + second)
        XCTAssertEqual(ids(step), [])
        XCTAssertTrue(step.statusChanged)
        XCTAssertTrue(gate.isQuiet)
        XCTAssertEqual(gate.status(now: t0 + second), NetworkStatus())
    }

    func testForgettingAHeldAttemptAndAProbeWhoseRequestEnded() {
        // Given two held attempts, the first out as the probe
        var gate = gateWithTheAPIDown()
        gate.hold(attempt(1), to: api, waits: true, added: epoch + 1)
        gate.hold(attempt(2), to: api, waits: true, added: epoch + 2)
        _ = gate.probeTimerFired(.origin(api), now: t0 + second)

        // When both requests end (cancelled)
        let probeEnded = gate.forget(RequestID(rawValue: 1), now: t0 + second + 5)
        let heldEnded = gate.forget(RequestID(rawValue: 2), now: t0 + second + 5)

        // Then the next probe is scheduled after the same delay, and nothing is held
        XCTAssertEqual(probeEnded.timers.map(\.1), [t0 + 2 * second + 5])
        XCTAssertTrue(heldEnded.isEmpty)
        XCTAssertEqual(gate.heldAttempts, 0)
        XCTAssertFalse(gate.isProbe(RequestID(rawValue: 1)))
    }

    func testThePauseHoldsEveryAttemptAndResumeReleasesThoseWhoseOriginIsThere() {
        // Given the API down, and a paused gate holding an attempt to each origin, one that does not wait
        var gate = gateWithTheAPIDown()
        XCTAssertTrue(gate.pause().statusChanged)
        XCTAssertFalse(gate.admits(images, waits: false))
        gate.hold(attempt(1), to: api, waits: true, added: epoch + 1)
        gate.hold(attempt(2), to: api, waits: false, added: epoch + 2)
        gate.hold(attempt(3, "images"), to: images, waits: true, added: epoch + 3)

        // When the probe's timer fires while paused, then the app resumes
        let whilePaused = gate.probeTimerFired(.origin(api), now: t0 + second)
        let resumed = gate.resume(now: t0 + 2 * second)

        // Then no probe went while paused; on resume the probe's timer is set again and the
        // attempts that may go, go in order
        XCTAssertTrue(whilePaused.isEmpty)
        XCTAssertEqual(ids(resumed), [2, 3])
        XCTAssertEqual(resumed.timers.map(\.1), [t0 + 2 * second])
        XCTAssertTrue(resumed.statusChanged)
        XCTAssertEqual(gate.heldAttempts, 1)
    }

    func testTheStatusSaysSinceWhen() {
        var gate = ConnectivityGate()
        _ = gate.note(.failed(.notConnectedToInternet), origin: api, id: RequestID(rawValue: 1), now: t0)
        let status = gate.status(now: t0 + 30 * second)
        XCTAssertFalse(status.isOnline)
        XCTAssertEqual(status.offlineSince?.timeIntervalSinceNow ?? 0, -30, accuracy: 1)
        XCTAssertEqual(status.description, "offline")
    }
}
