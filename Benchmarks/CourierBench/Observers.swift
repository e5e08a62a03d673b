import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// Observer delivery with many observers of other response types, without network: requests
// with a relative path on a queue without a base URL end at once with `invalidURL`, and that
// result goes through the same claim-and-deliver path as a response from the network.

/// The response type whose deliveries are timed.
struct ProbeResponse: Response {
    init(body: ResponseData, head: ResponseHead) {}
}

struct ProbeRequest: Request {
    typealias ResponseType = ProbeResponse
    var path: String { "/probe" }
    var method: HTTPMethod { .get }
}

/// Distinct response types made at run time: `Zero<One<Zero<…<Leaf>>>>` for each path through a
/// binary tree, so depth 10 gives 1,024 distinct metatypes.
struct Leaf: Response {
    init(body: ResponseData, head: ResponseHead) {}
}

struct Zero<Inner: Response>: Response {
    init(body: ResponseData, head: ResponseHead) {}
}

struct One<Inner: Response>: Response {
    init(body: ResponseData, head: ResponseHead) {}
}

final class ObserverOwner: Sendable {}

/// Registers `perType` observers, each with its own owner, for each of `types` distinct types.
private final class OtherTypeObservers {
    private(set) var owners: [ObserverOwner] = []
    private(set) var types = Set<ObjectIdentifier>()
    private var remaining: Int
    private let perType: Int
    private let queue: RequestQueue

    init(queue: RequestQueue, types: Int, perType: Int) {
        self.queue = queue
        remaining = types
        self.perType = perType
        owners.reserveCapacity(types * perType)
        var depth = 0
        while 1 << depth < types { depth += 1 }
        register(Leaf.self, depth: depth)
    }

    private func register<T: Response>(_ type: T.Type, depth: Int) {
        guard remaining > 0 else { return }
        guard depth > 0 else {
            types.insert(ObjectIdentifier(type))
            for _ in 0..<perType {
                let owner = ObserverOwner()
                owners.append(owner)
                queue.addObserver(ownedBy: owner) { (_: Result<T, RequestError>) in
                    fatalError("an observer of \(T.self) got a result; only ProbeResponse is requested")
                }
            }
            remaining -= 1
            return
        }
        register(Zero<T>.self, depth: depth - 1)
        register(One<T>.self, depth: depth - 1)
    }
}

/// Times `count` requests through `add` + an ID observer; returns microseconds per request.
private func timeDeliveries(queue: RequestQueue, count: Int, unexpected: Counter) -> Double {
    let remaining = Counter(count)
    let done = DispatchSemaphore(value: 0)
    let start = now()
    for _ in 0..<count {
        let id = queue.add(ProbeRequest())
        queue.addObserver(for: id) { (result: Result<ProbeResponse, RequestError>) in
            if case .failure(.invalidURL) = result {} else { unexpected.add(1) }
            if remaining.add(-1) == 0 { done.signal() }
        }
    }
    if done.wait(timeout: .now() + 120) == .timedOut {
        unexpected.add(remaining.value)
    }
    return (now() - start) * 1e6 / Double(count)
}

func observerDeliveryFigure(_ bench: Bench) -> [Row] {
    let count = bench.options.count(20_000, quick: 5_000)
    let typeCount = 1_000
    let observerCount = 100_000

    func makeQueue() -> RequestQueue {
        var configuration = RequestQueueConfiguration.withoutCaching
        configuration.callbackQueue = DispatchQueue(label: "CourierBench.observers")
        configuration.maxConcurrentRequests = 16
        return RequestQueue(configuration: configuration, baseURL: nil)
    }
    let plain = makeQueue()
    let loaded = makeQueue()
    // Both queues have one live observer of the probed type, so both deliver by type too.
    let probeOwner = ObserverOwner()
    let typeDeliveries = Counter()
    for queue in [plain, loaded] {
        queue.addObserver(ownedBy: probeOwner) { (_: Result<ProbeResponse, RequestError>) in
            typeDeliveries.add(1)
        }
    }
    let registrationStart = now()
    let others = OtherTypeObservers(queue: loaded, types: typeCount, perType: observerCount / typeCount)
    let registrationSeconds = now() - registrationStart
    precondition(others.types.count == typeCount, "expected \(typeCount) distinct types, got \(others.types.count)")
    log("    registered \(grouped(others.owners.count)) observers of \(others.types.count) types in \(format(registrationSeconds * 1e3)) ms")

    let unexpected = Counter()
    let results = interleaved(rounds: bench.rounds, [
        Contender("no other observers", warmUp: { _ = timeDeliveries(queue: plain, count: 1_000, unexpected: unexpected) },
                  round: { timeDeliveries(queue: plain, count: count, unexpected: unexpected) }),
        Contender("100,000 observers of 1,000 other types",
                  warmUp: { _ = timeDeliveries(queue: loaded, count: 1_000, unexpected: unexpected) },
                  round: { timeDeliveries(queue: loaded, count: count, unexpected: unexpected) }),
    ])
    let expectedTypeDeliveries = 2 * (1_000 + count * bench.rounds)
    var errors = unexpected.value
    // A result reaches its ID observers before its type observers: let the callback queues drain.
    for queue in [plain, loaded] { queue.configuration.callbackQueue.sync {} }
    let typed = typeDeliveries.value
    if typed != expectedTypeDeliveries { errors += abs(expectedTypeDeliveries - typed) }
    withExtendedLifetime((others, probeOwner)) {}
    return [Row(figure: "Observer delivery, add + ID observer + 1 type observer, no network (\(grouped(count)) per round)",
                variant: "100,000 observers (own owners) of 1,000 other types", unit: "µs/request", courier: results[1],
                baselineName: "same queue setup, no other observers", baseline: results[0], target: .ratioAtMost(1.1),
                errors: errors,
                note: "registering the 100,000 observers took \(format(registrationSeconds * 1e3)) ms"
                    + (errors > 0 ? "; \(errors) unexpected results or missing type deliveries" : ""))]
}
