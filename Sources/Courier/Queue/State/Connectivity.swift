import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Whether the queue may send, and where: what it has learnt of the network and of each origin
/// from its own traffic, and the app's pause. A part of the queue's state (issue #22's durable
/// queue builds on it; not yet composed by the queue).
///
/// Two things can be gone, and they are told apart because one server that is down must not
/// hold back requests to the others:
/// - **the network**: the system says there is none (``meansNoNetwork(_:)``: not connected,
///   roaming off, data not allowed). Every attempt waits; the queue is ``Status/offline(since:)``.
/// - **an origin** (scheme, host, port): it cannot be found or reached, or its connection dropped
///   (``meansUnreachable(_:)``). Attempts to it wait; the others go on. On Linux, where no system
///   service says the network is gone, a lost network shows as every origin unreachable.
///
/// Any other failure (a timeout, a TLS error, any HTTP status) says something answered: it is
/// not taken for either. While something is gone a probe is sent to it after a backoff (1 s,
/// doubling to 60 s); any answer from an origin, a probe's or a request's, means the network and
/// that origin are back.
///
/// Invariants, checked by `ConnectivityTests`:
/// - an attempt to an origin is admitted exactly when the app has not paused, the network is
///   not gone, and that origin is not unreachable;
/// - while something is gone, exactly one probe for it is scheduled or in flight, never more;
/// - probe delays double from the initial delay up to the maximum, and start again at the
///   initial delay once it came back;
/// - the app's pause hides the network's state without losing it: resuming shows it again.
struct Connectivity {
    /// Where requests go, as connections are shared: `scheme://host:port`, lowercased.
    struct Origin: Hashable, Sendable, CustomStringConvertible {
        let description: String

        init?(_ url: URL) {
            guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
            description = "\(scheme)://\(host):\(port)"
        }
    }

    /// What the queue's users see.
    enum Status: Sendable, Equatable {
        /// Attempts go out (to the origins that are not unreachable).
        case online
        /// The network was found gone at `since` (uptime, nanoseconds); every attempt waits for it.
        case offline(since: UInt64)
        /// The app paused the queue; attempts wait for it to resume.
        case paused
    }

    enum Effect: Sendable, Equatable {
        /// What users see changed.
        case statusChanged(Status)
        /// Send a probe to the origin when `at` comes (uptime, nanoseconds), replacing any
        /// probe scheduled for it.
        case scheduleProbe(Origin, at: UInt64)
        /// Send a probe to the origin now.
        case sendProbe(Origin)
        /// Forget the probe scheduled for the origin.
        case cancelProbe(Origin)
        /// Start the attempts that waited: for one origin, or for every origin (`nil`).
        case startWaiting(Origin?)
    }

    /// Something gone, and its probes.
    private struct Gone {
        let since: UInt64
        /// Where the probes go: the origin whose failure found it gone.
        let probe: Origin
        var failures = 0
        /// When the next probe is due; nil while a probe is in flight.
        var due: UInt64?
        var inFlight = false
    }

    private var network: Gone?
    private var unreachable: [Origin: Gone] = [:]
    private var pausedByApp = false
    private let backoff: Backoff

    /// Probe delays, in nanoseconds.
    private struct Backoff {
        let initial: UInt64
        let maximum: UInt64
    }

    /// - Parameters:
    ///   - initialDelay: Seconds before the first probe. Default: 1.
    ///   - maximumDelay: The longest delay between probes, in seconds. Default: 60.
    init(initialDelay: Double = 1, maximumDelay: Double = 60) {
        let initial = UInt64(max(0, initialDelay) * 1e9)
        backoff = Backoff(initial: initial, maximum: max(initial, UInt64(max(0, maximumDelay) * 1e9)))
    }

    var status: Status {
        if pausedByApp { return .paused }
        return network.map { .offline(since: $0.since) } ?? .online
    }

    /// Whether an attempt to `origin` may go out now.
    func admits(_ origin: Origin) -> Bool {
        !pausedByApp && network == nil && unreachable[origin] == nil
    }

    /// The origins found unreachable, and since when (uptime, nanoseconds).
    var unreachableOrigins: [Origin: UInt64] { unreachable.mapValues(\.since) }

    /// When the next probe to `origin` is due; nil when none is scheduled.
    func probeDue(for origin: Origin) -> UInt64? {
        network?.probe == origin ? network?.due : unreachable[origin]?.due
    }

    /// Whether a failure with this code means the system has no network at all.
    static func meansNoNetwork(_ code: URLError.Code) -> Bool {
        switch code {
        case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive: true
        default: false
        }
    }

