import Dispatch
import Foundation

/// Receives a request's transfer progress on the callback queue, at most once per interval.
final class ProgressObserver: Sendable {
    private let handler: @Sendable (TransferProgress) -> Void
    private let interval: UInt64
    private let state = Locked(State())

    private struct State {
        /// The last progress a poll chose and when, so unchanged or too-frequent ones are skipped.
        var polled: TransferProgress?
        var polledAt: UInt64 = 0
        /// The last progress handed to the handler.
        var reported: TransferProgress?
        /// The final report was made: a poll already on its way is dropped, so progress never
        /// goes back after the final counts.
        var ended = false
    }

    init(interval: TimeInterval, handler: @escaping @Sendable (TransferProgress) -> Void) {
        self.interval = UInt64(max(0, interval) * 1e9)
        self.handler = handler
    }

    /// Whether `progress` is worth reporting now: it changed, it does not go back (a transport
    /// may read fewer bytes for a moment, or a retry start again from zero), and the interval
    /// has passed.
    func wants(_ progress: TransferProgress, now: UInt64) -> Bool {
        state.withLock { state in
            if let polled = state.polled,
               progress.bytesSent < polled.bytesSent || progress.bytesReceived < polled.bytesReceived {
                return false
            }
            guard !state.ended, state.polled != progress,
                  now &- state.polledAt >= interval || state.polled == nil else { return false }
            state.polled = progress
            state.polledAt = now
            return true
        }
    }

    /// Calls the handler; `force` marks the final report, made unless the handler already has
    /// these counts.
    func report(_ progress: TransferProgress, force: Bool = false) {
        let due = state.withLock { state -> Bool in
            let due = force ? state.reported != progress : !state.ended
            if due { state.reported = progress }
            if force { state.ended = true }
            return due
        }
        if due { handler(progress) }
    }
}
