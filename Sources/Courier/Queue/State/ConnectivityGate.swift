import Foundation
import Synchronization

/// The attempts held back by ``Connectivity`` (the app's pause, the network or their origin
/// gone), and the probes that bring them back. A part of the queue's state: ``QueueState``
/// composes it, under the queue's lock, and carries out the ``Step`` each event returns.
///
/// Invariants, checked by `ConnectivityGateTests`:
/// - an attempt is held at most once, and given back (released, or taken as a probe) once;
///   released attempts come out oldest first (by when their requests were added);
/// - an attempt that waits is held exactly while ``Connectivity/admits(_:)`` is false for its
///   origin; one that does not wait (``OfflinePolicy/fail``), only while the app has paused;
/// - a probe is a held attempt: the oldest held to its origin, or for the network the oldest held
///   of all. When none is held, what was gone is forgotten: no probe goes out for nobody;
/// - a probe's end is told to `Connectivity` once: its outcome, or that it went unanswered.
struct ConnectivityGate {
    /// What the queue must do after an event, beside the state kept here.
    struct Step {
        /// Attempts that may go now, oldest first; the queue puts them back in line.
        var released: [Attempt] = []
        /// Probe timers to set (uptime, nanoseconds).
        var timers: [(Connectivity.Target, UInt64)] = []
        /// What users see changed: tell the watchers.
        var statusChanged = false
        /// What came back: origins, or the network (`nil`). Watched resources there load again.
        var cameBack: [Connectivity.Origin?] = []

        var isEmpty: Bool { released.isEmpty && timers.isEmpty && !statusChanged && cameBack.isEmpty }
    }

    private struct Held {
        let attempt: Attempt
        let waits: Bool
        /// When its request was added, then its ID: what "oldest" means.
        let order: Order

        func precedes(_ other: Held) -> Bool {
            order.added != other.order.added ? order.added < other.order.added : order.id < other.order.id
        }
    }

    private struct Order {
        let added: Double
        let id: UInt64
    }

    private(set) var connectivity: Connectivity
    private var held: [Connectivity.Origin: [Held]] = [:]
    private var heldCount = 0
    /// The requests out as probes, and for what.
    private var probes: [RequestID: Connectivity.Target] = [:]

    init(connectivity: Connectivity = Connectivity()) {
        self.connectivity = connectivity
    }

    /// Whether anything may be held or probing: false means every attempt goes, and transfers'
    /// outcomes need not be told (the queue's fast path reads this).
    var isQuiet: Bool { !connectivity.restricts && probes.isEmpty }

    var heldAttempts: Int { heldCount }

    func isProbe(_ id: RequestID) -> Bool { probes[id] != nil }

    /// Whether an attempt to `origin` may go out now; `waits` when it waits for the network.
    func admits(_ origin: Connectivity.Origin, waits: Bool) -> Bool {
        Self.admits(origin, waits: waits, connectivity)
    }

    private static func admits(_ origin: Connectivity.Origin, waits: Bool, _ connectivity: Connectivity) -> Bool {
        waits ? connectivity.admits(origin) : !connectivity.isPaused
    }

    /// Holds an attempt the gate did not admit, until its origin is back or the app resumes.
    /// - Parameter added: When its request was added: the oldest goes first (a probe held again
    ///   keeps its place).
    mutating func hold(_ attempt: Attempt, to origin: Connectivity.Origin, waits: Bool, added: Date) {
        let item = Held(attempt: attempt, waits: waits, order: Order(added: added.timeIntervalSinceReferenceDate, id: attempt.id.rawValue))
        var list = held[origin, default: []]
        let index = list.lastIndex { !item.precedes($0) }.map { $0 + 1 } ?? 0
        list.insert(item, at: index)
        held[origin] = list
        heldCount += 1
    }

    /// Forgets a held attempt whose request ended (cancelled, or its timeout passed); a probe's
    /// end without an answer schedules the next probe.
    mutating func forget(_ id: RequestID, now: UInt64) -> Step {
        if let target = probes.removeValue(forKey: id) {
            return run(now) { $0.probeUnanswered(target, now: now) }
        }
        guard heldCount > 0 else { return Step() }
        for (origin, list) in held {
            guard let index = list.firstIndex(where: { $0.attempt.id == id }) else { continue }
            held[origin]!.remove(at: index)
            if held[origin]!.isEmpty { held[origin] = nil }
            heldCount -= 1
            break
        }
        return Step()
    }

    // MARK: - Events

    /// How a transfer ended, for connectivity.
    enum Outcome: Equatable {
        /// Something answered: a response (any status), or an error only a server can cause.
        case answered
        /// The transport failed with this code.
        case failed(URLError.Code)
        /// It was stopped before anything was known (cancelled, or its timeout passed).
        case unanswered

        init(_ result: Result<TransportResponse, RequestError>) {
            switch result {
            case .success(let response):
                // A stored response answering in place of a failure hides it from the caller only.
                self = response.networkFailure.map { .failed($0.code) } ?? .answered
            case .failure(.transportFailed(let error)): self = .failed(error.code)
            case .failure(.cancelled), .failure(.timedOut): self = .unanswered
            case .failure: self = .answered
            }
        }

