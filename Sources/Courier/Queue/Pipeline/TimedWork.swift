import Dispatch

/// What the queue's one timer starts: the jobs of its ``Timetable`` that are due.
extension RequestQueue {
    /// Runs the due jobs; the alarm is re-armed for the next one under the same lock.
    func runDueJobs() {
        let now = Self.now()
        for job in state.withLock({ $0.takeDueJobs(now: now) }) {
            switch job {
            case .deadline(let id):
                // A durable request's deadline is its attempt's: the attempt is stopped, and
                // its end (OutcomeStage) tries it again.
                if let durable, let task = state.withLock({ $0.runningDurableTask(id) }) {
                    durable.noteTimedOut(id)
                    task.cancel()
                    continue
                }
                // Whatever it is doing: running, backing off before a retry, or waiting for
                // credentials; but a stream whose body is under way has no timeout any more.
                if let claim = state.withLock({ $0.claimExpired(id, now: now) }) { end([claim]) }
            case .resume(let attempt):
                resumeAfterBackoff(attempt)
            case .pollProgress:
                pollProgress()
            case .sweepObservers:
                state.withLock { $0.sweepTypeObservers(now: now) }
            case .watchDeferredStart:
                if state.withLock({ $0.watchDeferredStart(now: now) }) { runStartLoop() }
            case .probe(let target):
                follow(state.withLock { $0.probeTimerFired(target, now: now) })
            }
        }
    }
}
