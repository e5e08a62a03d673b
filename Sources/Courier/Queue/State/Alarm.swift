import Dispatch

/// The queue's one timer, armed for the earliest job of its ``Timetable``.
///
/// Armed only under the queue's lock, so that two threads scheduling jobs cannot leave it armed
/// for the later of two times.
final class Alarm: Sendable {
    /// A dispatch source is safe to schedule and cancel from any thread (libdispatch's
    /// contract), but its Swift protocol does not say `Sendable`; this is the one place that
    /// relies on it.
    nonisolated(unsafe) private let timer: any DispatchSourceTimer

    /// A disarmed alarm whose handler runs on `queue`.
    init(queue: DispatchQueue) {
        timer = DispatchSource.makeTimerSource(queue: queue)
    }

    /// Sets what runs when the alarm goes off, and starts it. Called once.
    func start(handler: @escaping @Sendable () -> Void) {
        timer.setEventHandler(handler: handler)
        timer.activate()
    }

    /// Goes off once at `uptime` (nanoseconds), replacing any earlier arming.
    func arm(at uptime: UInt64) {
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: uptime))
    }

    /// Stops it for good.
    func stop() {
        timer.cancel()
    }
}
