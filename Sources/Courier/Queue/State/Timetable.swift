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
/// - a request has at most one deadline, and it counts only while the request lives: the queue
///   cancels it when the request ends (`deadlines` counts live requests with a timeout, no more),
///   and a cancelled one never comes out;
/// - cancelled deadlines stay in the heap until they come due or the heap is compacted, which
///   happens once they are more than 64 and outnumber the live jobs: after a burst of requests at
///   most 64 of theirs are left, whatever their timeouts.
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
        /// Unique: scheduling order, which also tells a request's current deadline from one it
        /// replaced.
        let order: UInt64
        let job: Job

        func precedes(_ other: Item) -> Bool {
            due != other.due ? due < other.due : order < other.order
        }
    }

    /// A binary min-heap of items, cancelled deadlines among them.
    private var heap: [Item] = []
    private var scheduledCount: UInt64 = 0
    private var pendingPeriodic: Set<Periodic> = []
    /// The order of each live request's deadline. A deadline that ends is only taken from here:
    /// taking it out of the heap would rehash its ID at every step of the heap's repair, and
    /// most requests end long before their timeout.
    private var liveDeadlines: [RequestID: UInt64] = [:]
    /// Cancelled deadlines still in the heap.
    private var cancelled = 0
    /// The time the timer is armed for; nil when it is not armed.
    private(set) var armedFor: UInt64?

    /// The jobs pending (cancelled deadlines not counted).
    var count: Int { heap.count - cancelled }
    /// How many deadlines are pending: one per live request with a timeout.
    var deadlines: Int { liveDeadlines.count }
    /// The items the heap holds, cancelled deadlines included (tests).
    var stored: Int { heap.count }

    /// Adds a job due at `due` (uptime, nanoseconds). Returns the time to arm the timer for when
    /// it must fire earlier than it is armed now, nil otherwise.
    mutating func schedule(_ job: Job, at due: UInt64) -> UInt64? {
        if let periodic = job.periodic {
            guard pendingPeriodic.insert(periodic).inserted else { return nil }
        }
        scheduledCount += 1
        push(Item(due: due, order: scheduledCount, job: job))
        if case .deadline(let id) = job, liveDeadlines.updateValue(scheduledCount, forKey: id) != nil { noteCancelled() }
        if let armedFor, armedFor <= due { return nil }
        armedFor = due
        return due
    }

    /// Removes and returns the jobs due at `now` or before, and the time to arm the timer for
    /// next (nil when nothing is left).
    mutating func takeDue(now: UInt64) -> (jobs: [Job], next: UInt64?) {
        var jobs: [Job] = []
        while let first = heap.first, first.due <= now {
            removeFirst()
            if !isCancelled(first) {
                if case .deadline(let id) = first.job { liveDeadlines[id] = nil }
                if let periodic = first.job.periodic { pendingPeriodic.remove(periodic) }
                jobs.append(first.job)
            }
        }
        // The timer is for the earliest live job.
        while let first = heap.first, isCancelled(first) { removeFirst() }
        armedFor = heap.first?.due
        return (jobs, armedFor)
    }

    func hasDeadline(_ id: RequestID) -> Bool {
        liveDeadlines[id] != nil
    }

    /// Cancels the deadline of a request that ended, if it has one. The timer stays armed as it
    /// is: if this was the earliest job, it fires early, finds nothing due and re-arms.
    mutating func cancelDeadline(of id: RequestID) {
        guard liveDeadlines.removeValue(forKey: id) != nil else { return }
        noteCancelled()
    }

    private mutating func noteCancelled() {
        cancelled += 1
        if cancelled > 64, cancelled * 2 > heap.count { compact() }
    }

    /// Whether `item` is a deadline that was cancelled or replaced. Called only for items in the
    /// heap, each once as it leaves: the count of cancelled ones stays true.
    private mutating func isCancelled(_ item: Item) -> Bool {
        guard case .deadline(let id) = item.job, liveDeadlines[id] != item.order else { return false }
        cancelled -= 1
        return true
    }

    /// Drops the cancelled deadlines and rebuilds the heap: O(n), once they outnumber the rest.
    private mutating func compact() {
        heap.removeAll { item in
            guard case .deadline(let id) = item.job else { return false }
            return liveDeadlines[id] != item.order
        }
        cancelled = 0
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(heap[index], from: index) }
    }

    // MARK: - The heap

    private mutating func push(_ item: Item) {
        heap.append(item)
        siftUp(item, from: heap.count - 1)
    }

    /// Removes the earliest item, moving the last one into its place.
    private mutating func removeFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        siftDown(last, from: 0)
    }

    /// Places `item`, meant for the hole at `index`, at or above it.
    private mutating func siftUp(_ item: Item, from index: Int) {
        var hole = index
        while hole > 0 {
            let parent = (hole - 1) / 2
            guard item.precedes(heap[parent]) else { break }
            heap[hole] = heap[parent]
            hole = parent
        }
        heap[hole] = item
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
            heap[hole] = heap[first]
            hole = first
        }
        heap[hole] = item
    }
}
