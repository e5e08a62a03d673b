import Dispatch
import Foundation
import Observation
import XCTest
@testable import Courier

/// A resource clock the test moves: timers fire, on their context, only when it is advanced past them.
final class ManualResourceClock: Sendable {
    private struct Pending {
        let due: Double
        let serial: Int
        let context: ResourceContext
        let work: @Sendable () -> Void
    }

    private let state: Locked<(now: Double, serial: Int, pending: [Int: Pending])>
    /// The clock to give ``ResourceOptions``.
    let clock: ResourceClock

    init(_ start: Double = CacheRuleFixtures.now) {
        let state = Locked<(now: Double, serial: Int, pending: [Int: Pending])>((start, 0, [:]))
        self.state = state
        clock = ResourceClock(now: { state.withLock { $0.now } }, schedule: { delay, context, work in
            let serial = state.withLock { state in
                state.serial += 1
                state.pending[state.serial] = Pending(due: state.now + delay, serial: state.serial, context: context, work: work)
                return state.serial
            }
            return ResourceClock.Timer(cancel: { state.withLock { _ = $0.pending.removeValue(forKey: serial) } })
        })
    }

    var now: Double { state.withLock { $0.now } }
    /// When the next timer is due, if one is set.
    var nextDue: Double? { state.withLock { $0.pending.values.map(\.due).min() } }

    /// Moves the clock on; the timers now due run on their contexts, earliest first.
    func advance(_ seconds: Double) {
        let due = state.withLock { state -> [Pending] in
            state.now += seconds
            let due = state.pending.values.filter { $0.due <= state.now }.sorted { ($0.due, $0.serial) < ($1.due, $1.serial) }
            for timer in due { state.pending[timer.serial] = nil }
            return due
        }
        for timer in due { timer.context.async(timer.work) }
    }
}

/// Records what a resource shows after each change, as `withObservationTracking` reports them,
/// and lets a test wait for a given line.
final class ResourceRecorder<R: Request>: Sendable where R.ResponseType == Text {
    private let resource: Resource<R>
    private let context: DispatchQueue
    private let lines = Locked<[String]>([])
    private let changed = NSCondition()
    /// What the observer reads, when not everything: it then records a line each time it is
    /// told of a change, even one that leaves the line as it was.
    private let reading: (@Sendable (Resource<R>) -> Void)?

    init(_ resource: Resource<R>, on context: DispatchQueue, reading: (@Sendable (Resource<R>) -> Void)? = nil) {
        self.resource = resource
        self.context = context
        self.reading = reading
        context.sync { track() }
    }

    /// What the resource shows, in one line: `phase value source stale loading error`.
    static func describe(_ resource: Resource<R>) -> String {
        let phase: String
        switch resource.phase {
        case .idle: phase = "idle"
        case .loading: phase = "loading"
        case .loaded: phase = "loaded"
        case .failed: phase = "failed"
        }
        var line = "\(phase) \(resource.value?.text ?? "-") \(resource.source.map { "\($0)" } ?? "-")"
        if resource.isStale { line += " stale" }
        if resource.isLoading { line += " loading" }
        if let error = resource.error { line += " error=\(Self.name(of: error))" }
        return line
    }

    private static func name(of error: RequestError) -> String {
        switch error {
        case .transportFailed(let urlError): "transport(\(urlError.code.rawValue))"
        case .validationFailed(let response, _): "status(\(response.statusCode))"
        default: "\(error)"
        }
    }

    private func track() {
        // Told before the change: read it once the change (one block on the context) is over.
        let told: @Sendable () -> Void = { [self] in context.async { self.track() } }
        let line: String
        if let reading {
            withObservationTracking({ reading(resource) }, onChange: told)
            line = Self.describe(resource)
        } else {
            line = withObservationTracking({ Self.describe(resource) }, onChange: told)
        }
        changed.lock()
        lines.withLock { if reading != nil || $0.last != line { $0.append(line) } }
        changed.broadcast()
        changed.unlock()
    }

    var all: [String] { lines.withLock { $0 } }

    /// Waits until `line` has been recorded; false after `timeout` seconds.
    @discardableResult
    func wait(for line: String, timeout: TimeInterval = 10) -> Bool {
        wait(until: { $0.contains(line) }, timeout: timeout)
    }

    /// Waits until the lines recorded so far satisfy `condition`; false after `timeout` seconds.
    func wait(until condition: ([String]) -> Bool, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        changed.lock()
        defer { changed.unlock() }
        while !condition(all) {
            guard changed.wait(until: deadline) else { return condition(all) }
        }
        return true
    }
}

