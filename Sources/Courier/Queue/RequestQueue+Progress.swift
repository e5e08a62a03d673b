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
    /// transfer while it runs, so that transports keep their fastest path.
    /// - Parameters:
    ///   - id: The request's ID.
    ///   - interval: The shortest time between two reports, in seconds. Default: 0.1.
    ///   - handler: Called with bytes sent and received, and their totals when known.
    public func addProgressObserver(for id: RequestID, interval: TimeInterval = 0.1,
                                    handler: @escaping @Sendable (TransferProgress) -> Void) {
        let observer = ProgressObserver(interval: interval, handler: handler)
        _ = state.withLock { $0.addProgressObserver(observer, for: id, now: Self.now()) }
    }

    /// Reads the progress of observed transfers and reports what changed (the timer's
    /// `.pollProgress` job, which repeats while anything is observed).
    func pollProgress() {
        let now = Self.now()
        let transfers = state.withLock { $0.pollProgress(now: now) }
        var reports: [(ProgressObserver, TransferProgress)] = []
        // Read outside the lock: a task's counters may take the transport's own locks.
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
    }
}
