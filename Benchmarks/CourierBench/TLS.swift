import Courier
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// The HTTPS figures: the same JSON from two TLS 1.3 servers of the same nginx (HTTP/1.1 only, and
// HTTP/2 over ALPN) whose certificate a private CA signed. Courier trusts that CA through
// `trustedCertificates`, as users do; curl's command line through `--cacert`. Only the curl
// transport: URLSession on Linux takes no extra roots. nginx's stub_status counts connections for
// all its servers, so the plain server's /status (`Bench.statusURL`) counts these too.

/// The HTTPS servers and the CA, or nil (with a log line) when bench.sh did not pass them.
private func tlsSetup(_ bench: Bench) -> (http1: URL, http2: URL, ca: URL)? {
    guard let http1 = bench.options.tlsURL, let http2 = bench.options.tlsHTTP2URL, let ca = bench.options.tlsCA else {
        log("    skipped: needs --tls-url, --tls-http2-url and --tls-ca (run Scripts/bench.sh)")
        return nil
    }
    return (http1, http2, ca)
}

/// CPU time (user + system) in seconds of this process (`RUSAGE_SELF`) or of its reaped children
/// (`RUSAGE_CHILDREN`: the curl processes).
private func cpuSeconds(_ who: __rusage_who) -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(who.rawValue), &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Per round: milliseconds per request, and CPU milliseconds per new connection nginx accepted.
private final class ConnectSamples {
    var cpuPerConnection: [String: [Double]] = [:]
    var connectionsPerRequest: [String: [Double]] = [:]
}

/// A contender for the connect figure: `round` sends `count` requests and returns their
/// outcomes; the sample is ms per request, and CPU per new connection goes to `samples`.
private func connectContender(_ name: String, count: Int, bench: Bench, samples: ConnectSamples, tally: ErrorTally,
                              cpu: __rusage_who, round: @escaping () -> LoadResult) -> Contender {
    Contender(name, warmUp: { tally.record(round(), contender: name + " (warm-up)") }, round: {
        let before = acceptedConnections(bench.statusURL)
        let cpuBefore = cpuSeconds(cpu)
        let result = round()
        let cpuUsed = cpuSeconds(cpu) - cpuBefore
        let after = acceptedConnections(bench.statusURL)
        tally.record(result, contender: name)
        if let before, let after, after > before {
            // The status request itself is on a kept-alive connection of its own (plain HTTP).
            samples.cpuPerConnection[name, default: []].append(cpuUsed * 1_000 / Double(after - before))
            samples.connectionsPerRequest[name, default: []].append(Double(after - before) / Double(count))
        }
        return result.elapsed * 1_000 / Double(count)
    })
}

/// Sends `count` GETs of /small.json, each from a queue of its own made for it (and released after it).
private func newQueueRequests(count: Int, baseURL: URL, ca: URL) -> LoadResult {
    var result = LoadResult(elapsed: 0, succeeded: 0, failed: 0, bytes: 0)
    let start = now()
    for _ in 0..<count {
        let client = CourierClient(.curl, baseURL: baseURL, maxConcurrentRequests: 1, trusting: [ca],
                                   request: { SmallEmptyRequest() })
        let one = runLoad(client, total: 1, shape: .keepInFlight(1), timeout: 30)
        result.succeeded += one.succeeded
        result.failed += one.failed
        result.firstError = result.firstError ?? one.firstError
    }
    result.elapsed = now() - start
    return result
}

struct CloseRequest: Request {
    typealias ResponseType = EmptyResponse
    var path: String { "/close.json" }
    var method: HTTPMethod { .get }
}

