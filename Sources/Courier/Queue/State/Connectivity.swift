import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Whether the queue may send: what it has learnt of the network from its own traffic, and the
/// app's pause. A part of the queue's state (issue #22's durable queue builds on it; not yet
/// composed by the queue).
///
/// The network is taken to be gone when a transfer fails in a way that says so (no route, the
/// host cannot be found or reached, the connection dropped: ``meansOffline(_:)``), not on any
/// failure: a 500 or a timeout says the server is there. While it is gone, new attempts wait
/// instead of burning their retries, and a probe is sent after a backoff (1 s, doubling to 60 s);
/// any response from the network, a probe's or a request's, means it is back.
///
/// Invariants, checked by `ConnectivityTests`:
/// - attempts are admitted exactly when the network is up and the app has not paused;
/// - while offline exactly one probe is scheduled or in flight, never more;
/// - probe delays double from the initial delay up to the maximum, and start again at the
///   initial delay after the network came back;
/// - the app's pause hides the network's state without losing it: resuming shows it again.
struct Connectivity {
    /// What the queue's users see.
    enum Status: Sendable, Equatable {
        /// Attempts go out.
        case online
        /// The network was found gone at `since` (uptime, nanoseconds); attempts wait for it.
        case offline(since: UInt64)
        /// The app paused the queue; attempts wait for it to resume.
        case paused
    }

    enum Effect: Sendable, Equatable {
        /// What users see changed.
        case statusChanged(Status)
        /// Send a probe when `at` comes (uptime, nanoseconds), replacing any probe scheduled.
        case scheduleProbe(at: UInt64)
        /// Send a probe now.
        case sendProbe
        /// Forget the probe scheduled.
        case cancelProbe
        /// Start the attempts that waited.
        case startWaiting
    }

    private var offlineSince: UInt64?
    private var pausedByApp = false
    private var probeFailures = 0
    /// When the next probe is due; nil while none is scheduled (online, or a probe in flight).
    private(set) var probeDue: UInt64?
    private(set) var probeInFlight = false
    private let initialDelay: UInt64
    private let maximumDelay: UInt64

    /// - Parameters:
    ///   - initialDelay: Seconds before the first probe. Default: 1.
    ///   - maximumDelay: The longest delay between probes, in seconds. Default: 60.
    init(initialDelay: Double = 1, maximumDelay: Double = 60) {
        self.initialDelay = UInt64(max(0, initialDelay) * 1e9)
        self.maximumDelay = max(self.initialDelay, UInt64(max(0, maximumDelay) * 1e9))
    }

    var status: Status {
        if pausedByApp { return .paused }
        return offlineSince.map { .offline(since: $0) } ?? .online
    }

    /// Whether an attempt may go out now.
    var admitsAttempts: Bool { status == .online }

    /// Whether a failure with this code means the network (rather than one server) is gone.
    static func meansOffline(_ code: URLError.Code) -> Bool {
        switch code {
        case .notConnectedToInternet, .cannotFindHost, .dnsLookupFailed, .cannotConnectToHost,
             .networkConnectionLost, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
            true
        default:
            false
        }
    }

    // MARK: - Events

    /// A transfer (or a probe) failed with `code`.
    mutating func transportFailed(_ code: URLError.Code, now: UInt64) -> [Effect] {
        guard Self.meansOffline(code) else {
            // The network answered something: a probe that gets a TLS error still reached a host.
            return probeInFlight ? responded(now: now) : []
        }
        if probeInFlight {
            probeInFlight = false
            probeFailures += 1
            return schedule(now: now)
        }
        guard offlineSince == nil else { return [] }
        let before = status
        offlineSince = now
        probeFailures = 0
        return changed(from: before) + schedule(now: now)
    }

    /// A response came from the network (any status: the network is there).
    mutating func responded(now: UInt64) -> [Effect] {
        probeInFlight = false
        guard offlineSince != nil else { return [] }
        let before = status
        offlineSince = nil
        probeFailures = 0
        let hadProbe = probeDue != nil
        probeDue = nil
        return changed(from: before) + (hadProbe ? [.cancelProbe] : []) + (admitsAttempts ? [.startWaiting] : [])
    }

    /// The probe timer fired.
    mutating func probeTimerFired(now: UInt64) -> [Effect] {
        guard offlineSince != nil, let due = probeDue, now >= due, !probeInFlight else { return [] }
        probeDue = nil
        probeInFlight = true
        return [.sendProbe]
    }

    /// The app paused the queue.
    mutating func pause() -> [Effect] {
        let before = status
        pausedByApp = true
        return changed(from: before)
    }

    /// The app resumed the queue.
    mutating func resume() -> [Effect] {
        let before = status
        pausedByApp = false
        return changed(from: before) + (admitsAttempts && before != .online ? [.startWaiting] : [])
    }

    // MARK: - Rules

    private func changed(from before: Status) -> [Effect] {
        status == before ? [] : [.statusChanged(status)]
    }

    /// Schedules the next probe: the initial delay doubled once per failed probe, at most the maximum.
    private mutating func schedule(now: UInt64) -> [Effect] {
        let doublings = min(probeFailures, 62)
        let (scaled, overflow) = initialDelay.multipliedReportingOverflow(by: UInt64(1) << UInt64(doublings))
        let delay = overflow ? maximumDelay : min(maximumDelay, scaled)
        let due = now &+ delay
        probeDue = due
        return [.scheduleProbe(at: due)]
    }
}
