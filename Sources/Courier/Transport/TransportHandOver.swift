import Dispatch

/// The moments when a transport of Courier's own hands buffered results over on its own thread,
/// where the queue may finish a request at once instead of moving it to its work queue, and the
/// observers' work that those requests send to callback queues, gathered into one block per queue.
///
/// Moving a result to another thread wakes that thread: on a 2-core Linux VM each wake-up cost a
/// request about 30 µs of latency and several microseconds of CPU (Benchmarks/ANALYSIS.md, #20),
/// and one at a time a request made three of them. The curl transport's loop thread already
/// holds the result; when nothing but Courier's own code and the response's decoding would run
/// (no delegates, no authenticator, a small body: the queue decides, `AttemptStage`), finishing
/// there saves a hop. A completion called outside a hand-over (a transport of the user's, a
/// cache hit answered on the caller's thread) is moved to the work queue as before.
///
/// Transfers that end together (one pass of the curl loop) are handed over in one hand-over,
/// and what they send to one callback queue goes there as one block, in order: one wake-up of
/// that queue's thread rather than one per result.
final class TransportHandOver {
    private var deliveries: [(queue: DispatchQueue, work: @Sendable () -> Void)] = []
    /// Work for the end of the hand-over, on this thread.
    private var atEnd: [() -> Void] = []
    /// Completions to call, in order, once the work before them is done (``complete(_:with:)``).
    private var completions: [PendingCompletion] = []

    /// A completion with its result. (A struct rather than a tuple: an array of tuples holds a
    /// closure behind a thunk made for each one.) The result is taken out when the completion
    /// is called: read in place, it would be copied.
    private struct PendingCompletion {
        let completion: @Sendable (Result<TransportResponse, RequestError>) -> Void
        var result: Result<TransportResponse, RequestError>?
    }

    private init() {
        // Room for a pass's usual few at once, rather than growing one at a time.
        completions.reserveCapacity(8)
    }

    /// Runs `body`, which calls completions, as a hand-over on this thread; a hand-over begun
    /// inside another joins it. The callback queues' work goes out when the outermost one ends.
    static func run(_ body: () -> Void) {
        guard slot.current == nil else { return body() }
        let handOver = TransportHandOver()
        slot.with(handOver) {
            body()
            handOver.callCompletions()
        }
        handOver.flush()
    }

    /// Calls `completion` with `result` once the work handed over before it is done, if this
    /// thread is handing results over; otherwise at once.
    ///
    /// The transfers that end in one pass of the curl loop are made into responses first, then
    /// completed in order: each stage's code runs for all of them in a row, while it is in the
    /// processor's instruction cache, rather than every stage once per response in turn.
    static func complete(_ result: consuming Result<TransportResponse, RequestError>,
                         with completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) {
        guard let current = slot.current else { return completion(result) }
        current.completions.append(PendingCompletion(completion: completion, result: result))
    }

    /// The completions, in order, then those they add, in order. Each batch is taken out of
    /// the hand-over first: a completion may add more while it runs.
    private func callCompletions() {
        while !completions.isEmpty {
            var batch = completions
            completions.removeAll(keepingCapacity: true)
            for index in batch.indices {
                // (Always there: each result is taken here, once.)
                guard let result = batch[index].result.take() else { continue }
                batch[index].completion(result)
            }
        }
    }

    /// Whether the current thread is handing results over.
    static var isActive: Bool {
        slot.current != nil
    }

    /// Sends `work` to `queue`: at the end of the hand-over running on this thread, if one is,
    /// together with the rest of its work for `queue`; otherwise at once.
    static func async(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        guard let current = slot.current else { return queue.async(execute: work) }
        current.deliveries.append((queue, work))
    }

    /// Runs `work` at the end of the hand-over running on this thread, if one is; otherwise now.
    ///
    /// For `send`'s continuations: resumed together after the pass rather than one by one
    /// between the other requests' decoding, the cooperative pool is poked awake fewer times
    /// (at 16 in flight a quarter fewer context switches and 2–6 % less CPU a request).
    static func atEnd(_ work: @escaping () -> Void) {
        guard let current = slot.current else { return work() }
        current.atEnd.append(work)
    }

    /// One block per queue, each with its work in the order it came.
    private func flush() {
        for work in atEnd { work() }
        guard deliveries.count > 1 else {
            if let only = deliveries.first { only.queue.async(execute: only.work) }
            return
        }
        var batches: [(queue: DispatchQueue, work: [@Sendable () -> Void])] = []
        for delivery in deliveries {
            if let index = batches.firstIndex(where: { $0.queue === delivery.queue }) {
                batches[index].work.append(delivery.work)
            } else {
                batches.append((delivery.queue, [delivery.work]))
            }
        }
        for batch in batches {
            let work = batch.work
            batch.queue.async { for item in work { item() } }
        }
    }

    private static let slot = ThreadSlot<TransportHandOver>()
}
