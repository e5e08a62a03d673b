/// The transfers that identical requests share, and who waits for each: the state of
/// ``SharingTransport``, kept apart so that its invariants can be tested without a transport.
///
/// Invariants, checked by `SharedTransferTableTests`:
/// - a key names at most one open transfer; a request with that key joins it;
/// - a transfer leaves the table before anyone hears how it ended (it finished, or every
///   participant left), so nobody joins a transfer that will not answer them;
/// - every participant is answered exactly once: by the transfer's result, or (when it leaves)
///   by the caller, with the waiter ``leave(_:)`` hands back;
/// - the transfer's task is started once, by the first participant that starts (whoever that is:
///   the one that made it may be cancelled before it starts), and cancelled only when the last
///   participant leaves before the end.
struct SharedTransferTable<Key: Hashable, Waiter, Task> {
    /// A participant's place: its transfer and its number in it.
    struct Ticket: Hashable {
        let transfer: Int
        let participant: Int
    }

    private struct Transfer {
        let key: Key
        var waiters: [Int: Waiter] = [:]
        var nextParticipant = 0
        var task: Task?
        var startRequested = false
        var started = false
        /// Every participant left before it ended: its task must be cancelled (now, or as soon as it is set).
        var abandoned = false
    }

    private var open: [Key: Int] = [:]
    private var transfers: [Int: Transfer] = [:]
    private var nextTransfer = 0

    /// Open transfers (for tests and bookkeeping).
    var count: Int { transfers.count }

    /// Participants of all open transfers (for tests and bookkeeping).
    var participantCount: Int { transfers.values.reduce(0) { $0 + $1.waiters.count } }

    /// Participants of the transfer a ticket belongs to (for tests and bookkeeping).
    func participants(of transfer: Int) -> Int {
        transfers[transfer]?.waiters.count ?? 0
    }

    /// Joins the open transfer with `key`, or opens one. The one who opens it (`isFirst`) must
    /// make its task and hand it over with ``setTask(_:for:)``.
    mutating func join(_ key: Key, waiter: Waiter) -> (ticket: Ticket, isFirst: Bool) {
        if let id = open[key], var transfer = transfers[id] {
            let participant = transfer.nextParticipant
            transfer.nextParticipant += 1
            transfer.waiters[participant] = waiter
            transfers[id] = transfer
            return (Ticket(transfer: id, participant: participant), false)
        }
        let id = nextTransfer
        nextTransfer &+= 1
        var transfer = Transfer(key: key)
        transfer.waiters[0] = waiter
        transfer.nextParticipant = 1
        transfers[id] = transfer
        open[key] = id
        return (Ticket(transfer: id, participant: 0), true)
    }

    enum TaskAction {
        /// Keep it until someone starts it.
        case hold
        /// Start it now: a participant asked before it existed.
        case start
        /// Cancel it: every participant left before it existed.
        case cancel
    }

    /// Hands over the task of a transfer just opened.
    mutating func setTask(_ task: Task, for transfer: Int) -> TaskAction {
        guard var entry = transfers[transfer] else { return .cancel }
        if entry.abandoned {
            transfers[transfer] = nil
            return .cancel
        }
        entry.task = task
        let action: TaskAction = entry.startRequested && !entry.started ? .start : .hold
        if action == .start { entry.started = true }
        transfers[transfer] = entry
        return action
    }

    /// A participant starts: returns the task to start when this is the transfer's first start
    /// and its task exists (otherwise it starts when it is set).
    mutating func start(_ ticket: Ticket) -> Task? {
        guard var entry = transfers[ticket.transfer], entry.waiters[ticket.participant] != nil,
              !entry.started else { return nil }
        entry.startRequested = true
        guard let task = entry.task else {
            transfers[ticket.transfer] = entry
            return nil
        }
        entry.started = true
        transfers[ticket.transfer] = entry
        return task
    }

    /// A participant leaves (it was cancelled). Returns its waiter, to be answered by the caller,
    /// and the transfer's task when it was the last participant (to be cancelled); nil waiter when
    /// it had been answered already.
    mutating func leave(_ ticket: Ticket) -> (waiter: Waiter?, cancel: Task?) {
        guard var entry = transfers[ticket.transfer],
              let waiter = entry.waiters.removeValue(forKey: ticket.participant) else { return (nil, nil) }
        guard entry.waiters.isEmpty else {
            transfers[ticket.transfer] = entry
            return (waiter, nil)
        }
        // The last one: nobody may join it any more, and its task goes.
        closeKey(of: ticket.transfer, key: entry.key)
        if let task = entry.task {
            transfers[ticket.transfer] = nil
            return (waiter, task)
        }
        entry.abandoned = true
        transfers[ticket.transfer] = entry
        return (waiter, nil)
    }

    /// The transfer ended: returns the waiters still in it, to be answered with its result. The
    /// transfer is gone from the table afterwards.
    mutating func finish(_ transfer: Int) -> [Waiter] {
        guard let entry = transfers.removeValue(forKey: transfer) else { return [] }
        closeKey(of: transfer, key: entry.key)
        return entry.waiters.sorted { $0.key < $1.key }.map(\.value)
    }

    /// The waiters of a transfer, in the order they joined, without removing them.
    func waiters(of transfer: Int) -> [Waiter] {
        guard let entry = transfers[transfer] else { return [] }
        return entry.waiters.sorted { $0.key < $1.key }.map(\.value)
    }

    /// The task of a participant's transfer, while it is open (for progress).
    func task(of ticket: Ticket) -> Task? {
        transfers[ticket.transfer]?.task
    }

    private mutating func closeKey(of transfer: Int, key: Key) {
        if open[key] == transfer { open[key] = nil }
    }
}
