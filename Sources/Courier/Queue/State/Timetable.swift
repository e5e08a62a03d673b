/// The queue's timed work, earliest first, behind its one timer: request deadlines, retries
/// after their backoff, progress polls, sweeps of dead type observers, and the deferred-start
/// watchdog.
///
/// The queue enforces timeouts itself, since Linux's URLSession ignores
/// `URLRequest.timeoutInterval` (see the Linux notes); with one timer for everything, the cost
/// is one heap insertion per request, not a timer each.
///
/// Invariants, checked by `TimetableTests`:
/// - the timer is armed for the earliest job: `schedule` returns a time to arm it for exactly when
///   the new job is due before everything already armed, and `takeDue` returns the next time
///   whenever jobs remain;
/// - a periodic job (`.pollProgress`, `.sweepObservers`, `.watchDeferredStart`) is scheduled at
///   most once at a time; scheduling it again while it is pending changes nothing;
/// - jobs due at the same time come out in the order they were scheduled.
struct Timetable {
    enum Job {
        /// The request's timeout has passed.
        case deadline(RequestID)
        /// A retry's backoff has passed: the attempt goes back to the waiting list.
        case resume(Attempt)
        /// Read the progress of observed transfers.
        case pollProgress
        /// Release type observers whose owner is gone.
        case sweepObservers
        /// Look whether a deferred start-loop run has waited too long.
        case watchDeferredStart

        fileprivate var periodic: Periodic? {
            switch self {
            case .pollProgress: .pollProgress
            case .sweepObservers: .sweepObservers
            case .watchDeferredStart: .watchDeferredStart
            case .deadline, .resume: nil
            }
        }
    }

    fileprivate enum Periodic: Hashable {
        case pollProgress, sweepObservers, watchDeferredStart
    }

    private struct Item {
        let due: UInt64
        let order: UInt64
        let job: Job

        func precedes(_ other: Item) -> Bool {
            due != other.due ? due < other.due : order < other.order
        }
    }

    /// A binary min-heap of items.
    private var heap: [Item] = []
    private var scheduledCount: UInt64 = 0
    private var pendingPeriodic: Set<Periodic> = []
    private var deadlineCount = 0
    /// The time the timer is armed for; nil when it is not armed.
    private(set) var armedFor: UInt64?

    var count: Int { heap.count }
    /// How many deadlines are kept (some may belong to requests that ended since).
    var deadlines: Int { deadlineCount }

    /// Adds a job due at `due` (uptime, nanoseconds). Returns the time to arm the timer for when
    /// it must fire earlier than it is armed now, nil otherwise.
    mutating func schedule(_ job: Job, at due: UInt64) -> UInt64? {
        if let periodic = job.periodic {
            guard pendingPeriodic.insert(periodic).inserted else { return nil }
        }
        if case .deadline = job { deadlineCount += 1 }
        scheduledCount += 1
        push(Item(due: due, order: scheduledCount, job: job))
        if let armedFor, armedFor <= due { return nil }
        armedFor = due
        return due
    }

    /// Removes and returns the jobs due at `now` or before, and the time to arm the timer for
    /// next (nil when nothing is left).
    mutating func takeDue(now: UInt64) -> (jobs: [Job], next: UInt64?) {
        var jobs: [Job] = []
        while let first = heap.first, first.due <= now {
            popFirst()
            if let periodic = first.job.periodic { pendingPeriodic.remove(periodic) }
            if case .deadline = first.job { deadlineCount -= 1 }
            jobs.append(first.job)
        }
        armedFor = heap.first?.due
        return (jobs, armedFor)
    }

    /// Drops the deadlines of requests that ended, once they are most of the heap, so that a
    /// long timeout on many short requests does not make the heap grow without bound.
    mutating func purgeDeadlines(liveCount: Int, isLive: (RequestID) -> Bool) {
        guard deadlineCount > 64, deadlineCount > liveCount * 2 else { return }
        let kept = heap.filter { item in
            if case .deadline(let id) = item.job { return isLive(id) }
            return true
        }
        deadlineCount -= heap.count - kept.count
        heap = []
        heap.reserveCapacity(kept.count)
        for item in kept { push(item) }
        // The earliest job can only have moved later: the armed timer fires early, finds
        // nothing due and re-arms, which is harmless.
    }

    private mutating func push(_ item: Item) {
        heap.append(item)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popFirst() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < heap.count, heap[left].precedes(heap[first]) { first = left }
            if right < heap.count, heap[right].precedes(heap[first]) { first = right }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }
}
