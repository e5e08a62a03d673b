import Dispatch
import Foundation

/// Receives a request's transfer progress on the callback queue, at most once per interval.
final class ProgressObserver: Sendable {
    private let handler: @Sendable (TransferProgress) -> Void
    private let interval: UInt64
    /// The last report and its time, so unchanged or too-frequent reports are skipped.
    private let last = Locked<(progress: TransferProgress?, at: UInt64)>((nil, 0))

    init(interval: TimeInterval, handler: @escaping @Sendable (TransferProgress) -> Void) {
        self.interval = UInt64(max(0, interval) * 1e9)
        self.handler = handler
    }

    /// Whether `progress` is worth reporting now: it changed, and the interval has passed.
    func wants(_ progress: TransferProgress, now: UInt64) -> Bool {
        last.withLock { last in
            guard last.progress != progress, now &- last.at >= interval || last.progress == nil else { return false }
            last = (progress, now)
            return true
        }
    }

    /// Calls the handler; `force` reports even if the interval has not passed (the final report).
    func report(_ progress: TransferProgress, force: Bool = false) {
        if force {
            let changed = last.withLock { last -> Bool in
                defer { last = (progress, DispatchTime.now().uptimeNanoseconds) }
                return last.progress != progress
            }
            if changed { handler(progress) }
        } else {
            handler(progress)
        }
    }
}
