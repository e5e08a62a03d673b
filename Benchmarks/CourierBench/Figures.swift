import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// The figures. Each is one small function registered in `allFigures`; each Courier number comes
// with its baseline measured in the same run, in interleaved rounds. A network figure measures
// raw URLSession, Courier through its curl transport (the default on Linux) and through
// URLSession, and, where the shape allows, curl's command line on the same server.

let allFigures: [Figure] = [
    Figure(key: "sequential", title: "Requests/s, one at a time, small JSON", needsServer: true, run: sequentialFigure),
    Figure(key: "throughput-16", title: "Requests/s, 16 in flight", needsServer: true, run: sixteenInFlightFigure),
    Figure(key: "cache-cpu", title: "CPU per request with the cache on, every URL new, 16 in flight", needsServer: true,
           run: cacheMissCPUFigure),
    Figure(key: "burst", title: "Requests/s, 64 and 256 added at once, maxConcurrentRequests 16", needsServer: true, run: burstFigure),
    Figure(key: "large", title: "MB/s, 1 MiB responses", needsServer: true, run: largeResponseFigure),
    Figure(key: "sweep", title: "Requests/s by requests in flight (chart)", needsServer: true, run: sweepFigure),
    Figure(key: "observers", title: "Observer delivery with 100,000 observers of 1,000 other types", needsServer: false, run: observerDeliveryFigure),
    Figure(key: "add", title: "add of requests held back by maxConcurrentRequests 8", needsServer: true, run: heldBackAddFigure),
    Figure(key: "memory", title: "RSS growth over many requests, 16 in flight", needsServer: true, run: memoryFigure),
    Figure(key: "encoding", title: "Body encoding of a 10-field struct, JSON and form", needsServer: false, run: encodingFigure),
    Figure(key: "decoding", title: "Response decoding of a page of 20 posts", needsServer: false, run: decodingFigure),
    Figure(key: "upload", title: "1 GiB multipart upload", needsServer: true, run: multipartUploadFigure),
    Figure(key: "ttfb", title: "Time to first byte of a stream against a buffered request", needsServer: true,
           run: timeToFirstByteFigure),
    Figure(key: "slow-consumer", title: "Slow consumer (1 MB/s) of a 256 MiB stream, RSS", needsServer: true,
           run: slowConsumerFigure),
    Figure(key: "download", title: "1 GiB download to a file", needsServer: true, run: downloadFigure),
    Figure(key: "cache", title: "HTTP cache: hits from memory and disk, and a miss", needsServer: true, run: cacheFigure),
    Figure(key: "resources", title: "Observable resources: an observed load against a send and against a plain @Observable model, and memory", needsServer: true,
           run: resourceFigure),
    Figure(key: "durable", title: "Durable requests: add from one thread and 16, and the cost to other requests",
           needsServer: true, run: durableFigure),
    Figure(key: "tls-connect", title: "HTTPS: a new queue's first request, and reconnections", needsServer: true,
           run: tlsConnectFigure),
    Figure(key: "tls-load", title: "HTTPS: requests/s, 16 and 64 in flight, HTTP/1.1 and HTTP/2", needsServer: true,
           run: tlsLoadFigure),
    Figure(key: "tls-burst", title: "HTTPS: a burst of 64 from a new queue, connections opened", needsServer: true,
           run: tlsBurstFigure),
]

// MARK: - Helpers

/// Counts errors across the rounds of one figure and keeps the first message; also the new
/// connections nginx accepted per 1,000 requests, by contender.
final class ErrorTally {
    var count = 0
    var first: String?
    var connections: [(name: String, perThousand: [Double])] = []
    let statusURL: URL?

    init(_ bench: Bench) {
        statusURL = bench.statusURL
    }

    func recordConnections(_ accepted: Int?, requests: Int, contender: String) {
        guard let accepted else { return }
        let value = Double(accepted) * 1_000 / Double(requests)
        if let index = connections.firstIndex(where: { $0.name == contender }) {
            connections[index].perThousand.append(value)
        } else {
            connections.append((contender, [value]))
        }
    }

