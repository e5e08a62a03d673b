/// The queue's timed work, earliest first, behind its one timer: request deadlines, retries
/// after their backoff, progress polls, sweeps of dead type observers, the deferred-start
/// watchdog, and connectivity's probes.
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
/// - jobs due at the same time come out in the order they were scheduled;
/// - a request has at most one deadline, and it is kept only while the request lives: the queue
///   cancels it when the request ends, so after a burst of requests nothing of theirs is left,
///   whatever their timeouts (`deadlines` counts live requests with a timeout, no more).
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
        /// A probe for something gone may be due (``Connectivity``).
        case probe(Connectivity.Target)

        fileprivate var periodic: Periodic? {
            switch self {
            case .pollProgress: .pollProgress
            case .sweepObservers: .sweepObservers
            case .watchDeferredStart: .watchDeferredStart
            case .deadline, .resume, .probe: nil
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
    /// Where each request's deadline sits in the heap, so that a request that ends takes its
    /// deadline out at once, in O(log n).
    private var deadlineSlots: [RequestID: Int] = [:]
    /// The time the timer is armed for; nil when it is not armed.
    private(set) var armedFor: UInt64?

    var count: Int { heap.count }
    /// How many deadlines are pending: one per live request with a timeout.
    var deadlines: Int { deadlineSlots.count }

    /// Adds a job due at `due` (uptime, nanoseconds). Returns the time to arm the timer for when
    /// it must fire earlier than it is armed now, nil otherwise.
    mutating func schedule(_ job: Job, at due: UInt64) -> UInt64? {
        if let periodic = job.periodic {
            guard pendingPeriodic.insert(periodic).inserted else { return nil }
        }
        if case .deadline(let id) = job { cancelDeadline(of: id) }
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
            remove(at: 0)
            if let periodic = first.job.periodic { pendingPeriodic.remove(periodic) }
            jobs.append(first.job)
        }
        armedFor = heap.first?.due
        return (jobs, armedFor)
    }

    func hasDeadline(_ id: RequestID) -> Bool {
        deadlineSlots[id] != nil
    }

    /// Takes out the deadline of a request that ended, if it has one. The timer stays armed as it
    /// is: if this was the earliest job, it fires early, finds nothing due and re-arms.
    mutating func cancelDeadline(of id: RequestID) {
        guard let index = deadlineSlots[id] else { return }
        remove(at: index)
    }

    // MARK: - The heap

    /// Puts `item` at `index`, keeping `deadlineSlots` true.
    private mutating func place(_ item: Item, at index: Int) {
        heap[index] = item
        if case .deadline(let id) = item.job { deadlineSlots[id] = index }
    }

    private mutating func push(_ item: Item) {
        heap.append(item)
        siftUp(item, from: heap.count - 1)
    }

    /// Removes the item at `index`, moving the last one into its place.
    private mutating func remove(at index: Int) {
        if case .deadline(let id) = heap[index].job { deadlineSlots[id] = nil }
        let last = heap.removeLast()
        guard index < heap.count else { return }
        if index > 0, last.precedes(heap[(index - 1) / 2]) {
            siftUp(last, from: index)
        } else {
            siftDown(last, from: index)
        }
    }

    /// Places `item`, meant for the hole at `index`, at or above it.
    private mutating func siftUp(_ item: Item, from index: Int) {
        var hole = index
        while hole > 0 {
            let parent = (hole - 1) / 2
            guard item.precedes(heap[parent]) else { break }
            place(heap[parent], at: hole)
            hole = parent
        }
        place(item, at: hole)
    }

    /// Places `item`, meant for the hole at `index`, at or below it.
    private mutating func siftDown(_ item: Item, from index: Int) {
        var hole = index
        while true {
            let left = 2 * hole + 1, right = left + 1
            var first = left
            guard left < heap.count else { break }
            if right < heap.count, heap[right].precedes(heap[left]) { first = right }
            guard heap[first].precedes(item) else { break }
            place(heap[first], at: hole)
            hole = first
        }
        place(item, at: hole)
    }
}
