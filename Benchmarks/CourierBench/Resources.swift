import Courier
import CourierBenchHeap
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Observation

// MARK: - Observable resources

/// nginx's small JSON, fresh for an hour (`expires 1h`), decoded.
private struct CachedItemRequest: Request {
    typealias ResponseType = Item
    var path: String { "/cached.json" }
    var method: HTTPMethod { .get }
}

/// The small JSON at a URL of its own (nginx ignores the query), decoded.
private struct ItemRequest: Request {
    typealias ResponseType = Item
    let number: Int
    var path: String { "/small.json?n=\(number)" }
    var method: HTTPMethod { .get }
}

/// What a screen shows and how it starts a load: a resource itself, or a plain `@Observable`
/// model that an unobserved resource's loads set (the Observation runtime's own cost, for
/// comparison: the same reads, tracked the same way, and one change a load).
private struct Screen: Sendable {
    /// What a screen reads of it, inside `withObservationTracking`: the phase, the value's time,
    /// whether it loads.
    let show: @Sendable () -> Void
    /// The value's time.
    let updatedAt: @Sendable () -> Date?
    /// The value's time, whether a load runs, and why the last one failed.
    let look: @Sendable () -> (updatedAt: Date?, isLoading: Bool, failure: String?)
    /// Starts a load.
    let load: @Sendable () -> Void

    init<R: Request>(_ resource: Resource<R>) {
        show = {
            _ = resource.phase
            _ = resource.updatedAt
            _ = resource.isLoading
        }
        updatedAt = { resource.updatedAt }
        look = { (resource.updatedAt, resource.isLoading, resource.error.map { "\($0)" }) }
        load = { resource.load() }
    }

    /// `model`, set once a load from `resource` (unobserved) has ended: a load the cache answers
    /// has ended when `load()` returns, on the context.
    init<R: Request>(_ model: ScreenModel, loadingFrom resource: Resource<R>) {
        show = {
            _ = model.phase
            _ = model.updatedAt
            _ = model.isLoading
        }
        updatedAt = { model.updatedAt }
        look = { (model.updatedAt, model.isLoading, model.failure) }
        load = {
            resource.load()
            if resource.isLoading {
                model.failure = "the cache did not answer the load at once"
            } else if let error = resource.error {
                model.failure = "\(error)"
            } else {
                model.updatedAt = resource.updatedAt
            }
        }
    }
}

/// A view model as an app writes it without ``Resource``: what a screen shows, `@Observable`.
/// Touched only on the benchmark's context queue, which is what makes `@unchecked` sound.
@Observable final class ScreenModel: @unchecked Sendable {
    var updatedAt: Date?
    var failure: String?
    var isLoading = false
    var phase: Int { updatedAt == nil ? 0 : 1 }
}

/// `count` loads one after another on `context`, as a screen makes them: `load` starts one there
/// and calls `ended` there once it has seen it end (with why it failed, if it did), which takes
/// its time since `load` was called and starts the next.
private func contextRound(on context: DispatchQueue, count: Int,
                          _ load: @escaping @Sendable (_ ended: @escaping @Sendable (_ failure: String?) -> Void) -> Void) -> LatencyRound {
    blockingAwait {
        await withCheckedContinuation { (continuation: CheckedContinuation<LatencyRound, Never>) in
            let round = ContextOnly(LatencyRound())
            @Sendable func next(_ remaining: Int) {
                guard remaining > 0 else { return continuation.resume(returning: round.value) }
                let start = now()
                load { failure in
                    if let failure { round.value.failed(failure) } else { round.value.times.append(now() - start) }
                    next(remaining - 1)
                }
            }
            context.async { next(count) }
        }
    }
}

/// Loads of `screen`, each one's end seen by an observer (`withObservationTracking` of what a
/// screen reads) told of the change, which looks on the next turn of the context: a new value,
/// not loading.
private func observedRound(_ screen: Screen, on context: DispatchQueue, count: Int) -> LatencyRound {
    contextRound(on: context, count: count) { ended in
        let shown = screen.updatedAt()
        @Sendable func track() {
            withObservationTracking {
                screen.show()
            } onChange: {
                // Told of the change: look once it is over.
                context.async {
                    let (updatedAt, isLoading, failure) = screen.look()
                    guard !isLoading, updatedAt != shown || failure != nil else { return track() }
                    ended(failure)
                }
            }
        }
        track()
        screen.load()
    }
}