    /// "new connections per 1,000 requests: raw 210, Courier 95".
    var connectionNote: String {
        guard !connections.isEmpty else { return "" }
        return "new connections per 1,000 requests (median): "
            + connections.map { "\($0.name) \(format(Summary($0.perThousand).median))" }.joined(separator: ", ")
    }

    func record(_ result: LoadResult, contender: String) {
        count += result.failed
        if let error = result.firstError, first == nil { first = "\(contender): \(error)" }
    }

    var note: String {
        let errors = count > 0 ? "\(count) errors; first: \(first ?? "?")" : ""
        return [errors, connectionNote].filter { !$0.isEmpty }.joined(separator: "; ")
    }
}

/// A contender that runs `round` (or `warmUp` once, first) and reports `metric` of its result,
/// counting errors and nginx's new connections.
func loadContender(_ name: String, requests: Int, tally: ErrorTally, metric: @escaping (LoadResult) -> Double,
                   warmUp: (() -> LoadResult)?, round: @escaping () -> LoadResult) -> Contender {
    Contender(name, warmUp: warmUp.map { warmUp in
        { tally.record(warmUp(), contender: name + " (warm-up)") }
    }, round: {
        let before = acceptedConnections(tally.statusURL)
        let result = round()
        let after = acceptedConnections(tally.statusURL)
        tally.record(result, contender: name)
        if let before, let after {
            // The status request itself reuses its own kept-alive connection after the first time.
            tally.recordConnections(after - before, requests: requests, contender: name)
        }
        return metric(result)
    })
}

func requestsPerSecond(_ result: LoadResult) -> Double { result.requestsPerSecond }

/// A contender that sends `total` requests through `client` each round and reports `metric`.
func loadContender(_ name: String, _ client: any LoadClient, total: Int, shape: LoadShape, tally: ErrorTally,
                   metric: @escaping (LoadResult) -> Double = requestsPerSecond) -> Contender {
    loadContender(name, requests: total, tally: tally, metric: metric,
                  warmUp: { runLoad(client, total: min(total, 256), shape: shape) },
                  round: { runLoad(client, total: total, shape: shape) })
}

/// curl's command line fetching `total` copies of `url` (`parallel` at once, or one at a time),
/// one process per round; nil when there is no curl command line here.
func commandLineContender(url: URL, total: Int, parallel: Int? = nil, extraArguments: [String] = [], tally: ErrorTally,
                          metric: @escaping (LoadResult) -> Double = requestsPerSecond) -> Contender? {
    guard let command = CurlCommand(url: url, count: total, parallel: parallel, extraArguments: extraArguments) else {
        log("    no \(curlCommandPath): the figure goes without curl's command line")
        return nil
    }
    // The warm-up loads the binary and its libraries into the page cache.
    return loadContender(commandLineName, requests: total, tally: tally, metric: metric,
                         warmUp: command.run, round: command.run)
}

/// The contenders' names, which the rows look the results up by.
let rawName = "raw URLSession"
let commandLineName = "curl command line"

/// Runs the contenders in interleaved rounds; each one's summary by its name.
func measure(_ bench: Bench, rounds: Int? = nil, _ contenders: [Contender?]) -> [String: Summary] {
    let present = contenders.compactMap { $0 }
    let summaries = interleaved(rounds: rounds ?? bench.rounds, present)
    return Dictionary(uniqueKeysWithValues: zip(present.map(\.name), summaries))
}

/// A network figure's row: the baseline, Courier through each transport and, when measured,
/// curl's command line, looked up by contender name in `results`.
func networkRow(_ figure: String, _ variant: String, unit: String, results: [String: Summary],
                baseline: String = rawName, courier: (CourierTransport) -> String,
                commandLine: String? = nil, target: Target, commandLineTarget: Target = .none,
                errors: Int, note: String = "") -> Row {
    Row(figure: figure, variant: variant, unit: unit, courier: results[courier(.curl)], baselineName: baseline,
        baseline: results[baseline], target: target,
        network: NetworkColumns(urlSession: results[courier(.urlSession)], commandLine: commandLine.flatMap { results[$0] },
                                commandLineTarget: commandLineTarget),
        errors: errors, note: note)
}

