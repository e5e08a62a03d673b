/// Requests added from observers' delivery blocks (see `DeliveryScope`), held out of the waiting
/// lists until the block that added them ends, so that none starts before the observer that
/// added it has returned (it may still cancel it, or add others before it); the watchdog
/// releases the requests of a block that does not end within the patience.
///
/// A held request is in no waiting list, so no run of the start loop can take it, whichever
/// thread runs one: an earlier version left only the *start* to the block's end, and a run
/// already under way on the start queue took the observer's request at once.
///
/// Invariants, checked by `DeferredStartTests`:
/// - a held request is released exactly once: by its block when it ends (`release(scope:)`) or
///   by the watchdog (`releaseOverdue`), never both;
/// - the watchdog releases a block's requests only once they have waited for the whole patience;
/// - a block's requests are released in the order they were added.
struct DeferredStart {
    /// The requests one block holds.
    private struct Hold {
        let scope: ObjectIdentifier
        /// When the block held its first request (uptime, nanoseconds).
        let since: UInt64
        var requests: [Held]
    }

    /// A held request, with the priority whose waiting list it joins when released.
    struct Held: Equatable {
        let id: RequestID
        let priority: RequestPriority
    }

    /// Usually one block at a time; more when observers run on several threads at once.
    private var holds: [Hold] = []

    /// How many requests are held.
    var count: Int { holds.reduce(0) { $0 + $1.requests.count } }

    /// Holds a request added from the block `scope`. Returns true when it is the block's first:
    /// the block must release its requests when it ends, and the watchdog must look at `now`
    /// plus the patience.
    mutating func hold(_ id: RequestID, priority: RequestPriority, scope: ObjectIdentifier, now: UInt64) -> Bool {
        let request = Held(id: id, priority: priority)
        if let index = holds.firstIndex(where: { $0.scope == scope }) {
            holds[index].requests.append(request)
            return false
        }
        holds.append(Hold(scope: scope, since: now, requests: [request]))
        return true
    }

    /// The requests the block `scope` holds, taken when it ends; empty when the watchdog took
    /// them first.
    mutating func release(scope: ObjectIdentifier) -> [Held] {
        guard let index = holds.firstIndex(where: { $0.scope == scope }) else { return [] }
        return holds.remove(at: index).requests
    }

    /// The watchdog's look: takes the requests of blocks that have held them for the whole
    /// patience, and says when to look again (nil when nothing is held any more).
    mutating func releaseOverdue(now: UInt64, patience: UInt64) -> (released: [Held], lookAgainAt: UInt64?) {
        var released: [Held] = []
        holds.removeAll { hold in
            guard now >= hold.since + patience else { return false }
            released += hold.requests
            return true
        }
        return (released, holds.map { $0.since + patience }.min())
    }
}