/// Loads of `resource` with no observer, each one's end found by the context after it: at once
/// when the cache answers (a load that goes to the network is looked at again a millisecond later).
private func unobservedRound<R: Request>(_ resource: Resource<R>, on context: DispatchQueue, count: Int) -> LatencyRound {
    contextRound(on: context, count: count) { ended in
        let shown = resource.updatedAt
        @Sendable func look() {
            guard !resource.isLoading, resource.updatedAt != shown || resource.error != nil else {
                return context.asyncAfter(deadline: .now() + .milliseconds(1), execute: look)
            }
            ended(resource.error.map { "\($0)" })
        }
        resource.load()
        context.async(execute: look)
    }
}

/// A value only ever touched on one serial queue (the resource's context), which is what makes
/// the `@unchecked Sendable` sound.
private final class ContextOnly<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// What a resource adds to a request the cache answers (an observed load against a `send`), and
/// what 10,000 live resources of 1,000 URLs take (in a child process of their own).
func resourceFigure(_ bench: Bench) -> [Row] {
    let count = bench.options.count(5_000, quick: 500)
    let tally = LatencyTally(count: count)
    var configuration = CourierTransport.curl.configuration(label: "CourierBench.resources", maxConcurrentRequests: 1)
    configuration.cache = ResponseCache()
    let queue = RequestQueue(configuration: configuration, baseURL: bench.baseURL)
    let context = DispatchQueue(label: "CourierBench.resources.context")
    let resource = queue.resource(CachedItemRequest(), options: ResourceOptions(updatesOn: .queue(context)))
    let model = ScreenModel()

    let send = "send, answered by a fresh hit from memory"
    let observed = "observed resource's load, answered by a fresh hit from memory"
    let unobserved = "the resource's load with no observer"
    let plain = "a plain @Observable model observed the same way, set by each load with no observer"
    let results = measure(bench, [
        tally.contender(send) { count in sendRound(queue, count: count, request: CachedItemRequest()) },
        tally.contender(observed) { count in observedRound(Screen(resource), on: context, count: count) },
        tally.contender(unobserved) { count in unobservedRound(resource, on: context, count: count) },
        tally.contender(plain) { count in observedRound(Screen(model, loadingFrom: resource), on: context, count: count) },
    ])
    let figure = "Observable resources, the small JSON decoded, through the curl transport (\(grouped(count)) per round)"
    var rows = [
        Row(figure: figure, variant: "time to the result: \(observed)", unit: "µs", courier: results[observed],
            baselineName: send, baseline: results[send], target: .ratioAtMost(1.2), errors: tally.errors,
            note: "value per round: the median load, from load() on the resource's queue until an observer there "
                + "(withObservationTracking of the phase, the value's time and isLoading) sees a new value, not loading, and starts the next; a load the cache answers at once is one change; send: one task awaiting each"
                + tally.errorNote),
        Row(figure: figure, variant: "time to the result: \(unobserved)", unit: "µs", courier: results[unobserved],
            baselineName: send, baseline: results[send], target: .none, errors: tally.errors,
            note: "what the resource itself adds: from load() until the resource's queue, after it, finds a new value, not loading"),
        Row(figure: figure, variant: "time to the result: \(observed)", unit: "µs", courier: results[observed],
            baselineName: plain, baseline: results[plain], target: .none, errors: tally.errors,
            note: "what observing a resource costs beyond observing any @Observable type: the model's observer reads the "
                + "same three properties and is told of one change a load, so the two differ by the resource's own work"),
    ]

    let resources = 10_000
    for distinct in [false, true] {
        var growths: [Double] = []
        var heaps: [Double] = []
        var heapsRead: [Double] = []
        var childErrors = 0
        var firstChildError: String?
        for _ in 0..<min(3, bench.options.rounds) {
            guard let report = spawnChild([distinct ? "resources-memory" : "resources-memory-shared", "\(resources)",
                                           bench.baseURL.absoluteString]) else {
                childErrors += 1
                continue
            }
            childErrors += report.errors
            firstChildError = firstChildError ?? report.firstError
            growths.append(report.growth / 1_048_576)
            if let before = report.heapBefore, let after = report.heapAfter, after > 0 {
                heaps.append(Double(after - before) / 1_048_576)
            }
            if let before = report.heapBefore, let after = report.heapAfterReading, after > 0 {
                heapsRead.append(Double(after - before) / 1_048_576)
            }
        }
        let which = distinct ? "\(grouped(resources)) live resources of 1,000 URLs (10 stale times per URL), each loaded"
            : "\(grouped(resources)) resources asked for, of 1,000 URLs (10 screens per URL, sharing 1,000), each loaded"
        let childNote = "10 MB = 9.54 MiB; a child process per round; the small JSON decoded; the cache off; glibc's mallinfo2 (in use, "
            + "mmapped included) before and after" + (firstChildError.map { "; first error: \($0)" } ?? "")
        rows.append(Row(figure: figure, variant: "heap in use by \(which)", unit: "MiB",
                        courier: heaps.isEmpty ? nil : Summary(heaps), target: .valueAtMost(10 / 1.048_576, unit: "MiB"),
                        errors: childErrors, note: childNote + "; nothing has read them yet (a resource makes its "
                            + "observation registrar at its first read)"))
        rows.append(Row(figure: figure, variant: "heap in use by \(which), then each read once", unit: "MiB",
                        courier: heapsRead.isEmpty ? nil : Summary(heapsRead), target: .valueAtMost(10 / 1.048_576, unit: "MiB"),
                        errors: childErrors, note: childNote + "; each resource's value read once on its context, as a "
                            + "screen shows it"))
        rows.append(Row(figure: figure, variant: "RSS growth with \(which)", unit: "MiB",
                        courier: growths.isEmpty ? nil : Summary(growths), target: .none, errors: childErrors,
                        note: "RSS also counts what the allocator keeps, in each thread's arena, after the loads' "
                            + "own allocations were freed"))
    }
    return rows
}