/// The chart's point for `inFlight` from a figure's results.
func chartPoint(_ results: [String: Summary], raw: String = rawName, courier: (CourierTransport) -> String) -> ChartPoint? {
    guard let rawSummary = results[raw], let curl = results[courier(.curl)], let urlSession = results[courier(.urlSession)] else {
        return nil
    }
    return ChartPoint(raw: rawSummary, curl: curl, urlSession: urlSession, commandLine: results[commandLineName])
}

/// The connections nginx has accepted so far (its `stub_status` at /status), or nil.
func acceptedConnections(_ statusURL: URL?) -> Int? {
    guard let url = statusURL else { return nil }
    let done = DispatchSemaphore(value: 0)
    let accepted = Mutex<Int?>(nil)
    statusSession.dataTask(with: url) { data, _, _ in
        // "Active connections: 1 \nserver accepts handled requests\n 72 72 7214 \n…"
        let lines = data.map { String(decoding: $0, as: UTF8.self) }?.split(separator: "\n") ?? []
        if lines.count >= 3, let first = lines[2].split(separator: " ").first, let value = Int(first) {
            accepted.withLock { $0 = value }
        }
        done.signal()
    }.resume()
    _ = done.wait(timeout: .now() + 5)
    return accepted.withLock { $0 }
}

/// Its own session, so that status requests never share the measured sessions' connections.
let statusSession = URLSession(configuration: .ephemeral)

func courierEmpty(_ bench: Bench, _ transport: CourierTransport, limit: Int) -> CourierClient<SmallEmptyRequest> {
    CourierClient(transport, baseURL: bench.baseURL, maxConcurrentRequests: limit, request: { SmallEmptyRequest() })
}

func courierSend(_ bench: Bench, _ transport: CourierTransport, limit: Int) -> CourierSendClient<SmallEmptyRequest> {
    CourierSendClient(transport, baseURL: bench.baseURL, maxConcurrentRequests: limit, request: { SmallEmptyRequest() })
}

/// CPU microseconds per request of each contender's rounds, taken beside its main metric.
final class CPUTally {
    private var values: [String: [Double]] = [:]

    /// A metric that reports requests per second and keeps the round's CPU per request.
    func recording(_ contender: String) -> (LoadResult) -> Double {
        { [self] result in
            let perRequest = result.cpuMicrosecondsPerRequest
            if perRequest.isFinite { values[contender, default: []].append(perRequest) }
            return result.requestsPerSecond
        }
    }

    var summaries: [String: Summary] { values.mapValues { Summary($0) } }
}

func courierItem(_ bench: Bench, _ transport: CourierTransport, limit: Int) -> CourierClient<SmallItemRequest> {
    CourierClient(transport, baseURL: bench.baseURL, maxConcurrentRequests: limit, request: { SmallItemRequest() })
}

func smallURL(_ bench: Bench) -> URL {
    bench.baseURL.appendingPathComponent("small.json")
}

// MARK: - Throughput