func tlsConnectFigure(_ bench: Bench) -> [Row] {
    guard let tls = tlsSetup(bench) else { return [] }
    let (http1, ca) = (tls.http1, tls.ca)
    let count = bench.options.count(100, quick: 30)
    let tally = ErrorTally(bench)
    let samples = ConnectSamples()
    let newQueue = "Courier curl, a new queue per request"
    let reconnect = "Courier curl, one queue, server closes after each response"
    let commandLine = "curl command line, server closes after each response"
    let closeURL = http1.appendingPathComponent("close.json")
    let oneQueue = CourierClient(.curl, baseURL: http1, maxConcurrentRequests: 1, trusting: [ca], request: { CloseRequest() })
    var contenders = [
        connectContender(newQueue, count: count, bench: bench, samples: samples, tally: tally, cpu: RUSAGE_SELF) {
            newQueueRequests(count: count, baseURL: http1, ca: ca)
        },
        connectContender(reconnect, count: count, bench: bench, samples: samples, tally: tally, cpu: RUSAGE_SELF) {
            runLoad(oneQueue, total: count, shape: .keepInFlight(1))
        },
    ]
    if let command = CurlCommand(url: closeURL, count: count, extraArguments: ["--cacert", ca.path]) {
        contenders.append(connectContender(commandLine, count: count, bench: bench, samples: samples, tally: tally,
                                           cpu: RUSAGE_CHILDREN, round: command.run))
    }
    let results = measure(bench, contenders)
    let summary = { (values: [Double]?) in values.flatMap { $0.isEmpty ? nil : Summary($0) } }
    let figure = "HTTPS (TLS 1.3, HTTP/1.1), new connections (\(count) requests per round)"
    let connections = samples.connectionsPerRequest.map { "\($0.key) \(format(Summary($0.value).median))" }
        .sorted().joined(separator: ", ")
    let note = [tally.note, "new connections per request (median): " + connections]
        .filter { !$0.isEmpty }.joined(separator: "; ")
    return [
        Row(figure: figure, variant: "time per request: \(newQueue) (queue made, one GET, result)", unit: "ms",
            courier: results[newQueue], baselineName: commandLine, baseline: results[commandLine],
            target: .valueAtMost(6, unit: "ms"), errors: tally.count, note: note),
        Row(figure: figure, variant: "CPU per new connection: \(newQueue)", unit: "ms",
            courier: summary(samples.cpuPerConnection[newQueue]), baselineName: commandLine,
            baseline: summary(samples.cpuPerConnection[commandLine]), target: .valueAtMost(3, unit: "ms"),
            errors: tally.count, note: note),
        Row(figure: figure, variant: "time per request: \(reconnect)", unit: "ms",
            courier: results[reconnect], baselineName: commandLine, baseline: results[commandLine],
            target: .none, errors: tally.count, note: note),
        Row(figure: figure, variant: "CPU per new connection: \(reconnect)", unit: "ms",
            courier: summary(samples.cpuPerConnection[reconnect]), baselineName: commandLine,
            baseline: summary(samples.cpuPerConnection[commandLine]), target: .valueAtMost(3, unit: "ms"),
            errors: tally.count, note: note),
    ]
}

func tlsLoadFigure(_ bench: Bench) -> [Row] {
    guard let tls = tlsSetup(bench) else { return [] }
    let (http1, http2, ca) = (tls.http1, tls.http2, tls.ca)
    let total = bench.options.count(8_000, quick: 1_000)
    var rows: [Row] = []
    for (protocolName, baseURL) in [("HTTP/1.1", http1), ("HTTP/2", http2)] {
        for inFlight in [16, 64] {
            let tally = ErrorTally(bench)
            let shape = LoadShape.keepInFlight(inFlight)
            let send = "Courier curl async send, \(protocolName), \(inFlight) in flight"
            let add = "Courier curl add + ID observer, \(protocolName), \(inFlight) in flight"
            let results = measure(bench, [
                loadContender(send, CourierSendClient(.curl, baseURL: baseURL, maxConcurrentRequests: inFlight, trusting: [ca],
                                                      request: { SmallEmptyRequest() }),
                              total: total, shape: shape, tally: tally),
                loadContender(add, CourierClient(.curl, baseURL: baseURL, maxConcurrentRequests: inFlight, trusting: [ca],
                                                 request: { SmallEmptyRequest() }),
                              total: total, shape: shape, tally: tally),
                commandLineContender(url: baseURL.appendingPathComponent("small.json"), total: total, parallel: inFlight,
                                     extraArguments: ["--cacert", ca.path], tally: tally),
            ])
            let figure = "HTTPS requests/s, \(protocolName), \(inFlight) in flight (\(grouped(total)) per round; "
                + "curl command line: --parallel-max \(inFlight) --cacert)"
            for (variant, name) in [("EmptyResponse, async send", send), ("EmptyResponse, add + ID observer", add)] {
                rows.append(Row(figure: figure, variant: variant, unit: "req/s", courier: results[name],
                                baselineName: commandLineName, baseline: results[commandLineName],
                                target: .ratioAtLeast(1.0), errors: tally.count, note: tally.note))
            }
        }
    }
    return rows
}