/// The child of the memory rows: `count` resources asked for, of `count / 10` URLs, each loaded,
/// 16 at a time; `distinct` gives each of a URL's ten its own stale time (ten resources), otherwise
/// they are ten screens asking for the same one.
func resourceMemoryChild(count: Int, baseURL: URL, distinct: Bool) -> ChildReport {
    var configuration = CourierTransport.curl.configuration(label: "CourierBench.resources.memory", maxConcurrentRequests: 16)
    configuration.cache = nil
    let queue = RequestQueue(configuration: configuration, baseURL: baseURL)
    let context = DispatchQueue(label: "CourierBench.resources.memory.context")
    let urls = max(1, count / 10)
    var report = ChildReport()
    report.count = count
    // A warm-up opens the 16 connections (libcurl's buffers for each) and loads what requests need.
    blockingAwait {
        await withTaskGroup(of: Void.self) { group in
            for number in 0..<64 { group.addTask { _ = try? await queue.send(ItemRequest(number: -1 - number)) as Item? } }
        }
    }
    report.rssBefore = procStatus("VmRSS")
    report.heapBefore = courier_bench_heap_in_use()
    let start = now()
    let resources = (0..<count).map { index in
        queue.resource(ItemRequest(number: index % urls),
                       options: ResourceOptions(staleAfter: .seconds(60 + (distinct ? index / urls : 0)), updatesOn: .queue(context)))
    }
    let failures = blockingAwait {
        await withTaskGroup(of: String?.self) { group in
            var failures: [String] = []
            var next = 0
            func add() {
                let resource = resources[next]
                next += 1
                group.addTask { do { _ = try await resource.fetch(); return nil } catch { return "\(error)" } }
            }
            for _ in 0..<min(16, resources.count) { add() }
            while let failure = await group.next() {
                if let failure { failures.append(failure) }
                if next < resources.count { add() }
            }
            return failures
        }
    }
    report.seconds = now() - start
    report.rssAfter = procStatus("VmRSS")
    report.heapAfter = courier_bench_heap_in_use()
    // Read, as a screen shows each: a resource's first read makes its observation registrar.
    let unread = context.sync { resources.filter { $0.value == nil }.count }
    report.heapAfterReading = courier_bench_heap_in_use()
    report.peakRSS = procStatus("VmHWM")
    report.errors = max(failures.count, unread)
    report.firstError = failures.first
    withExtendedLifetime(resources) {}
    return report
}

/// A child for profiling (`perf stat`, callgrind): `count` loads of a resource, observed
/// (`resource-load`) or not (`resource-unobserved`), or setting an observed `@Observable` model
/// (`model-load`), or `count` sends (`resource-send`), answered by a fresh hit from memory.
func resourceLoadChild(kind: String, count: Int, baseURL: URL) -> ChildReport {
    var configuration = CourierTransport.curl.configuration(label: "CourierBench.resources.load", maxConcurrentRequests: 1)
    configuration.cache = ResponseCache()
    let queue = RequestQueue(configuration: configuration, baseURL: baseURL)
    let context = DispatchQueue(label: "CourierBench.resources.load.context")
    let resource = queue.resource(CachedItemRequest(), options: ResourceOptions(updatesOn: .queue(context)))
    _ = blockingAwait { try? await queue.send(CachedItemRequest()) }
    var report = ChildReport()
    report.count = count
    let start = now()
    let round = switch kind {
    case "resource-load": observedRound(Screen(resource), on: context, count: count)
    case "resource-unobserved": unobservedRound(resource, on: context, count: count)
    case "model-load": observedRound(Screen(ScreenModel(), loadingFrom: resource), on: context, count: count)
    default: sendRound(queue, count: count, request: CachedItemRequest())
    }
    report.seconds = now() - start
    report.errors = round.errors
    report.firstError = round.firstError
    return report
}
