import Foundation

/// Groups concurrent writes into one transaction: each caller queues its work and waits; one
/// caller at a time is the committer and commits everything queued so far in one transaction
/// (one flush to disk), the others' work riding along. A caller returns once its own work was
/// committed (or failed), so durability per caller is that of a transaction of its own, at the
/// cost of one flush per group instead of one per write.
///
/// `@unchecked Sendable`: every stored variable is read and written only while `condition` is
/// locked (a condition variable needs its own mutex, so `Locked` cannot guard them).
final class GroupCommit<Work: Sendable, Outcome: Sendable>: @unchecked Sendable {
    /// Commits one group: one result per work item, in order.
    typealias Commit = @Sendable ([Work]) -> [Result<Outcome, JournalError>]

    private let condition = NSCondition()
    private var queued: [(ticket: Int, work: Work)] = []
    private var finished: [Int: Result<Outcome, JournalError>] = [:]
    private var committing = false
    private var nextTicket = 0
    private let commit: Commit
    /// Test seams: told how many items wait after each one queues (with the lock held), and the
    /// size of each group before it is committed (without it).
    private let didQueue: (@Sendable (Int) -> Void)?
    private let willCommit: (@Sendable (Int) -> Void)?

    init(didQueue: (@Sendable (Int) -> Void)? = nil, willCommit: (@Sendable (Int) -> Void)? = nil, commit: @escaping Commit) {
        self.commit = commit
        self.didQueue = didQueue
        self.willCommit = willCommit
    }

    /// Queues `work` and returns once it was committed, as part of a group.
    func submit(_ work: Work) -> Result<Outcome, JournalError> {
        submit(contentsOf: [work])[0]
    }

    /// Queues several items and returns once all were committed, in one group or more; their
    /// results in their order. For a caller with a batch of its own (notes of results seen,
    /// which come in bursts): submitted one by one from one thread, each would wait for a flush.
    func submit(contentsOf works: [Work]) -> [Result<Outcome, JournalError>] {
        condition.lock()
        defer { condition.unlock() }
        var tickets: [Int] = []
        tickets.reserveCapacity(works.count)
        for work in works {
            tickets.append(nextTicket)
            queued.append((nextTicket, work))
            nextTicket += 1
            didQueue?(queued.count)
        }
        while true {
            if tickets.allSatisfy({ finished[$0] != nil }) {
                return tickets.map { finished.removeValue(forKey: $0)! }
            }
            if committing {
                condition.wait()
                continue
            }
            // This caller commits everything queued, its own work among it.
            committing = true
            let group = queued
            queued.removeAll(keepingCapacity: true)
            condition.unlock()
            willCommit?(group.count)
            let results = commit(group.map(\.work))
            precondition(results.count == group.count, "a group commit must give one result per item")
            condition.lock()
            for (item, result) in zip(group, results) { finished[item.ticket] = result }
            committing = false
            condition.broadcast()
        }
    }
}
