import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Whether the queue may send, and where: what it has learnt of the network and of each origin
/// from its own traffic, and the app's pause. A part of the queue's state (issue #22's durable
/// queue builds on it). ``ConnectivityGate`` holds the attempts it keeps back and sends its probes.
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
/// - while something is gone, at most one probe for it is scheduled or in flight, never more; none
///   only for an origin standing aside while the network is gone;
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

    /// What a probe is for: the network, or one origin.
    enum Target: Hashable, Sendable {
        case network
        case origin(Origin)
    }

    enum Effect: Sendable, Equatable {
        /// What users see changed.
        case statusChanged(Status)
        /// Send a probe when `at` comes (uptime, nanoseconds), replacing any probe scheduled for
        /// the target.
        case scheduleProbe(Target, at: UInt64)
        /// Send a probe now: the oldest attempt waiting for the target.
        case sendProbe(Target)
        /// Forget the probe scheduled for the target.
        case cancelProbe(Target)
        /// Start the attempts that waited: for one origin, or for every origin (`nil`).
        case startWaiting(Origin?)
    }

    /// Something gone, and its probes.
    private struct Gone {
        let since: UInt64
        var failures = 0
        /// When the next probe is due; nil while a probe is in flight, or while an origin
        /// stands aside for the network.
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

    var isPaused: Bool { pausedByApp }

    /// Whether anything holds attempts back: the app's pause, the network or an origin gone.
    var restricts: Bool { pausedByApp || network != nil || !unreachable.isEmpty }

    /// Whether an attempt to `origin` may go out now.
    func admits(_ origin: Origin) -> Bool {
        !pausedByApp && network == nil && unreachable[origin] == nil
    }

    /// When the network was found gone (uptime, nanoseconds), whatever the pause.
    var networkGoneSince: UInt64? { network?.since }

    /// The origins found unreachable, and since when (uptime, nanoseconds).
    var unreachableOrigins: [Origin: UInt64] { unreachable.mapValues(\.since) }

    /// When the next probe for `target` is due; nil when none is scheduled.
    func probeDue(for target: Target) -> UInt64? {
        switch target {
        case .network: network?.due
        case .origin(let origin): unreachable[origin]?.due
        }
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

    /// A transfer to `origin` failed with `code`: a request's, or a probe's (`probe` says for
    /// what), whose failure schedules the next one; a request's failure while something is gone
    /// changes nothing.
    mutating func transportFailed(_ code: URLError.Code, origin: Origin, probe: Target? = nil, now: UInt64) -> [Effect] {
        if Self.meansNoNetwork(code) { return networkGone(probe: probe, now: now) }
        guard Self.meansUnreachable(code) else {
            // Something answered, if only with an error of its own: the network and the origin are there.
            return responded(origin: origin, now: now)
        }
        let before = status
        var effects: [Effect] = []
        // The network's probe got as far as the host: the network is there, that host is not.
        let networkBack = probe == .network && network != nil
        if networkBack { effects += clearNetwork(now: now) }
        if unreachable[origin] == nil {
            unreachable[origin] = Gone(since: now)
            if network == nil { effects += schedule(.origin(origin), now: now) }
        } else if probe == .origin(origin) {
            effects += network == nil ? probeFailed(.origin(origin), now: now) : standAside(origin)
        }
        effects = changed(from: before) + effects
        return networkBack && !pausedByApp ? effects + [.startWaiting(nil)] : effects
    }

    /// A response came from `origin` (any status: it and the network are there).
    mutating func responded(origin: Origin, now: UInt64) -> [Effect] {
        let before = status
        var effects: [Effect] = []
        let originBack = unreachable[origin] != nil
        if let gone = unreachable.removeValue(forKey: origin), gone.due != nil {
            effects.append(.cancelProbe(.origin(origin)))
        }
        let networkBack = network != nil
        if networkBack { effects += clearNetwork(now: now) }
        effects = changed(from: before) + effects
        guard !pausedByApp, networkBack || originBack else { return effects }
        return effects + [.startWaiting(networkBack ? nil : origin)]
    }

    /// The probe timer of `target` fired. While the app has paused the queue nothing goes out:
    /// ``resume(now:)`` sets the timers again.
    mutating func probeTimerFired(_ target: Target, now: UInt64) -> [Effect] {
        guard !pausedByApp else { return [] }
        switch target {
        case .network:
            guard network != nil else { return [] }
            return Self.fire(&network!, target, now: now)
        case .origin(let origin):
            guard network == nil, unreachable[origin] != nil else { return [] }
            return Self.fire(&unreachable[origin]!, target, now: now)
        }
    }

    /// The probe for `target` ended without an answer either way (its request was cancelled, or
    /// timed out by its own deadline): the next one is scheduled, the backoff unchanged.
    mutating func probeUnanswered(_ target: Target, now: UInt64) -> [Effect] {
        switch target {
        case .network:
            guard network?.inFlight == true else { return [] }
            network!.inFlight = false
            return schedule(.network, now: now)
        case .origin(let origin):
            guard unreachable[origin]?.inFlight == true else { return [] }
            unreachable[origin]!.inFlight = false
            return network == nil ? schedule(target, now: now) : []
        }
    }

    /// Nothing waits for `target` when its probe is due: what was gone is forgotten (nobody
    /// needs to know; the next failure finds it again). For the network, everything is.
    mutating func forget(_ target: Target) -> [Effect] {
        let before = status
        switch target {
        case .network:
            network = nil
            unreachable = [:]
        case .origin(let origin):
            unreachable[origin] = nil
        }
        return changed(from: before)
    }

    /// The app paused the queue.
    mutating func pause() -> [Effect] {
        let before = status
        pausedByApp = true
        return changed(from: before)
    }

    /// The app resumed the queue: the probes that came due meanwhile go out.
    mutating func resume(now: UInt64) -> [Effect] {
        let before = status
        pausedByApp = false
        var timers: [Effect] = []
        if let due = network?.due { timers.append(.scheduleProbe(.network, at: max(due, now))) }
        for origin in unreachable.keys.sorted(by: { $0.description < $1.description }) {
            if let due = unreachable[origin]?.due { timers.append(.scheduleProbe(.origin(origin), at: max(due, now))) }
        }
        return changed(from: before) + timers + (status == .online && before != .online ? [.startWaiting(nil)] : [])
    }

    // MARK: - Rules

    private func changed(from before: Status) -> [Effect] {
        status == before ? [] : [.statusChanged(status)]
    }

    /// The system says there is no network: every attempt waits for one probe.
    private mutating func networkGone(probe: Target?, now: UInt64) -> [Effect] {
        var effects: [Effect] = []
        // An origin's probe that found no network stands aside for the network's.
        if case .origin(let origin) = probe, unreachable[origin]?.inFlight == true {
            unreachable[origin]!.inFlight = false
        }
        if network != nil { return probe == .network ? probeFailed(.network, now: now) : effects }
        let before = status
        network = Gone(since: now)
        // The origins' own probes stand aside while the network's goes out.
        for origin in unreachable.keys.sorted(by: { $0.description < $1.description }) {
            effects += standAside(origin)
        }
        return changed(from: before) + effects + schedule(.network, now: now)
    }

    /// The network is back: origins that stood aside probe again.
    private mutating func clearNetwork(now: UInt64) -> [Effect] {
        guard let gone = network else { return [] }
        network = nil
        var effects: [Effect] = gone.due != nil ? [.cancelProbe(.network)] : []
        for origin in unreachable.keys.sorted(by: { $0.description < $1.description })
        where unreachable[origin]?.inFlight == false && unreachable[origin]?.due == nil {
            effects += schedule(.origin(origin), now: now)
        }
        return effects
    }

    private mutating func standAside(_ origin: Origin) -> [Effect] {
        unreachable[origin]?.inFlight = false
        guard unreachable[origin]?.due != nil else { return [] }
        unreachable[origin]?.due = nil
        return [.cancelProbe(.origin(origin))]
    }

    private static func fire(_ gone: inout Gone, _ target: Target, now: UInt64) -> [Effect] {
        guard let due = gone.due, now >= due, !gone.inFlight else { return [] }
        gone.due = nil
        gone.inFlight = true
        return [.sendProbe(target)]
    }

    /// A failure of the probe for `target`: the next is scheduled, later. A request's failure
    /// meanwhile changes nothing.
    private mutating func probeFailed(_ target: Target, now: UInt64) -> [Effect] {
        switch target {
        case .network:
            guard network?.inFlight == true else { return [] }
            network!.inFlight = false
            network!.failures += 1
        case .origin(let origin):
            guard unreachable[origin]?.inFlight == true else { return [] }
            unreachable[origin]!.inFlight = false
            unreachable[origin]!.failures += 1
        }
        return schedule(target, now: now)
    }

    /// Schedules the next probe: the initial delay doubled once per failed probe, at most the maximum.
    private mutating func schedule(_ target: Target, now: UInt64) -> [Effect] {
        let failures: Int
        switch target {
        case .network: failures = network?.failures ?? 0
        case .origin(let origin): failures = unreachable[origin]?.failures ?? 0
        }
        let doublings = min(failures, 62)
        let (scaled, overflow) = backoff.initial.multipliedReportingOverflow(by: UInt64(1) << UInt64(doublings))
        let due = now &+ (overflow ? backoff.maximum : min(backoff.maximum, scaled))
        switch target {
        case .network: network?.due = due
        case .origin(let origin): unreachable[origin]?.due = due
        }
        return [.scheduleProbe(target, at: due)]
    }
}
