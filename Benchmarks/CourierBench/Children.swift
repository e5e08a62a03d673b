import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// Memory figures run each measurement in a fresh child process (this executable, re-run with
// `child …`), so that memory one figure freed cannot hide another's growth. The child prints
// one JSON `ChildReport` on stdout.

struct ChildReport: Codable {
    var count = 0
    var seconds = 0.0
    var rssBefore = 0
    var rssAfter = 0
    /// The heap in use (glibc's mallinfo2) before and after, where the figure reads it.
    var heapBefore: Int?
    var heapAfter: Int?
    /// Resources: the heap in use once each was also read (as a screen shows it).
    var heapAfterReading: Int?
    var peakRSS = 0
    var errors = 0
    var firstError: String?
    /// The `add` figure: seconds to release the queue and so cancel everything it held.
    var releaseSeconds: Double?
    /// The slow consumer: VmRSS samples (bytes) over the window, its chunks, the largest chunk,
    /// the bytes the transport delivered, and how the stream ended.
    var samples: [Int]?
    var chunks: Int?
    var largestChunk: Int?
    var bytesReceived: Int?
    var ending: String?

    var growth: Double { Double(rssAfter - rssBefore) }
}

/// The Courier transport a child kind names: `…-curl` or `…-urlsession`.
func childTransport(_ kind: String) -> CourierTransport? {
    kind.hasSuffix("-curl") ? .curl : kind.hasSuffix("-urlsession") ? .urlSession : nil
}

/// The child kinds for raw URLSession and Courier through each transport: `memory-raw`,
/// `memory-curl`, `memory-urlsession`.
func childKinds(_ prefix: String) -> [String] {
    [prefix + "-raw", prefix + "-curl", prefix + "-urlsession"]
}

/// Runs a child measurement and exits. `arguments` follow `child`.
func runChild(_ arguments: [String]) -> Never {
    guard arguments.count >= 3, let count = Int(arguments[1]), let baseURL = URL(string: arguments[2]) else {
        fail("usage: CourierBench child memory-raw|memory-curl|memory-urlsession|add COUNT BASE-URL"
            + " | load-raw|load-curl|load-urlsession|load-send-curl|load-send-urlsession COUNT BASE-URL [IN-FLIGHT]"
            + " | upload-raw|upload-curl|upload-urlsession SIZE BASE-URL FILE"
            + " | slow-curl|slow-urlsession SECONDS BASE-URL [LIMIT-MIB] | download-raw|download-curl|download-urlsession SIZE BASE-URL FILE"
            + " | ttfb-send-curl|ttfb-stream-curl|ttfb-send-urlsession|ttfb-stream-urlsession COUNT BASE-URL"
            + " | tls-connect-curl COUNT HTTPS-BASE-URL CA-FILE | tls-load-send-curl COUNT HTTPS-BASE-URL CA-FILE [IN-FLIGHT]"
            + " | resources-memory[-shared]|resource-load|resource-unobserved|model-load|resource-send COUNT BASE-URL"
            + " | miss-cached|miss-uncached COUNT BASE-URL [IN-FLIGHT] | hit-memory COUNT BASE-URL")
    }
    let kind = arguments[0]
    let small = baseURL.appendingPathComponent("small.json")
    let report: ChildReport = switch kind {
    case "upload-raw", "upload-curl", "upload-urlsession":
        uploadChild(transport: childTransport(kind), size: count, baseURL: baseURL,
                    file: URL(fileURLWithPath: arguments.count > 3 ? arguments[3] : ""))
    case "memory-raw": memoryChild(count: count, client: RawSessionClient(url: small, maxConnections: 16))
    case "memory-curl", "memory-urlsession": memoryChild(count: count, client: CourierClient(
        childTransport(kind)!, baseURL: baseURL, maxConcurrentRequests: 16, request: { SmallEmptyRequest() }))
    case "add": addChild(count: count, baseURL: baseURL)
    case "slow-curl", "slow-urlsession":
        slowConsumerChild(transport: childTransport(kind)!, seconds: count, baseURL: baseURL,
                          limitMiB: arguments.count > 3 ? Int(arguments[3]) ?? 16 : 16)
    case "ttfb-send-curl", "ttfb-send-urlsession", "ttfb-stream-curl", "ttfb-stream-urlsession":
        timeToFirstByteChild(kind: kind, count: count, baseURL: baseURL)
    case "download-raw", "download-curl", "download-urlsession":
        downloadChild(transport: childTransport(kind), baseURL: baseURL,
                      file: URL(fileURLWithPath: arguments.count > 3 ? arguments[3] : ""))
    case "resources-memory", "resources-memory-shared":
        resourceMemoryChild(count: count, baseURL: baseURL, distinct: kind == "resources-memory")
    case "resource-load", "resource-unobserved", "model-load", "resource-send": resourceLoadChild(kind: kind, count: count, baseURL: baseURL)
    case "miss-cached", "miss-uncached":
        cacheMissChild(cached: kind == "miss-cached", count: count, baseURL: baseURL,
                       inFlight: arguments.count > 3 ? Int(arguments[3]) ?? 1 : 1)
    case "hit-memory": cacheHitChild(count: count, baseURL: baseURL)
    case "tls-load-send-curl":
        tlsLoadChild(count: count, baseURL: baseURL, ca: URL(fileURLWithPath: arguments.count > 3 ? arguments[3] : ""),
                     inFlight: arguments.count > 4 ? Int(arguments[4]) ?? 1 : 1)
    case "tls-connect-curl":
        tlsConnectChild(count: count, baseURL: baseURL, ca: URL(fileURLWithPath: arguments.count > 3 ? arguments[3] : ""))
    case "load-raw", "load-curl", "load-urlsession", "load-send-curl", "load-send-urlsession":
        loadChild(kind: kind, count: count, baseURL: baseURL, inFlight: arguments.count > 3 ? Int(arguments[3]) ?? 1 : 1)
    default: fail("unknown child \(kind)")
    }
    let encoder = JSONEncoder()
    let data = (try? encoder.encode(report)) ?? Data("{}".utf8)
    FileHandle.standardOutput.write(data + Data("\n".utf8))
    exit(0)
}