    /// Whether a failure with this code means the origin cannot be found or reached.
    static func meansUnreachable(_ code: URLError.Code) -> Bool {
        switch code {
        case .cannotFindHost, .dnsLookupFailed, .cannotConnectToHost, .networkConnectionLost: true
        default: false
        }
    }

    // MARK: - Events

    /// A transfer to `origin` failed with `code`: a request's, or the probe's (`isProbe`), whose
    /// failure schedules the next one; a request's failure while something is gone changes nothing.
    mutating func transportFailed(_ code: URLError.Code, origin: Origin, isProbe: Bool = false, now: UInt64) -> [Effect] {
        if Self.meansNoNetwork(code) {
            if network != nil { return isProbe ? Self.probeFailed(&network!, now: now, backoff) : [] }
            let before = status
            network = Gone(since: now, probe: origin)
            // The origins' own probes stand aside while the network's goes out.
            var aside: [Effect] = []
            for other in unreachable.keys.sorted(by: { $0.description < $1.description }) where unreachable[other]?.due != nil {
                unreachable[other]?.due = nil
                aside.append(.cancelProbe(other))
            }
            return changed(from: before) + aside + Self.schedule(&network!, now: now, backoff)
        }
        if Self.meansUnreachable(code) {
            if network?.probe == origin, isProbe { return Self.probeFailed(&network!, now: now, backoff) }
            if unreachable[origin] != nil { return isProbe ? Self.probeFailed(&unreachable[origin]!, now: now, backoff) : [] }
            unreachable[origin] = Gone(since: now, probe: origin)
            return network == nil ? Self.schedule(&unreachable[origin]!, now: now, backoff) : []
        }
        // Something answered, if only with an error of its own: the network and the origin are there.
        return responded(origin: origin, now: now)
    }

    /// A response came from `origin` (any status: it and the network are there).
    mutating func responded(origin: Origin, now: UInt64) -> [Effect] {
        let before = status
        var effects: [Effect] = []
        let networkBack = network != nil
        if let gone = network {
            network = nil
            if gone.due != nil { effects.append(.cancelProbe(gone.probe)) }
        }
        let originBack = unreachable[origin] != nil
        if let gone = unreachable.removeValue(forKey: origin), gone.due != nil {
            effects.append(.cancelProbe(origin))
        }
        // Origins that stood aside while the network was gone probe again.
        if networkBack {
            for other in unreachable.keys.sorted(by: { $0.description < $1.description }) where unreachable[other]?.inFlight == false {
                effects += Self.schedule(&unreachable[other]!, now: now, backoff)
            }
        }
        effects = changed(from: before) + effects
        guard !pausedByApp, networkBack || originBack else { return effects }
        return effects + [.startWaiting(networkBack ? nil : origin)]
    }

    /// The probe timer of `origin` fired.
    mutating func probeTimerFired(origin: Origin, now: UInt64) -> [Effect] {
        if network?.probe == origin { return Self.fire(&network!, now: now) }
        guard network == nil, unreachable[origin] != nil else { return [] }
        return Self.fire(&unreachable[origin]!, now: now)
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
        return changed(from: before) + (status == .online && before != .online ? [.startWaiting(nil)] : [])
    }

    // MARK: - Rules

    private func changed(from before: Status) -> [Effect] {
        status == before ? [] : [.statusChanged(status)]
    }

    private static func fire(_ gone: inout Gone, now: UInt64) -> [Effect] {
        guard let due = gone.due, now >= due, !gone.inFlight else { return [] }
        gone.due = nil
        gone.inFlight = true
        return [.sendProbe(gone.probe)]
    }

    /// A failure of what is gone again: its probe's (which schedules the next, later), or a
    /// request's meanwhile (nothing new).
    private static func probeFailed(_ gone: inout Gone, now: UInt64, _ backoff: Backoff) -> [Effect] {
        guard gone.inFlight else { return [] }
        gone.inFlight = false
        gone.failures += 1
        return schedule(&gone, now: now, backoff)
    }

    /// Schedules the next probe: the initial delay doubled once per failed probe, at most the maximum.
    private static func schedule(_ gone: inout Gone, now: UInt64, _ backoff: Backoff) -> [Effect] {
        let doublings = min(gone.failures, 62)
        let (scaled, overflow) = backoff.initial.multipliedReportingOverflow(by: UInt64(1) << UInt64(doublings))
        let delay = overflow ? backoff.maximum : min(backoff.maximum, scaled)
        let due = now &+ delay
        gone.due = due
        return [.scheduleProbe(gone.probe, at: due)]
    }
}