func sequentialFigure(_ bench: Bench) -> [Row] {
    let total = bench.options.count(2_000, quick: 300)
    let tally = ErrorTally(bench)
    let raw = RawSessionClient(url: smallURL(bench), maxConnections: 1)
    let rawDecoding = RawSessionClient(url: smallURL(bench), maxConnections: 1, decodeItem: true)
    defer { raw.close(); rawDecoding.close() }
    let shape = LoadShape.keepInFlight(1)
    let empty = { (transport: CourierTransport) in "\(transport.name) EmptyResponse" }
    let decodable = { (transport: CourierTransport) in "\(transport.name) Decodable" }
    let send = { (transport: CourierTransport) in "\(transport.name) async send" }
    let rawDecodingName = "raw URLSession + JSONDecoder"
    let results = measure(bench, [
        loadContender(rawName, raw, total: total, shape: shape, tally: tally),
        loadContender(rawDecodingName, rawDecoding, total: total, shape: shape, tally: tally),
    ] + CourierTransport.allCases.flatMap { transport in [
        loadContender(empty(transport), courierEmpty(bench, transport, limit: 1), total: total, shape: shape, tally: tally),
        loadContender(decodable(transport), courierItem(bench, transport, limit: 1), total: total, shape: shape, tally: tally),
        loadContender(send(transport), courierSend(bench, transport, limit: 1), total: total, shape: shape, tally: tally),
    ] } + [
        commandLineContender(url: smallURL(bench), total: total, tally: tally),
    ])
    bench.chart[1] = chartPoint(results, courier: empty)
    let figure = "Requests/s, one at a time, small JSON (\(grouped(total)) per round)"
    return [
        networkRow(figure, "EmptyResponse, add + ID observer", unit: "req/s", results: results, courier: empty,
                   commandLine: commandLineName, target: .ratioAtLeast(2.5), commandLineTarget: .ratioAtLeast(0.75),
                   errors: tally.count, note: tally.note),
        networkRow(figure, "Decodable `Item`, add + ID observer", unit: "req/s", results: results, baseline: rawDecodingName,
                   courier: decodable, target: .ratioAtLeast(2.5), errors: tally.count, note: tally.note),
        networkRow(figure, "EmptyResponse, async send", unit: "req/s", results: results, courier: send,
                   commandLine: commandLineName, target: .ratioAtLeast(2.5), commandLineTarget: .ratioAtLeast(0.85),
                   errors: tally.count, note: tally.note),
    ]
}

func sixteenInFlightFigure(_ bench: Bench) -> [Row] {
    let total = bench.options.count(8_000, quick: 1_000)
    let tally = ErrorTally(bench)
    let raw = RawSessionClient(url: smallURL(bench), maxConnections: 16)
    defer { raw.close() }
    let shape = LoadShape.keepInFlight(16)
    let empty = { (transport: CourierTransport) in "\(transport.name) EmptyResponse" }
    let decodable = { (transport: CourierTransport) in "\(transport.name) Decodable" }
    let send = { (transport: CourierTransport) in "\(transport.name) async send" }
    let cpu = CPUTally()
    // Identical GETs with sharing on, as the queue's default has it: most join a transfer in flight.
    let sharedName = "Courier curl EmptyResponse, sharing on"
    let results = measure(bench, [
        loadContender(rawName, raw, total: total, shape: shape, tally: tally, metric: cpu.recording(rawName)),
    ] + CourierTransport.allCases.flatMap { transport in [
        loadContender(empty(transport), courierEmpty(bench, transport, limit: 16), total: total, shape: shape, tally: tally,
                      metric: cpu.recording(empty(transport))),
        loadContender(decodable(transport), courierItem(bench, transport, limit: 16), total: total, shape: shape, tally: tally),
        loadContender(send(transport), courierSend(bench, transport, limit: 16), total: total, shape: shape, tally: tally,
                      metric: cpu.recording(send(transport))),
    ] } + [
        loadContender(sharedName, CourierClient(.curl, baseURL: bench.baseURL, maxConcurrentRequests: 16, sharing: true,
                                                request: { SmallEmptyRequest() }),
                      total: total, shape: shape, tally: tally),
        commandLineContender(url: smallURL(bench), total: total, parallel: 16, tally: tally, metric: cpu.recording(commandLineName)),
    ])
    let cpuFigure = "CPU per request, 16 in flight (user + system of the client's process)"
    bench.chart[16] = chartPoint(results, courier: empty)
    let figure = "Requests/s, 16 in flight (\(grouped(total)) per round; curl command line: --parallel-max 16)"
    return [
        networkRow(figure, "EmptyResponse, add + ID observer", unit: "req/s", results: results, courier: empty,
                   commandLine: commandLineName, target: .ratioAtLeast(7), commandLineTarget: .ratioAtLeast(1.0),
                   errors: tally.count, note: tally.note),
        networkRow(figure, "Decodable `Item`, add + ID observer", unit: "req/s", results: results, courier: decodable,
                   target: .ratioAtLeast(7), errors: tally.count, note: tally.note),
        networkRow(figure, "EmptyResponse, async send", unit: "req/s", results: results, courier: send,
                   commandLine: commandLineName, target: .ratioAtLeast(7), commandLineTarget: .ratioAtLeast(1.0),
                   errors: tally.count, note: tally.note),
        Row(figure: figure, variant: "EmptyResponse, add + ID observer, identical requests shared (curl)", unit: "req/s",
            courier: results[sharedName], baselineName: rawName, baseline: results[rawName], errors: tally.count,
            note: "sharing is the queue's default; the other rows turn it off so that every request is a transfer"),
        networkRow(cpuFigure, "EmptyResponse, add + ID observer", unit: "µs", results: cpu.summaries, baseline: commandLineName,
                   courier: empty, target: .ratioAtMost(1.2), errors: tally.count),
        networkRow(cpuFigure, "EmptyResponse, async send", unit: "µs", results: cpu.summaries, baseline: commandLineName,
                   courier: send, target: .ratioAtMost(1.2), errors: tally.count),
    ]
}

