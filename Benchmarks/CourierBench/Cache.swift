import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: - The HTTP cache

/// nginx's small JSON, fresh for an hour (`expires 1h`): what the cache's hits answer.
private struct CachedSmallRequest: Request {
    typealias ResponseType = EmptyResponse
    var path: String { "/cached.json" }
    var method: HTTPMethod { .get }
}

/// The small JSON at a URL of its own each time (nginx ignores the query): every request misses.
private struct UniqueSmallRequest: Request {
    typealias ResponseType = EmptyResponse
    let number: Int
    var path: String { "/small.json?n=\(number)" }
    var method: HTTPMethod { .get }
}

/// `count` new URLs, each sent through a queue with the cache and one without, in turns (which
/// goes first alternates), so that both see the same server at the same moments: the loopback
/// request's own variation (±10 % between rounds) would otherwise swamp a difference of a few µs.
private func pairedMissRound(cached: RequestQueue, uncached: RequestQueue, count: Int, first: Int)
    -> (cached: LatencyRound, uncached: LatencyRound) {
    blockingAwait {
        var rounds = (cached: LatencyRound(), uncached: LatencyRound())
        for index in 0..<count {
            let request = UniqueSmallRequest(number: first + index)
            for cacheFirst in index.isMultiple(of: 2) ? [true, false] : [false, true] {
                let start = now()
                do {
                    _ = try await (cacheFirst ? cached : uncached).send(request)
                    if cacheFirst { rounds.cached.times.append(now() - start) } else { rounds.uncached.times.append(now() - start) }
                } catch {
                    if cacheFirst { rounds.cached.failed("\(error)") } else { rounds.uncached.failed("\(error)") }
                }
            }
        }
        return rounds
    }
}

/// A fresh hit from memory and from disk against the same request over loopback, and what the
/// cache adds to a request that misses, all through the curl transport, one request at a time.
func cacheFigure(_ bench: Bench) -> [Row] {
    let count = bench.options.count(2_000, quick: 300)
    let folder = URL(fileURLWithPath: ".build/bench/cache-\(UUID().uuidString)", isDirectory: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let tally = LatencyTally(count: count)
    var missNumber = 0

    func queue(cache: ResponseCache?) -> RequestQueue {
        var configuration = CourierTransport.curl.configuration(label: "CourierBench.cache", maxConcurrentRequests: 1)
        configuration.cache = cache
        return RequestQueue(configuration: configuration, baseURL: bench.baseURL)
    }
    func contender(_ name: String, on queue: RequestQueue) -> Contender {
        tally.contender(name) { count in sendRound(queue, count: count, request: CachedSmallRequest()) }
    }

    let diskCache: ResponseCache
    do {
        diskCache = try ResponseCache(memoryCapacity: 0, directory: folder, diskCapacity: 64 << 20)
    } catch {
        return [Row(figure: "HTTP cache", variant: "disk store", unit: "µs", errors: 1, note: "\(error)")]
    }
    let network = "loopback request, cache off"
    let memoryHit = "fresh hit from memory"
    let diskHit = "fresh hit from disk (memory store off)"
    let missPair = "miss, cache on and off in turns"
    let missQueues = (cached: queue(cache: ResponseCache()), uncached: queue(cache: nil))
    var missMedians: (cached: [Double], uncached: [Double]) = ([], [])
    let missContender = tally.contender(missPair) { count in
        let first = missNumber
        missNumber += count
        let rounds = pairedMissRound(cached: missQueues.cached, uncached: missQueues.uncached, count: count, first: first)
        if count > 50, !rounds.cached.times.isEmpty, !rounds.uncached.times.isEmpty {
            missMedians.cached.append(median(rounds.cached.times) * 1e6)
            missMedians.uncached.append(median(rounds.uncached.times) * 1e6)
        }
        var both = rounds.cached
        both.errors += rounds.uncached.errors
        both.firstError = both.firstError ?? rounds.uncached.firstError
        return both
    }
    let results = measure(bench, [
        contender(network, on: queue(cache: nil)),
        contender(memoryHit, on: queue(cache: ResponseCache())),
        contender(diskHit, on: queue(cache: diskCache)),
        missContender,
    ])
    let figure = "HTTP cache, small JSON, one request at a time through the curl transport (\(grouped(count)) per round)"
    let errorNote = tally.errorNote
    let errors = tally.errors
    let speedup = { (name: String) -> String in
        guard let hit = results[name]?.median, let loopback = results[network]?.median, hit > 0 else { return "?" }
        return String(format: "%.1f", loopback / hit)
    }
    return [
        Row(figure: figure, variant: "time to the result: \(memoryHit)", unit: "µs", courier: results[memoryHit],
            baselineName: network, baseline: results[network], target: .ratioAtMost(0.05), errors: errors,
            note: "value per round: the median request; \(speedup(memoryHit)) × faster than the loopback request (target ≥ 20 ×)"
                + errorNote),
        Row(figure: figure, variant: "time to the result: \(diskHit)", unit: "µs", courier: results[diskHit],
            baselineName: network, baseline: results[network], target: .ratioAtMost(0.2), errors: errors,
            note: "\(speedup(diskHit)) × faster than the loopback request (target ≥ 5 ×); the file is in the page cache, as a "
                + "recently used one is" + errorNote),
        Row(figure: figure, variant: "time to the result: a miss with the cache on (looked up, sent, stored), every URL new",
            unit: "µs", courier: missMedians.cached.isEmpty ? nil : Summary(missMedians.cached),
            baselineName: "the same URL with the cache off, sent in turns with it",
            baseline: missMedians.uncached.isEmpty ? nil : Summary(missMedians.uncached), target: .ratioAtMost(1.05),
            errors: errors,
            note: "each new URL goes through both queues, which goes first alternating; the cache stores each response "
                + "(evicting the oldest)" + errorNote),
    ]
}

/// A child for profiling (`perf stat`, callgrind): `count` requests one at a time, each to a new
/// URL, through a queue with the cache (`miss-cached`: each looked up, sent, stored) or without.
func cacheMissChild(cached: Bool, count: Int, baseURL: URL) -> ChildReport {
    var configuration = CourierTransport.curl.configuration(label: "CourierBench.cache.miss", maxConcurrentRequests: 1)
    configuration.cache = cached ? ResponseCache() : nil
    let queue = RequestQueue(configuration: configuration, baseURL: baseURL)
    _ = blockingAwait { try? await queue.send(UniqueSmallRequest(number: -1)) }
    var report = ChildReport()
    report.count = count
    let start = now()
    let round = blockingAwait {
        var round = LatencyRound()
        for number in 0..<count {
            do { _ = try await queue.send(UniqueSmallRequest(number: number)) } catch { round.failed("\(error)") }
        }
        return round
    }
    report.seconds = now() - start
    report.errors = round.errors
    report.firstError = round.firstError
    return report
}
