import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// The figures. Each is one small function registered in `allFigures`; each Courier number comes
// with its baseline measured in the same run, in interleaved rounds.

let allFigures: [Figure] = [
    Figure(key: "sequential", title: "Requests/s, one at a time, small JSON", needsServer: true, run: sequentialFigure),
    Figure(key: "throughput-16", title: "Requests/s, 16 in flight", needsServer: true, run: sixteenInFlightFigure),
    Figure(key: "burst", title: "Requests/s, 64 and 256 added at once, maxConcurrentRequests 16", needsServer: true, run: burstFigure),
    Figure(key: "large", title: "MB/s, 1 MiB responses", needsServer: true, run: largeResponseFigure),
    Figure(key: "sweep", title: "Requests/s by requests in flight (chart)", needsServer: true, run: sweepFigure),
    Figure(key: "observers", title: "Observer delivery with 100,000 observers of 1,000 other types", needsServer: false, run: observerDeliveryFigure),
    Figure(key: "add", title: "add of requests held back by maxConcurrentRequests 8", needsServer: true, run: heldBackAddFigure),
    Figure(key: "memory", title: "RSS growth over many requests, 16 in flight", needsServer: true, run: memoryFigure),
    Figure(key: "encoding", title: "Body encoding of a 10-field struct, JSON and form", needsServer: false, run: encodingFigure),
    Figure(key: "upload", title: "1 GiB multipart upload", needsServer: true, run: multipartUploadFigure),
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

/// A contender that sends `total` requests through `client` each round and reports `metric`.
func loadContender(_ name: String, _ client: any LoadClient, total: Int, shape: LoadShape, tally: ErrorTally,
                   metric: @escaping (LoadResult) -> Double = { $0.requestsPerSecond }) -> Contender {
    Contender(name, warmUp: {
        let result = runLoad(client, total: min(total, 256), shape: shape)
        tally.record(result, contender: name + " (warm-up)")
    }, round: {
        let before = acceptedConnections(tally.statusURL)
        let result = runLoad(client, total: total, shape: shape)
        let after = acceptedConnections(tally.statusURL)
        tally.record(result, contender: name)
        if let before, let after {
            // The status request itself reuses its own kept-alive connection after the first time.
            tally.recordConnections(after - before, requests: total, contender: name)
        }
        return metric(result)
    })
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

func courierEmpty(_ bench: Bench, limit: Int) -> CourierClient<SmallEmptyRequest> {
    CourierClient(baseURL: bench.baseURL, maxConcurrentRequests: limit, request: { SmallEmptyRequest() })
}

func courierItem(_ bench: Bench, limit: Int) -> CourierClient<SmallItemRequest> {
    CourierClient(baseURL: bench.baseURL, maxConcurrentRequests: limit, request: { SmallItemRequest() })
}

func smallURL(_ bench: Bench) -> URL {
    bench.baseURL.appendingPathComponent("small.json")
}

// MARK: - Throughput

func sequentialFigure(_ bench: Bench) -> [Row] {
    let total = bench.options.count(1_000, quick: 300)
    let tally = ErrorTally(bench)
    let raw = RawSessionClient(url: smallURL(bench), maxConnections: 1)
    let rawDecoding = RawSessionClient(url: smallURL(bench), maxConnections: 1, decodeItem: true)
    let empty = courierEmpty(bench, limit: 1)
    let item = courierItem(bench, limit: 1)
    defer { raw.close(); rawDecoding.close() }
    let shape = LoadShape.keepInFlight(1)
    let results = interleaved(rounds: bench.rounds, [
        loadContender("raw URLSession", raw, total: total, shape: shape, tally: tally),
        loadContender("Courier EmptyResponse", empty, total: total, shape: shape, tally: tally),
        loadContender("raw URLSession + JSONDecoder", rawDecoding, total: total, shape: shape, tally: tally),
        loadContender("Courier Decodable", item, total: total, shape: shape, tally: tally),
    ])
    bench.chart[1] = (raw: results[0], courier: results[1])
    let figure = "Requests/s, one at a time, small JSON (\(grouped(total)) per round)"
    return [
        Row(figure: figure, variant: "EmptyResponse", unit: "req/s", courier: results[1],
            baselineName: "raw URLSession", baseline: results[0], target: .ratioAtLeast(0.95),
            errors: tally.count, note: tally.note),
        Row(figure: figure, variant: "Decodable `Item`", unit: "req/s", courier: results[3],
            baselineName: "raw URLSession + JSONDecoder", baseline: results[2], target: .ratioAtLeast(0.95),
            errors: tally.count, note: tally.note),
    ]
}

func sixteenInFlightFigure(_ bench: Bench) -> [Row] {
    let total = bench.options.count(5_000, quick: 1_000)
    let tally = ErrorTally(bench)
    let raw = RawSessionClient(url: smallURL(bench), maxConnections: 16)
    let empty = courierEmpty(bench, limit: 16)
    let item = courierItem(bench, limit: 16)
    let send = CourierSendClient(baseURL: bench.baseURL, maxConcurrentRequests: 16, request: { SmallEmptyRequest() })
    defer { raw.close() }
    let shape = LoadShape.keepInFlight(16)
    let results = interleaved(rounds: bench.rounds, [
        loadContender("raw URLSession", raw, total: total, shape: shape, tally: tally),
        loadContender("Courier EmptyResponse", empty, total: total, shape: shape, tally: tally),
        loadContender("Courier Decodable", item, total: total, shape: shape, tally: tally),
        loadContender("Courier async send", send, total: total, shape: shape, tally: tally),
    ])
    bench.chart[16] = (raw: results[0], courier: results[1])
    let figure = "Requests/s, 16 in flight (\(grouped(total)) per round)"
    func row(_ variant: String, _ summary: Summary) -> Row {
        Row(figure: figure, variant: variant, unit: "req/s", courier: summary, baselineName: "raw URLSession",
            baseline: results[0], target: .ratioAtLeast(1.0), errors: tally.count, note: tally.note)
    }
    return [
        row("EmptyResponse, add + ID observer", results[1]),
        row("Decodable `Item`, add + ID observer", results[2]),
        row("EmptyResponse, async send", results[3]),
    ]
}

func burstFigure(_ bench: Bench) -> [Row] {
    let total = bench.options.count(1_536, quick: 512)
    var rows: [Row] = []
    for size in [64, 256] {
        let tally = ErrorTally(bench)
        let raw = RawSessionClient(url: smallURL(bench), maxConnections: size)
        let courier = courierEmpty(bench, limit: 16)
        defer { raw.close() }
        let shape = LoadShape.batches(size)
        let results = interleaved(rounds: bench.rounds, [
            loadContender("raw URLSession, \(size) in flight", raw, total: total, shape: shape, tally: tally),
            loadContender("Courier, \(size) added, 16 at once", courier, total: total, shape: shape, tally: tally),
        ])
        rows.append(Row(figure: "Requests/s, \(size) added at once (batches, \(grouped(total)) per round)",
                        variant: "EmptyResponse, maxConcurrentRequests 16", unit: "req/s", courier: results[1],
                        baselineName: "raw URLSession, \(size) in flight", baseline: results[0],
                        target: .ratioAtLeast(1.0), errors: tally.count, note: tally.note))
    }
    return rows
}

func largeResponseFigure(_ bench: Bench) -> [Row] {
    // 256 (about 0.8 s per round): shorter rounds let one slow moment of the VM decide the median.
    let total = bench.options.count(256, quick: 32)
    let tally = ErrorTally(bench)
    let url = bench.baseURL.appendingPathComponent("large.bin")
    let raw = RawSessionClient(url: url, maxConnections: 1)
    let courier = CourierClient(baseURL: bench.baseURL, maxConcurrentRequests: 1,
                                request: { LargeRequest() }, bytes: { $0.count })
    defer { raw.close() }
    let shape = LoadShape.keepInFlight(1)
    let megabytes: (LoadResult) -> Double = { $0.megabytesPerSecond }
    let results = interleaved(rounds: bench.rounds, [
        loadContender("raw URLSession", raw, total: total, shape: shape, tally: tally, metric: megabytes),
        loadContender("Courier", courier, total: total, shape: shape, tally: tally, metric: megabytes),
    ])
    return [Row(figure: "MB/s, 1 MiB responses, one at a time (\(total) per round)",
                variant: "response keeps the body's size", unit: "MB/s", courier: results[1],
                baselineName: "raw URLSession", baseline: results[0], target: .ratioAtLeast(0.95),
                errors: tally.count, note: tally.note)]
}

/// The chart's other points: N in flight for both, Courier with maxConcurrentRequests N.
func sweepFigure(_ bench: Bench) -> [Row] {
    let total = bench.options.count(1_500, quick: 500)
    var rows: [Row] = []
    for inFlight in [4, 64, 256] {
        let tally = ErrorTally(bench)
        let raw = RawSessionClient(url: smallURL(bench), maxConnections: inFlight)
        let courier = courierEmpty(bench, limit: inFlight)
        defer { raw.close() }
        let shape = LoadShape.keepInFlight(inFlight)
        let results = interleaved(rounds: bench.rounds, [
            loadContender("raw URLSession, \(inFlight) in flight", raw, total: total, shape: shape, tally: tally),
            loadContender("Courier, \(inFlight) in flight", courier, total: total, shape: shape, tally: tally),
        ])
        bench.chart[inFlight] = (raw: results[0], courier: results[1])
        rows.append(Row(figure: "Requests/s, \(inFlight) in flight, maxConcurrentRequests \(inFlight) (chart; \(grouped(total)) per round)",
                        variant: "EmptyResponse", unit: "req/s", courier: results[1],
                        baselineName: "raw URLSession", baseline: results[0], errors: tally.count, note: tally.note))
    }
    return rows
}
