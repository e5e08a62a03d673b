import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// MARK: - Durable requests

/// A durable request for the benchmark: a GET of the small JSON (a durable request may have any
/// method; the file server answers GETs), decoded as `Item`.
private struct DurableItemRequest: Request {
    typealias ResponseType = Item
    var path: String { "/small.json" }
    var method: HTTPMethod { .get }
}

/// What a durable `add` costs (journaled and flushed to stable storage before it returns), from
/// one thread and from 16 at once (whose adds share commits and flushes), and what durability
/// configured on a queue costs its ordinary requests.
func durableFigure(_ bench: Bench) -> [Row] {
    let count = bench.options.count(400, quick: 64)
    let folder = URL(fileURLWithPath: ".build/bench/durable-\(UUID().uuidString)", isDirectory: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    var configuration = CourierTransport.curl.configuration(label: "CourierBench.durable", maxConcurrentRequests: 16)
    configuration.durability = Durability(folder: folder, responseTypes: [Item.self],
                                          limits: Durability.Limits(maximumPendingRequests: 100_000, maximumBytes: 1 << 30))
    let durable: RequestQueue
    do {
        durable = try RequestQueue.open(configuration: configuration, baseURL: bench.baseURL)
    } catch {
        fail("the durable queue did not open: \(error)")
    }
    let plain = RequestQueue(configuration: CourierTransport.curl.configuration(label: "CourierBench.durable.plain",
                                                                                 maxConcurrentRequests: 16),
                             baseURL: bench.baseURL)

    let adds = LatencyTally(count: count)
    let one = "durable add, one thread"
    let sixteen = "durable adds from 16 threads at once"
    let addResults = measure(bench, [
        adds.contender(one) { count in durableAddRound(durable, count: count, threads: 1) },
        adds.contender(sixteen) { count in durableAddRound(durable, count: count, threads: 16) },
    ])
    let sends = LatencyTally(count: bench.options.count(2_000, quick: 200))
    let withJournal = "send on a queue with durability configured"
    let without = "send on a queue without"
    let sendResults = measure(bench, [
        sends.contender(without) { count in sendRound(plain, count: count, request: SmallEmptyRequest()) },
        sends.contender(withJournal) { count in sendRound(durable, count: count, request: SmallEmptyRequest()) },
    ])

    let figure = "Durable requests through the curl transport (\(grouped(count)) adds per round)"
    let addNote = "an add prepares and encodes the request and commits it, with its Idempotency-Key, to the SQLite "
        + "journal (WAL, synchronous=FULL) before it returns; the requests are then sent to nginx and their results "
        + "journaled, and each round waits for them before the next"
    return [
        Row(figure: figure, variant: "time per add: \(one)", unit: "µs", courier: addResults[one], target: .none,
            errors: adds.errors, note: "value per round: the median add; " + addNote + adds.errorNote),
        Row(figure: figure, variant: "time per add: \(sixteen) (concurrent adds share a commit and its flush)", unit: "µs",
            courier: addResults[sixteen], baselineName: one, baseline: addResults[one], target: .ratioAtMost(0.5),
            errors: adds.errors, note: "value per round: the round's wall time over its adds; " + addNote),
        Row(figure: figure, variant: "time to the result: \(withJournal) (an ordinary request, small JSON, one at a time)",
            unit: "µs", courier: sendResults[withJournal], baselineName: without, baseline: sendResults[without],
            target: .ratioAtMost(1.05), errors: sends.errors,
            note: "what a journal on the queue costs the requests that are not durable: a nil check" + sends.errorNote),
    ]
}

/// `count` durable adds, from `threads` threads at once; waits for every request's result
/// afterwards (not timed). One thread: each add's time; several: the wall time over the adds.
private func durableAddRound(_ queue: RequestQueue, count: Int, threads: Int) -> LatencyRound {
    var round = LatencyRound()
    let ids = Mutex<[RequestID]>([])
    let failures = Mutex<[String]>([])
    let times = Mutex<[Double]>([])
    let perThread = max(1, count / threads)
    let start = now()
    // Threads of their own, not `concurrentPerform`, which runs as many at once as there are
    // cores: an add blocks in its commit, and 16 adds at once is the point.
    let adders = DispatchGroup()
    for _ in 0..<threads {
        adders.enter()
        Thread {
            defer { adders.leave() }
            for _ in 0..<perThread {
                let begin = now()
                do {
                    let id = try queue.addDurably(DurableItemRequest())
                    let took = now() - begin
                    ids.withLock { $0.append(id) }
                    if threads == 1 { times.withLock { $0.append(took) } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }.start()
    }
    adders.wait()
    let wall = now() - start
    round.times = threads == 1 ? times.withLock { $0 } : [wall / Double(perThread * threads)]
    // Every request to its end before the next round, so that rounds do not overlap.
    let ended = DispatchGroup()
    let waiting = Mutex<Set<RequestID>>(Set(ids.withLock { $0 }))
    for id in ids.withLock({ $0 }) {
        ended.enter()
        queue.addObserver(for: id) { (result: Result<Item, RequestError>) in
            if case .failure(let error) = result { failures.withLock { $0.append("\(error)") } }
            waiting.withLock { _ = $0.remove(id) }
            ended.leave()
        }
    }
    if ended.wait(timeout: .now() + 120) == .timedOut {
        round.failed("\(waiting.withLock { $0.count }) of \(ids.withLock { $0.count }) results did not come within 120 s")
    }
    for failure in failures.withLock({ $0 }) { round.failed(failure) }
    return round
}
