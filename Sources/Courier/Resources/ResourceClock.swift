import Dispatch
import Foundation

/// The time a ``Resource`` reads and the timers it sets: the system's, or one a test drives.
///
/// Times are seconds since 1970, the clock the HTTP cache reads `Date` and `Expires` against.
final class ResourceClock: Sendable, Hashable {
    /// A timer that was set; cancelling it after it fired does nothing. A class: a resource
    /// holds one reference (8 bytes) where a closure takes 16.
    final class Timer: Sendable {
        let cancel: @Sendable () -> Void
        init(cancel: @escaping @Sendable () -> Void) { self.cancel = cancel }
    }

    let now: @Sendable () -> Double
    /// Runs the work on the context after the delay, in seconds, unless the timer is cancelled.
    let schedule: @Sendable (_ delay: Double, _ context: ResourceContext, _ work: @escaping @Sendable () -> Void) -> Timer

    init(now: @escaping @Sendable () -> Double,
         schedule: @escaping @Sendable (Double, ResourceContext, @escaping @Sendable () -> Void) -> Timer) {
        self.now = now
        self.schedule = schedule
    }

    /// The wall clock, with dispatch timers on the context.
    static let system = ResourceClock(now: { Date().timeIntervalSince1970 }, schedule: { delay, context, work in
        Timer(cancel: context.after(delay, work))
    })

    static func == (lhs: ResourceClock, rhs: ResourceClock) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
