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

/// `count` new URLs, each sent through a queue with the cache and one without, in turns (which
/// goes first alternates), so that both see the same server at the same moments: the loopback
/// request's own variation (±10 % between rounds) would otherwise swamp a difference of a few µs.
///
/// A new pair of queues (made in alternating order, each warmed with one request) every
/// `block` URLs: where the scheduler puts a queue's threads against nginx's worker makes one
/// queue's requests up to 30 % slower than another's for its whole life (two queues without a
/// cache, in turns, measured 0.73–1.07 × each other), so one pair per round would measure
/// placement, not the cache. The cache of every pair is new too, and fills as the block goes.
private func pairedMissRound(makeQueue: (_ cached: Bool) -> RequestQueue, count: Int, first: Int, block: Int = 250)
    -> (cached: LatencyRound, uncached: LatencyRound) {
    var rounds = (cached: LatencyRound(), uncached: LatencyRound())
    for start in stride(from: 0, to: count, by: block) {
        let cachedMadeFirst = (start / block).isMultiple(of: 2)
        let made = cachedMadeFirst ? [makeQueue(true), makeQueue(false)] : [makeQueue(false), makeQueue(true)]
        let (cached, uncached) = cachedMadeFirst ? (made[0], made[1]) : (made[1], made[0])
        let blockRounds = blockingAwait {
            var rounds = (cached: LatencyRound(), uncached: LatencyRound())
            _ = try? await cached.send(NumberedSmallRequest(number: -1 - start))
            _ = try? await uncached.send(NumberedSmallRequest(number: -1 - start))
            for index in start..<min(count, start + block) {
                let request = NumberedSmallRequest(number: first + index)
                for cacheFirst in index.isMultiple(of: 2) ? [true, false] : [false, true] {
                    let started = now()
                    do {
                        _ = try await (cacheFirst ? cached : uncached).send(request)
                        let time = now() - started
                        if cacheFirst { rounds.cached.times.append(time) } else { rounds.uncached.times.append(time) }
                    } catch {
                        if cacheFirst { rounds.cached.failed("\(error)") } else { rounds.uncached.failed("\(error)") }
                    }
                }
            }
            return rounds
        }
        rounds.cached.add(blockRounds.cached)
        rounds.uncached.add(blockRounds.uncached)
    }
    return rounds
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
    var missMedians: (cached: [Double], uncached: [Double]) = ([], [])
    let missContender = tally.contender(missPair) { count in
        let first = missNumber
        missNumber += count
        let rounds = pairedMissRound(makeQueue: { queue(cache: $0 ? ResponseCache() : nil) }, count: count, first: first)
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
            note: "each new URL goes through both queues, which goes first alternating; a new pair of queues every 250 "
                + "URLs; the cache stores each response" + errorNote),
    ]
}

/// A child for profiling (`perf stat`, callgrind): `count` requests, `inFlight` at a time, each to
/// a new URL, through a queue with the cache (`miss-cached`: each looked up, sent, stored) or
/// without.
func cacheMissChild(cached: Bool, count: Int, baseURL: URL, inFlight: Int) -> ChildReport {
    let client = CourierSendClient(.curl, baseURL: baseURL, maxConcurrentRequests: inFlight,
                                   cache: cached ? ResponseCache() : nil, request: { NumberedSmallRequest.next() })
    return measuredLoad(client, count: count, inFlight: inFlight, label: cached ? "miss-cached" : "miss-uncached")
}

/// A child for profiling a fresh hit from memory (`hit-memory`): `count` sends of the same
/// fresh response, one at a time, through a queue with the cache (the first one a miss).
func cacheHitChild(count: Int, baseURL: URL) -> ChildReport {
    let client = CourierSendClient(.curl, baseURL: baseURL, maxConcurrentRequests: 1, cache: ResponseCache(),
                                   request: { CachedSmallRequest() })
    return measuredLoad(client, count: count, inFlight: 1, label: "hit-memory")
}
