/// Which waiting request starts next, and how many run at once.
///
/// Invariants, kept by the methods below and checked by `AdmissionTests`:
/// - at most `limit` requests hold a slot (`inFlight <= limit`), and a slot is given back once;
/// - waiting requests start highest priority first, and in the order they were added within a
///   priority, except that a request coming back from a pause goes first in line;
/// - at most one run of the start loop is claimed at a time: `claimRun()` is true for one caller
///   until that run ends (`next` returns `nil`), so bursts of `add` schedule one run, not one each;
/// - a run is claimed only when a slot is free and something waits, so a finished request does not
///   wake a thread for nothing.
struct Admission {
    let limit: Int
    /// One first-in-first-out list per priority, lowest priority first.
    private var waiting = [WaitingList](repeating: WaitingList(), count: RequestPriority.allCases.count)
    private(set) var inFlight = 0
    private var runClaimed = false

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    var waitingCount: Int { waiting.reduce(0) { $0 + $1.count } }

    /// Puts a new request at the end of its priority's line.
    mutating func append(_ id: RequestID, priority: RequestPriority) {
        waiting[priority.rawValue].append(id)
    }

    /// Puts a request first in its priority's line (one coming back from a pause).
    mutating func prepend(_ id: RequestID, priority: RequestPriority) {
        waiting[priority.rawValue].prepend(id)
    }

    /// Claims the next run of the start loop; false when one is already due, no slot is free, or
    /// nothing waits.
    mutating func claimRun() -> Bool {
        guard inFlight < limit, !runClaimed, waiting.contains(where: { $0.count > 0 }) else { return false }
        runClaimed = true
        return true
    }

    /// What the start loop should do with a waiting request.
    enum Verdict {
        /// Start it now.
        case start
        /// It ended while waiting: drop it from the line.
        case skip
        /// It cannot start on this thread: it stays first in line and the run moves elsewhere.
        case handOff
    }

    enum Next: Equatable {
        /// Start this request; it holds a slot now.
        case start(RequestID)
        /// The run must go on elsewhere; it is still claimed.
        case handOff
    }

    /// The next request of the claimed run, highest priority first, taking a slot for it.
    /// Returns `nil`, ending the run, when no slot is free or nothing startable waits.
    mutating func next(_ verdict: (RequestID) -> Verdict) -> Next? {
        guard inFlight < limit else {
            runClaimed = false
            return nil
        }
        for priority in RequestPriority.allCases.reversed() {
            while let id = waiting[priority.rawValue].popFirst() {
                switch verdict(id) {
                case .skip:
                    continue
                case .handOff:
                    waiting[priority.rawValue].prepend(id)
                    return .handOff
                case .start:
                    inFlight += 1
                    return .start(id)
                }
            }
        }
        runClaimed = false
        return nil
    }

    /// Gives a slot back.
    mutating func releaseSlot() {
        precondition(inFlight > 0, "a slot was given back twice")
        inFlight -= 1
    }
}

/// The waiting requests of one priority, first in first out, with O(1) appends and removals
/// from the front.
struct WaitingList {
    private var ids: [RequestID] = []
    private var head = 0

    var count: Int { ids.count - head }

    mutating func append(_ id: RequestID) {
        ids.append(id)
    }

    /// Puts an ID first.
    mutating func prepend(_ id: RequestID) {
        if head > 0 {
            head -= 1
            ids[head] = id
        } else {
            ids.insert(id, at: 0)
        }
    }

    mutating func popFirst() -> RequestID? {
        guard head < ids.count else { return nil }
        let id = ids[head]
        head += 1
        if head == ids.count {
            ids.removeAll(keepingCapacity: ids.count < 4096)
            head = 0
        } else if head > 4096, head * 2 > ids.count {
            // Drop the consumed front once it dominates, keeping pops amortised O(1).
            ids.removeFirst(head)
            head = 0
        }
        return id
    }
}