/// What the cache adds to the CPU of requests it cannot answer: every URL new, 16 in flight,
/// through a queue with the cache (each request looked up, each response stored, the oldest
/// evicted past the 16 MiB of memory, full from the first round on) and one without.
///
/// A figure of its own, with rounds three times as long as the other 16-in-flight figures' and
/// at least nine of them: its target allows 5 %, where rounds of 8,000 (half a second) spread
/// by more than that on a shared host.
func cacheMissCPUFigure(_ bench: Bench) -> [Row] {
    let total = bench.options.count(24_000, quick: 2_000)
    let tally = ErrorTally(bench)
    let shape = LoadShape.keepInFlight(16)
    let cpu = CPUTally()
    let cached = "Courier curl async send, every URL new, cache on"
    let uncached = "Courier curl async send, every URL new, cache off"
    let numbered = { @Sendable in NumberedSmallRequest.next() }
    _ = measure(bench, rounds: bench.options.quick ? bench.rounds : max(bench.rounds, 9), [
        loadContender(cached, CourierSendClient(.curl, baseURL: bench.baseURL, maxConcurrentRequests: 16,
                                                cache: ResponseCache(), request: numbered),
                      total: total, shape: shape, tally: tally, metric: cpu.recording(cached)),
        loadContender(uncached, CourierSendClient(.curl, baseURL: bench.baseURL, maxConcurrentRequests: 16, request: numbered),
                      total: total, shape: shape, tally: tally, metric: cpu.recording(uncached)),
    ])
    return [
        Row(figure: "CPU per request, 16 in flight, every URL new (user + system of the client's process; \(grouped(total)) per round)",
            variant: "async send, each a miss: cache on", unit: "µs",
            courier: cpu.summaries[cached], baselineName: "the same, cache off", baseline: cpu.summaries[uncached],
            target: .ratioAtMost(1.05), errors: tally.count,
            note: ["the cache looks each request up, stores each response (evicting the oldest past 16 MiB)", tally.note]
                .filter { !$0.isEmpty }.joined(separator: "; ")),
    ]
}