        /// Whether it may change what the queue knows even while nothing is gone.
        var findsSomethingGone: Bool {
            guard case .failed(let code) = self else { return false }
            return Connectivity.meansNoNetwork(code) || Connectivity.meansUnreachable(code)
        }
    }

    /// A transfer of `id` to `origin` ended.
    mutating func note(_ outcome: Outcome, origin: Connectivity.Origin, id: RequestID, now: UInt64) -> Step {
        let probe = probes.removeValue(forKey: id)
        switch outcome {
        case .answered:
            return run(now) { $0.responded(origin: origin, now: now) }
        case .failed(let code):
            return run(now) { $0.transportFailed(code, origin: origin, probe: probe, now: now) }
        case .unanswered:
            return probe.map { target in run(now) { $0.probeUnanswered(target, now: now) } } ?? Step()
        }
    }

    /// What users see, with times made dates (`now`: uptime, nanoseconds).
    func status(now: UInt64) -> NetworkStatus {
        func date(_ since: UInt64) -> Date { Date(timeIntervalSinceNow: -Double(now &- min(since, now)) / 1e9) }
        var origins: [String: Date] = [:]
        for (origin, since) in connectivity.unreachableOrigins { origins[origin.description] = date(since) }
        return NetworkStatus(isPaused: connectivity.isPaused, offlineSince: connectivity.networkGoneSince.map(date),
                             unreachableOrigins: origins)
    }

    mutating func probeTimerFired(_ target: Connectivity.Target, now: UInt64) -> Step {
        run(now) { $0.probeTimerFired(target, now: now) }
    }

    mutating func pause() -> Step {
        run(0) { $0.pause() }
    }

    mutating func resume(now: UInt64) -> Step {
        // Attempts that do not wait for the network go on whatever it is doing, too.
        run(now, releasingAdmitted: true) { $0.resume(now: now) }
    }

    // MARK: - Carrying out Connectivity's effects

    /// What users see: the status and which origins are unreachable.
    private var seen: (Connectivity.Status, Set<Connectivity.Origin>) {
        (connectivity.status, Set(connectivity.unreachableOrigins.keys))
    }

    private mutating func run(_ now: UInt64, releasingAdmitted: Bool = false,
                              _ event: (inout Connectivity) -> [Connectivity.Effect]) -> Step {
        let before = seen
        var step = Step()
        var released: [Held] = []
        for effect in event(&connectivity) {
            switch effect {
            case .statusChanged:
                break
            case .scheduleProbe(let target, let due):
                step.timers.append((target, due))
            case .cancelProbe:
                // The timer fires and finds nothing due: Connectivity checks the time.
                break
            case .sendProbe(let target):
                if let probe = takeOldest(for: target) {
                    probes[probe.attempt.id] = target
                    released.append(probe)
                } else {
                    _ = connectivity.forget(target)
                }
            case .startWaiting(let origin):
                step.cameBack.append(origin)
                let current = connectivity
                released += release { candidate in
                    (origin == nil || origin == candidate.origin) && Self.admits(candidate.origin, waits: candidate.waits, current)
                }
            }
        }
        if releasingAdmitted {
            let current = connectivity
            released += release { Self.admits($0.origin, waits: $0.waits, current) }
        }
        step.released = released.sorted { $0.precedes($1) }.map(\.attempt)
        step.statusChanged = seen != before
        return step
    }

    private struct Candidate {
        let origin: Connectivity.Origin
        let waits: Bool
    }

    /// Takes out the held attempts `isReleased` says may go.
    private mutating func release(where isReleased: (Candidate) -> Bool) -> [Held] {
        guard heldCount > 0 else { return [] }
        var out: [Held] = []
        for (origin, list) in held {
            var kept: [Held] = []
            for item in list {
                if isReleased(Candidate(origin: origin, waits: item.waits)) { out.append(item) } else { kept.append(item) }
            }
            held[origin] = kept.isEmpty ? nil : kept
        }
        heldCount -= out.count
        return out
    }

    /// The oldest held attempt that waits for `target`: to its origin, or of all for the network.
    private mutating func takeOldest(for target: Connectivity.Target) -> Held? {
        var best: (origin: Connectivity.Origin, index: Int, item: Held)?
        for (origin, list) in held {
            if case .origin(let wanted) = target, wanted != origin { continue }
            if let index = list.firstIndex(where: \.waits), best.map({ list[index].precedes($0.item) }) ?? true {
                best = (origin, index, list[index])
            }
        }
        guard let best else { return nil }
        let item = held[best.origin]!.remove(at: best.index)
        if held[best.origin]!.isEmpty { held[best.origin] = nil }
        heldCount -= 1
        return item
    }
}

/// Whether the queue's ``ConnectivityGate`` is quiet, readable without the queue's lock: every
/// send reads it, and only a queue with something held back or gone takes the lock for the gate.
/// A send that reads it just before something is found gone goes out, as if it had started earlier.
final class QuietFlag: Sendable {
    private let value = Atomic<Bool>(true)

    var isQuiet: Bool { value.load(ordering: .acquiring) }

    func set(_ quiet: Bool) {
        value.store(quiet, ordering: .releasing)
    }
}
