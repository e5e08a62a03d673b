import Dispatch
import Foundation

extension RequestQueue {
    /// Registers a handler for a request's upload and download progress, called on the callback
    /// queue at most every `interval` seconds while bytes move, and a last time with the final
    /// counts just before the request's result is delivered.
    ///
    /// ```swift
    /// let id = queue.add(UploadRequest(parameters: form))
    /// queue.addProgressObserver(for: id) { progress in
    ///     print("\(Int((progress.fractionSent ?? 0) * 100)) %")
    /// }
    /// ```
    /// Nothing is reported for a request that has already ended, and nothing after the final
    /// counts (on a serial callback queue, reports never go back). Progress is read from the
    /// transfer while it runs (polling keeps URLSession on its fast completion-handler path).
    /// - Parameters:
    ///   - id: The request's ID.
    ///   - interval: The shortest time between two reports, in seconds. Default: 0.1.
    ///   - handler: Called with bytes sent and received, and their totals when known.
    public func addProgressObserver(for id: RequestID, interval: TimeInterval = 0.1,
                                    handler: @escaping @Sendable (TransferProgress) -> Void) {
        let observer = ProgressObserver(interval: interval, handler: handler)
        let startPolling = state.withLock { state -> Bool in
            guard state.addProgressObserver(observer, for: id), !state.progressPollScheduled else { return false }
            state.progressPollScheduled = true
            return true
        }
        if startPolling { scheduleProgressPoll() }
    }

    /// How often running transfers are read for progress observers, in seconds.
    private static let progressPollInterval = 0.05

    private func scheduleProgressPoll() {
        let weakSelf = WeakRequestQueue(self)
        workQueue.asyncAfter(deadline: .now() + Self.progressPollInterval) {
            weakSelf.queue?.pollProgress()
        }
    }

    private func pollProgress() {
        let transfers = state.withLock { $0.watchedTransfers() }
        let now = DispatchTime.now().uptimeNanoseconds
        var reports: [(ProgressObserver, TransferProgress)] = []
        // Read outside the lock: the task's counters take URLSession's own locks.
        for (task, observers) in transfers {
            let progress = task.progress
            for observer in observers where observer.wants(progress, now: now) { reports.append((observer, progress)) }
        }
        if !reports.isEmpty {
            let due = reports
            configuration.callbackQueue.async {
                DeliveryScope.run { for (observer, progress) in due { observer.report(progress) } }
            }
        }
        let again = state.withLock { state -> Bool in
            state.progressPollScheduled = state.hasProgressObservers
            return state.progressPollScheduled
        }
        if again { scheduleProgressPoll() }
    }
}