/// RSS growth over `count` requests, 16 in flight, after a warm-up that opens the connections.
private func memoryChild(count: Int, client: any LoadClient) -> ChildReport {
    var report = ChildReport(count: count)
    let warmUp = runLoad(client, total: 512, shape: .keepInFlight(16))
    Thread.sleep(forTimeInterval: 0.2)
    report.rssBefore = procStatus("VmRSS")
    let result = runLoad(client, total: count, shape: .keepInFlight(16), timeout: 280)
    Thread.sleep(forTimeInterval: 0.2)
    report.rssAfter = procStatus("VmRSS")
    report.peakRSS = procStatus("VmHWM")
    report.seconds = result.elapsed
    report.errors = warmUp.failed + result.failed
    report.firstError = warmUp.firstError ?? result.firstError
    withExtendedLifetime(client) {}
    return report
}

/// `count` requests with `inFlight` outstanding, after a warm-up: a process with one contender
/// only, to run under `perf stat` or `valgrind` (`CourierBench child load-curl 20000 URL 1`).
private func loadChild(kind: String, count: Int, baseURL: URL, inFlight: Int) -> ChildReport {
    let client: any LoadClient = if let transport = childTransport(kind), kind.hasPrefix("load-send-") {
        CourierSendClient(transport, baseURL: baseURL, maxConcurrentRequests: inFlight, request: { SmallEmptyRequest() })
    } else if let transport = childTransport(kind) {
        CourierClient(transport, baseURL: baseURL, maxConcurrentRequests: inFlight, request: { SmallEmptyRequest() })
    } else {
        RawSessionClient(url: baseURL.appendingPathComponent("small.json"), maxConnections: inFlight)
    }
    return measuredLoad(client, count: count, inFlight: inFlight, label: kind)
}