func tlsBurstFigure(_ bench: Bench) -> [Row] {
    guard let tls = tlsSetup(bench) else { return [] }
    let (http1, http2, ca) = (tls.http1, tls.http2, tls.ca)
    let size = 64
    let bursts = bench.options.count(10, quick: 4)
    var rows: [Row] = []
    for (protocolName, baseURL) in [("HTTP/2", http2), ("HTTP/1.1", http1)] {
        let tally = ErrorTally(bench)
        let samples = ConnectSamples()
        let courier = "Courier curl, \(protocolName), a new queue per burst"
        let commandLine = "curl command line, \(protocolName), one process per burst"
        var contenders = [
            connectContender(courier, count: size * bursts, bench: bench, samples: samples, tally: tally, cpu: RUSAGE_SELF) {
                var result = LoadResult(elapsed: 0, succeeded: 0, failed: 0, bytes: 0)
                for _ in 0..<bursts {
                    let client = CourierClient(.curl, baseURL: baseURL, maxConcurrentRequests: size, trusting: [ca],
                                               request: { SmallEmptyRequest() })
                    let one = runLoad(client, total: size, shape: .batches(size), timeout: 30)
                    result.elapsed += one.elapsed
                    result.succeeded += one.succeeded
                    result.failed += one.failed
                    result.firstError = result.firstError ?? one.firstError
                }
                return result
            },
        ]
        if let command = CurlCommand(url: baseURL.appendingPathComponent("small.json"), count: size, parallel: size,
                                     extraArguments: ["--cacert", ca.path]) {
            contenders.append(connectContender(commandLine, count: size * bursts, bench: bench, samples: samples,
                                               tally: tally, cpu: RUSAGE_CHILDREN) {
                var result = LoadResult(elapsed: 0, succeeded: 0, failed: 0, bytes: 0)
                for _ in 0..<bursts {
                    let one = command.run()
                    result.elapsed += one.elapsed
                    result.succeeded += one.succeeded
                    result.failed += one.failed
                    result.firstError = result.firstError ?? one.firstError
                }
                return result
            })
        }
        let results = measure(bench, contenders)
        let perBurst = { (name: String) -> Summary? in
            samples.connectionsPerRequest[name].flatMap { $0.isEmpty ? nil : Summary($0.map { $0 * Double(size) }) }
        }
        let figure = "HTTPS, \(protocolName): a burst of \(size) GETs from a new queue (\(bursts) bursts per round)"
        rows.append(Row(figure: figure, variant: "new connections per burst", unit: "connections",
                        courier: perBurst(courier), baselineName: commandLine, baseline: perBurst(commandLine),
                        target: protocolName == "HTTP/2" ? .valueAtMost(1, unit: "connections") : .none,
                        errors: tally.count, note: tally.note))
        rows.append(Row(figure: figure, variant: "time per request, burst made and ended", unit: "ms",
                        courier: results[courier], baselineName: commandLine, baseline: results[commandLine],
                        target: .none, errors: tally.count, note: tally.note))
    }
    return rows
}

/// `count` new queues' first requests (`newQueueRequests`) after one untimed: a process with
/// that alone, to run under `perf stat` (`CourierBench child tls-connect-curl 100 HTTPS-URL CA`).
func tlsConnectChild(count: Int, baseURL: URL, ca: URL) -> ChildReport {
    let warmUp = newQueueRequests(count: 1, baseURL: baseURL, ca: ca)
    let result = newQueueRequests(count: count, baseURL: baseURL, ca: ca)
    var report = ChildReport(count: count)
    report.seconds = result.elapsed
    report.errors = warmUp.failed + result.failed
    report.firstError = warmUp.firstError ?? result.firstError
    return report
}

/// `count` sends, `inFlight` at a time, over HTTPS (HTTP/1.1 or HTTP/2, as the server offers):
/// a process with that alone, to profile (`CourierBench child tls-load-send-curl 20000 HTTPS-URL
/// CA 16`).
func tlsLoadChild(count: Int, baseURL: URL, ca: URL, inFlight: Int) -> ChildReport {
    let client = CourierSendClient(.curl, baseURL: baseURL, maxConcurrentRequests: inFlight, trusting: [ca],
                                   request: { SmallEmptyRequest() })
    return measuredLoad(client, count: count, inFlight: inFlight, label: "tls-load-send-curl")
}