func burstFigure(_ bench: Bench) -> [Row] {
    let total = bench.options.count(3_072, quick: 512)
    var rows: [Row] = []
    for size in [64, 256] {
        let tally = ErrorTally(bench)
        let raw = RawSessionClient(url: smallURL(bench), maxConnections: size)
        defer { raw.close() }
        let shape = LoadShape.batches(size)
        let baseline = "raw URLSession, \(size) in flight"
        let courier = { (transport: CourierTransport) in "\(transport.name), \(size) added, 16 at once" }
        // No command line here: curl has no way to hold a batch back and run 16 of it at a time.
        let results = measure(bench, [loadContender(baseline, raw, total: total, shape: shape, tally: tally)]
            + CourierTransport.allCases.map { transport in
                loadContender(courier(transport), courierEmpty(bench, transport, limit: 16), total: total, shape: shape, tally: tally)
            })
        rows.append(networkRow("Requests/s, \(size) added at once (batches, \(grouped(total)) per round)",
                               "EmptyResponse, maxConcurrentRequests 16", unit: "req/s", results: results,
                               baseline: baseline, courier: courier, target: .ratioAtLeast(7), errors: tally.count, note: tally.note))
    }
    return rows
}

func largeResponseFigure(_ bench: Bench) -> [Row] {
    // 512: about a second per round through URLSession here, and long enough for curl's command
    // line that its start-up (~5 ms) is a small part.
    let total = bench.options.count(512, quick: 32)
    let tally = ErrorTally(bench)
    let url = bench.baseURL.appendingPathComponent("large.bin")
    let raw = RawSessionClient(url: url, maxConnections: 1)
    defer { raw.close() }
    let shape = LoadShape.keepInFlight(1)
    let megabytes: (LoadResult) -> Double = { $0.megabytesPerSecond }
    let courier = { (transport: CourierTransport) in transport.name }
    let results = measure(bench, [loadContender(rawName, raw, total: total, shape: shape, tally: tally, metric: megabytes)]
        + CourierTransport.allCases.map { transport in
            let client = CourierClient(transport, baseURL: bench.baseURL, maxConcurrentRequests: 1,
                                       request: { LargeRequest() }, bytes: { $0.count })
            return loadContender(courier(transport), client, total: total, shape: shape, tally: tally, metric: megabytes)
        } + [
            commandLineContender(url: url, total: total, tally: tally, metric: megabytes),
        ])
    return [networkRow("MB/s, 1 MiB responses, one at a time (\(total) per round)", "response keeps the body's size",
                       unit: "MB/s", results: results, courier: courier, commandLine: commandLineName,
                       target: .ratioAtLeast(2), errors: tally.count, note: tally.note)]
}

/// The chart's other points: N in flight for all, Courier with maxConcurrentRequests N, curl's
/// command line with --parallel-max N.
///
/// 8,000 requests a round, as at 16 in flight: with 2,000, a round at 256 in flight lasted about
/// 70 ms, 8 requests a connection, and one stall of the host moved it by a third (Courier's
/// rounds 17,400–27,000 req/s, against 27,200–31,100 with 8,000).
func sweepFigure(_ bench: Bench) -> [Row] {
    let total = bench.options.count(8_000, quick: 500)
    var rows: [Row] = []
    for inFlight in [4, 64, 256] {
        let tally = ErrorTally(bench)
        let raw = RawSessionClient(url: smallURL(bench), maxConnections: inFlight)
        defer { raw.close() }
        let shape = LoadShape.keepInFlight(inFlight)
        let courier = { (transport: CourierTransport) in "\(transport.name), \(inFlight) in flight" }
        let results = measure(bench, [loadContender(rawName, raw, total: total, shape: shape, tally: tally)]
            + CourierTransport.allCases.map { transport in
                loadContender(courier(transport), courierEmpty(bench, transport, limit: inFlight),
                              total: total, shape: shape, tally: tally)
            } + [
                commandLineContender(url: smallURL(bench), total: total, parallel: inFlight, tally: tally),
            ])
        bench.chart[inFlight] = chartPoint(results, courier: courier)
        rows.append(networkRow("Requests/s, \(inFlight) in flight, maxConcurrentRequests \(inFlight) (chart; \(grouped(total)) per round)",
                               "EmptyResponse", unit: "req/s", results: results, courier: courier,
                               commandLine: commandLineName, target: .none,
                               commandLineTarget: inFlight >= 64 ? .ratioAtLeast(1.1) : .none, errors: tally.count, note: tally.note))
    }
    return rows
}