/// `count` requests through `client` with `inFlight` outstanding, after a warm-up of 100 that
/// opens the connections; the rate goes to standard error under `label`.
func measuredLoad(_ client: any LoadClient, count: Int, inFlight: Int, label: String) -> ChildReport {
    var report = ChildReport(count: count)
    let warmUp = runLoad(client, total: 100, shape: .keepInFlight(inFlight))
    let result = runLoad(client, total: count, shape: .keepInFlight(inFlight), timeout: 280)
    report.seconds = result.elapsed
    report.errors = warmUp.failed + result.failed
    report.firstError = warmUp.firstError ?? result.firstError
    FileHandle.standardError.write(Data("\(label): \(Int(result.requestsPerSecond)) req/s\n".utf8))
    return report
}

/// Adds `count` requests to a queue that runs 8 at a time; reports the time and RSS they take,
/// then releases the queue (cancelling them all).
private func addChild(count: Int, baseURL: URL) -> ChildReport {
    var report = ChildReport(count: count)
    var configuration = RequestQueueConfiguration.withoutCaching
    configuration.callbackQueue = DispatchQueue(label: "CourierBench.add")
    configuration.maxConcurrentRequests = 8
    var queue: RequestQueue? = RequestQueue(configuration: configuration, baseURL: baseURL)
    // Warm up: 16 requests to the end, so connections and the session exist before measuring.
    let warmUp = runLoad(CourierClientOn(queue: queue!), total: 16, shape: .keepInFlight(8))
    report.errors = warmUp.failed
    report.firstError = warmUp.firstError
    Thread.sleep(forTimeInterval: 0.1)
    report.rssBefore = procStatus("VmRSS")
    let start = now()
    var last = RequestID?.none
    for _ in 0..<count { last = queue!.add(SmallEmptyRequest()) }
    report.seconds = now() - start
    report.rssAfter = procStatus("VmRSS")
    // Releasing the queue cancels everything it holds; time it until the last request added
    // (the last to be cancelled) has told its observer.
    let cancelled = DispatchSemaphore(value: 0)
    queue!.addObserver(for: last!) { (result: Result<EmptyResponse, RequestError>) in
        if case .failure(.cancelled) = result {} else { FileHandle.standardError.write(Data("unexpected \(result)\n".utf8)) }
        cancelled.signal()
    }
    let releaseStart = now()
    queue = nil
    if cancelled.wait(timeout: .now() + 60) == .timedOut {
        report.errors += 1
        report.firstError = report.firstError ?? "releasing the queue did not cancel its last request within 60 s"
    }
    report.releaseSeconds = now() - releaseStart
    report.peakRSS = procStatus("VmHWM")
    return report
}

/// `CourierClient` over an existing queue (the `add` child's).
private struct CourierClientOn: LoadClient {
    let queue: RequestQueue
    var hopsToStart: Bool { false }
    func close() {}
    func start(_ done: @escaping @Sendable (Outcome) -> Void) {
        let id = queue.add(SmallEmptyRequest())
        queue.addObserver(for: id) { (result: Result<EmptyResponse, RequestError>) in
            switch result {
            case .success: done(.success(bytes: 0))
            case .failure(let error): done(.failure("\(error)"))
            }
        }
    }
}

/// Runs `CourierBench child …` and decodes its report; nil (and a log line) when it fails.
func spawnChild(_ arguments: [String], timeout: Double = 290, environment: [String: String] = [:]) -> ChildReport? {
    let process = Process()
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = ["child"] + arguments
    let output = Pipe()
    process.standardOutput = output
    do {
        try process.run()
    } catch {
        log("    could not start child \(arguments): \(error)")
        return nil
    }
    let watchdog = DispatchWorkItem { [process] in if process.isRunning { process.terminate() } }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    watchdog.cancel()
    guard process.terminationStatus == 0, let report = try? JSONDecoder().decode(ChildReport.self, from: data) else {
        log("    child \(arguments) failed with status \(process.terminationStatus)")
        return nil
    }
    return report
}

// MARK: - The figures

/// `add` of requests held back by maxConcurrentRequests 8: time per add and RSS per waiting
/// request, at 10,000 and 100,000 requests, each round in its own process.
func heldBackAddFigure(_ bench: Bench) -> [Row] {
    let small = bench.options.count(10_000, quick: 10_000)
    let large = bench.options.count(100_000, quick: 50_000)
    let base = bench.baseURL.absoluteString
    let tally = ChildTally()
    var reports: [Int: [ChildReport]] = [:]
    let results = interleaved(rounds: bench.rounds, [small, large].map { count in
        Contender("add \(grouped(count))") {
            guard let report = tally.run(["add", String(count), base]) else { return .nan }
            reports[count, default: []].append(report)
            return report.seconds * 1e9 / Double(count)
        }
    })
    guard let smallReports = reports[small], let largeReports = reports[large],
          !smallReports.isEmpty, !largeReports.isEmpty else {
        return [Row(figure: "add, maxConcurrentRequests 8", variant: "children failed", unit: "",
                    errors: max(1, tally.failures), note: tally.note)]
    }
    let bytes = { (reports: [ChildReport]) in Summary(reports.map { $0.growth / Double($0.count) }) }
    let release = { (reports: [ChildReport]) in Summary(reports.map { ($0.releaseSeconds ?? 0) * 1e9 / Double($0.count) }) }
    let figure = "add of requests held back by maxConcurrentRequests 8 (fresh process per round)"
    let failures = tally.failures
    return [
        Row(figure: figure, variant: "time per add, \(grouped(large)) vs \(grouped(small)) requests", unit: "ns/add",
            courier: results[1], baselineName: "\(grouped(small)) requests", baseline: results[0],
            target: .ratioAtMost(1.25), errors: failures,
            note: "constant if the ratio is ≤ 1.25" + tally.note),
        Row(figure: figure, variant: "RSS per waiting request, \(grouped(large)) vs \(grouped(small))", unit: "bytes/request",
            courier: bytes(largeReports), baselineName: "\(grouped(small)) requests", baseline: bytes(smallReports),
            target: .ratioAtMost(1.25), errors: failures, note: "RSS after the adds minus RSS before, per request"),
        Row(figure: figure, variant: "releasing the queue (cancels all), per request", unit: "ns/request",
            courier: release(largeReports), baselineName: "\(grouped(small)) requests", baseline: release(smallReports),
            note: "informational"),
    ]
}

/// RSS growth over many requests, 16 in flight: raw URLSession against Courier through each
/// transport, each round a fresh child process per contender.
func memoryFigure(_ bench: Bench) -> [Row] {
    let count = bench.options.memoryCount
    let base = bench.baseURL.absoluteString
    let tally = ChildTally()
    var peaks: [String: [Double]] = [:]
    var rates: [String: [Double]] = [:]
    let names = [rawName] + CourierTransport.allCases.map(\.name)
    let results = measure(bench, zip(childKinds("memory"), names).map { kind, name in
        Contender(name) {
            guard let report = tally.run([kind, String(count), base]) else { return .nan }
            peaks[name, default: []].append(Double(report.peakRSS) / 1e6)
            rates[name, default: []].append(Double(report.count) / report.seconds)
            return report.growth / 1e6
        }
    })
    let medians = { (values: [String: [Double]]) in
        names.map { "\($0) \(values[$0].map { format(Summary($0).median) } ?? "?")" }.joined(separator: ", ")
    }
    return [networkRow("RSS growth over \(grouped(count)) requests, 16 in flight (fresh process per round)",
                       "EmptyResponse, add + ID observer", unit: "MB", results: results, courier: \.name,
                       target: .ratioAtMost(1.0), errors: tally.failures,
                       note: "peak RSS (median, MB): \(medians(peaks)); req/s: \(medians(rates))" + tally.note)]
}

/// Errors of a figure's child processes.
final class ChildTally {
    private(set) var failures = 0
    private var firstError: String?

    /// Runs a child (`spawnChild`) and counts its errors; nil when it failed.
    func run(_ arguments: [String], timeout: Double = 290, environment: [String: String] = [:]) -> ChildReport? {
        guard let report = spawnChild(arguments, timeout: timeout, environment: environment) else {
            failures += 1
            firstError = firstError ?? "child \(arguments.first ?? "") failed"
            return nil
        }
        record(errors: report.errors, firstError: report.firstError)
        return report
    }

    func record(errors: Int, firstError: String?) {
        failures += errors
        self.firstError = self.firstError ?? firstError
    }

    /// "; 2 errors, first: …", or nothing.
    var note: String {
        failures > 0 ? "; \(failures) errors, first: \(firstError ?? "?")" : ""
    }
}
