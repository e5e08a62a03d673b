import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// The streaming figures: time to the first byte of a stream against a buffered request, a slow
// consumer of a 256 MiB stream (memory), and a 1 GiB download to a file. Scripts/bench.sh serves
// the large bodies as sparse files (zeros), without compression.

/// The 256 MiB body the slow consumer reads.
struct StreamFileRequest: Request {
    typealias ResponseType = EmptyResponse
    var path: String { "/stream-256MiB.bin" }
    var method: HTTPMethod { .get }
}

let streamFileSize = 256 << 20

/// Runs `operation` in a task and waits for its result on the calling (non-async) thread.
func blockingAwait<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let value = await operation()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}

/// The median of some values (of one round's requests).
func median(_ values: [Double]) -> Double {
    values.isEmpty ? .nan : Summary(values).median
}

// MARK: - Time to first byte

/// What one round of sequential requests measured: each request's time, and errors.
struct LatencyRound: Sendable {
    var times: [Double] = []
    /// For streams: each request's time to the end of its body.
    var totals: [Double] = []
    var errors = 0
    var firstError: String?

    mutating func failed(_ message: String) {
        errors += 1
        firstError = firstError ?? message
    }

    /// Adds another part of the same round.
    mutating func add(_ other: LatencyRound) {
        times += other.times
        totals += other.totals
        errors += other.errors
        firstError = firstError ?? other.firstError
    }
}

/// The errors over a latency figure's rounds, and its contenders: each round is `count`
/// sequential requests, whose median time (µs) is the round's value.
final class LatencyTally {
    let count: Int
    private(set) var errors = 0
    private(set) var firstError: String?
    /// For streams: each round's median time to the end of the body (µs), by contender.
    private(set) var totals: [String: [Double]] = [:]

    init(count: Int) {
        self.count = count
    }

    /// "; N errors, first: …", or nothing.
    var errorNote: String { errors > 0 ? "; \(errors) errors, first: \(firstError ?? "?")" : "" }

    /// A contender that warms up with 50 requests, then runs `count` per round.
    func contender(_ name: String, _ round: @escaping (Int) -> LatencyRound) -> Contender {
        Contender(name, warmUp: { [self] in
            let warm = round(50)
            errors += warm.errors
            firstError = firstError ?? warm.firstError.map { "\(name) (warm-up): \($0)" }
        }, round: { [self] in
            let result = round(count)
            errors += result.errors
            firstError = firstError ?? result.firstError.map { "\(name): \($0)" }
            if !result.totals.isEmpty { totals[name, default: []].append(median(result.totals) * 1e6) }
            return median(result.times) * 1e6
        })
    }
}

/// `count` buffered `send`s of `request` one after another (the small JSON by default); each
/// one's time to its result.
func sendRound<R: Request>(_ queue: RequestQueue, count: Int, request: R = SmallEmptyRequest()) -> LatencyRound {
    blockingAwait {
        var round = LatencyRound()
        round.times.reserveCapacity(count)
        for _ in 0..<count {
            let start = now()
            do {
                _ = try await queue.send(request)
                round.times.append(now() - start)
            } catch {
                round.failed("\(error)")
            }
        }
        return round
    }
}

/// `count` streams one after another; each one's time until its first chunk is in the consumer's
/// hands, and until its body has ended (the next stream starts after that).
private func streamRound(_ queue: RequestQueue, count: Int) -> LatencyRound {
    blockingAwait {
        var round = LatencyRound()
        round.times.reserveCapacity(count)
        for _ in 0..<count {
            let start = now()
            let stream = queue.stream(SmallEmptyRequest())
            var chunks = stream.makeAsyncIterator()
            do {
                guard let first = try await chunks.next(), !first.isEmpty else {
                    round.failed("empty body")
                    continue
                }
                round.times.append(now() - start)
                while try await chunks.next() != nil {}
                round.totals.append(now() - start)
            } catch {
                round.failed("\(error)")
            }
        }
        return round
    }
}

/// `count` raw URLSession data tasks one after another; each one's time to its completion handler.
private func rawRound(_ session: URLSession, url: URL, count: Int) -> LatencyRound {
    var round = LatencyRound()
    round.times.reserveCapacity(count)
    let done = DispatchSemaphore(value: 0)
    let failure = Mutex<String?>(nil)
    for _ in 0..<count {
        let start = now()
        session.dataTask(with: url) { data, response, error in
            if let error {
                failure.withLock { $0 = "\(error)" }
            } else if (response as? HTTPURLResponse)?.statusCode != 200 || data?.isEmpty != false {
                failure.withLock { $0 = "status \((response as? HTTPURLResponse)?.statusCode ?? 0)" }
            }
            done.signal()
        }.resume()
        if done.wait(timeout: .now() + 30) == .timedOut {
            round.failed("no answer within 30 s")
            continue
        }
        if let message = failure.withLock({ state -> String? in defer { state = nil }; return state }) {
            round.failed(message)
        } else {
            round.times.append(now() - start)
        }
    }
    return round
}

func timeToFirstByteFigure(_ bench: Bench) -> [Row] {
    let count = bench.options.count(1_000, quick: 200)
    let tally = LatencyTally(count: count)
    let contender = tally.contender
    let send = { (transport: CourierTransport) in "\(transport.name) send" }
    let stream = { (transport: CourierTransport) in "\(transport.name) stream" }
    let rawSession = URLSession(configuration: .default)
    defer { rawSession.finishTasksAndInvalidate() }
    let url = smallURL(bench)
    var contenders = [contender(rawName) { rawRound(rawSession, url: url, count: $0) }]
    for transport in CourierTransport.allCases {
        // One queue per contender, so that each keeps its own connection.
        let configuration = transport.configuration(label: "CourierBench.ttfb", maxConcurrentRequests: 1)
        let sendQueue = RequestQueue(configuration: configuration, baseURL: bench.baseURL)
        let streamQueue = RequestQueue(configuration: configuration, baseURL: bench.baseURL)
        contenders.append(contender(send(transport)) { sendRound(sendQueue, count: $0) })
        contenders.append(contender(stream(transport)) { streamRound(streamQueue, count: $0) })
    }
    let results = measure(bench, contenders)
    let figure = "Time to first byte of a stream against a buffered request's time to completion, small JSON, one at a time (\(grouped(count)) per round)"
    let totalText = CourierTransport.allCases.map { transport in
        "\(transport.name) \(tally.totals[stream(transport)].map { format(Summary($0).median) } ?? "?") µs"
    }.joined(separator: ", ")
    let rawText = results[rawName].map { format($0.median) } ?? "?"
    return CourierTransport.allCases.map { transport in
        Row(figure: figure, variant: "\(transport.name): stream's first chunk in the consumer's hands", unit: "µs",
            courier: results[stream(transport)], baselineName: "\(send(transport)) of the same request, to its result",
            baseline: results[send(transport)], target: .ratioAtMost(1.1), errors: tally.errors,
            note: "value per round: the median request; raw URLSession's data task to its completion handler, for"
                + " context: \(rawText) µs; stream to the end of its body:"
                + " \(totalText)" + tally.errorNote)
    }
}

/// `count` sequential sends or streams (`ttfb-send-curl`, `ttfb-stream-urlsession`…) after 100 for
/// warm-up, in a process of their own, to run under `perf stat`; prints the median time to stderr.
func timeToFirstByteChild(kind: String, count: Int, baseURL: URL) -> ChildReport {
    let transport = childTransport(kind) ?? .curl
    let configuration = transport.configuration(label: "CourierBench.ttfb", maxConcurrentRequests: 1)
    let queue = RequestQueue(configuration: configuration, baseURL: baseURL)
    let streams = kind.hasPrefix("ttfb-stream")
    let run = { (count: Int) in streams ? streamRound(queue, count: count) : sendRound(queue, count: count) }
    let warmUp = run(100)
    let start = now()
    let round = run(count)
    var report = ChildReport(count: count)
    report.seconds = now() - start
    report.errors = warmUp.errors + round.errors
    report.firstError = warmUp.firstError ?? round.firstError
    FileHandle.standardError.write(Data("\(kind): median \(format(median(round.times) * 1e6)) µs\n".utf8))
    return report
}

// MARK: - Slow consumer

/// Reads the 256 MiB stream at `rate` bytes/s for `seconds`, through `transport`, in a fresh
/// process; reports the bytes consumed and the RSS the stream added (VmHWM after resetting it
/// just before the stream, minus VmRSS then).
func slowConsumerChild(transport: CourierTransport, seconds: Int, baseURL: URL, limitMiB: Int) -> ChildReport {
    let rate = 1e6
    var report = ChildReport()
    var configuration = transport.configuration(label: "CourierBench.slow", maxConcurrentRequests: 2)
    configuration.timeoutInterval = 30
    let queue = RequestQueue(configuration: configuration, baseURL: baseURL)
    // Warm up: one request through the transport, so that libcurl or the session and the
    // connection exist before the baseline reading.
    let warmUp = blockingAwait { () -> String? in
        do { _ = try await queue.send(SmallEmptyRequest()); return nil } catch { return "\(error)" }
    }
    if let warmUp { report.errors += 1; report.firstError = "warm-up: \(warmUp)" }
    Thread.sleep(forTimeInterval: 0.2)
    report.rssBefore = procStatus("VmRSS")
    // "5" resets VmHWM to the current RSS (Linux 4.0 and later).
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    let sampler = RSSSampler(interval: 0.05)

    var streamOptions = StreamOptions()
    if transport == .urlSession { streamOptions.maximumBufferSize = limitMiB << 20 }
    let options = streamOptions
    let ending = Mutex<StreamedResponse?>(nil)
    let ended = DispatchSemaphore(value: 0)
    let window = Double(seconds)
    struct Outcome: Sendable {
        var consumed = 0
        var chunks = 0
        var largestChunk = 0
        var seconds = 0.0
        var complete = false
        var error: String?
        var rssAtEnd = 0
    }
    let outcome = blockingAwait { () -> Outcome in
        var outcome = Outcome()
        let stream = queue.stream(StreamFileRequest(), options: options)
        queue.addObserver(for: stream.id) { (result: Result<StreamedResponse, RequestError>) in
            if case .success(let response) = result { ending.withLock { $0 = response } }
            ended.signal()
        }
        let start = now()
        do throws(RequestError) {
            var chunks = stream.makeAsyncIterator()
            while now() - start < window {
                guard let chunk = try await chunks.next() else {
                    outcome.complete = true
                    break
                }
                outcome.consumed += chunk.count
                outcome.chunks += 1
                outcome.largestChunk = max(outcome.largestChunk, chunk.count)
                // Keep to `rate`: the next read is due once the bytes read so far have taken their time.
                let wait = min(Double(outcome.consumed) / rate, window) - (now() - start)
                if wait > 0 { try? await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
            }
        } catch {
            outcome.error = shortDescription(error)
        }
        outcome.seconds = now() - start
        outcome.rssAtEnd = procStatus("VmRSS")
        stream.cancel()
        return outcome
    }
    if ended.wait(timeout: .now() + 10) == .timedOut {
        report.errors += 1
        report.firstError = report.firstError ?? "the stream's observer got no result within 10 s of its end"
    }
    report.samples = sampler.stop()
    report.peakRSS = max(procStatus("VmHWM"), report.samples?.max() ?? 0)
    report.rssAfter = outcome.rssAtEnd
    report.seconds = outcome.seconds
    report.count = outcome.consumed
    report.chunks = outcome.chunks
    report.largestChunk = outcome.largestChunk
    report.bytesReceived = ending.withLock { $0.map { Int($0.bytesReceived) } }
    report.ending = outcome.complete ? "whole body read" : outcome.error ?? "window over"
    // The curl transport must read the window through; URLSession's ending with a limit is the
    // expected contrast, not an error.
    if transport == .curl, let error = outcome.error {
        report.errors += 1
        report.firstError = report.firstError ?? error
    }
    if outcome.complete, outcome.consumed != streamFileSize {
        report.errors += 1
        report.firstError = report.firstError ?? "the body had \(outcome.consumed) bytes, not \(streamFileSize)"
    }
    withExtendedLifetime(queue) {}
    return report
}

/// A stream's error in a few words: the buffer limit's case, or the error's own description.
func shortDescription(_ error: RequestError) -> String {
    switch error {
    case .streamLimitExceeded(.bufferSize(let limit)): "ended with RequestError.streamLimitExceeded(.bufferSize(\(limit)))"
    default: "\(error)"
    }
}

/// Samples this process's VmRSS every `interval` seconds; the samples in bytes.
final class RSSSampler: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let samples = Mutex<[Int]>([])
    private let done = DispatchSemaphore(value: 0)

    init(interval: Double) {
        Thread.detachNewThread { [self] in
            while !stopped.load(ordering: .acquiring) {
                let value = procStatus("VmRSS")
                samples.withLock { $0.append(value) }
                usleep(UInt32(interval * 1e6))
            }
            done.signal()
        }
    }

    func stop() -> [Int] {
        stopped.store(true, ordering: .releasing)
        done.wait()
        return samples.withLock { $0 }
    }
}

func slowConsumerFigure(_ bench: Bench) -> [Row] {
    let seconds = bench.options.slowSeconds
    let limit = bench.options.slowLimitMiB
    let base = bench.baseURL.absoluteString
    let rounds = min(bench.rounds, 3)
    let tally = ChildTally()
    var reports: [CourierTransport: [ChildReport]] = [:]
    let results = measure(bench, rounds: rounds, CourierTransport.allCases.map { transport in
        Contender(transport.name) {
            let kind = transport == .curl ? "slow-curl" : "slow-urlsession"
            guard let report = tally.run([kind, String(seconds), base, String(limit)], timeout: Double(seconds) + 60) else {
                return .nan
            }
            reports[transport, default: []].append(report)
            log("      \(transport.name): \(describeSlow(report))")
            return Double(report.peakRSS - report.rssBefore) / 1e6
        }
    })
    let figure = "Slow consumer (1 MB/s) of a 256 MiB stream, first \(seconds) s (fresh process per round, \(rounds) rounds)"
    let curl = reports[.curl] ?? []
    let session = reports[.urlSession] ?? []
    let mb = { (values: [Double]) in values.isEmpty ? "?" : format(Summary(values).median) }
    // RSS growth over the samples in each quarter of the window, to show that it stays flat.
    let quarters = (1...4).map { quarter in
        mb(curl.compactMap { report -> Double? in
            guard let samples = report.samples, !samples.isEmpty else { return nil }
            let slice = samples[(samples.count * (quarter - 1) / 4)..<max(samples.count * quarter / 4, 1)]
            return Double((slice.max() ?? 0) - report.rssBefore) / 1e6
        })
    }.joined(separator: ", ")
    let curlNote = "peak RSS growth = VmHWM (reset just before the stream) − VmRSS before it, after a warm-up"
        + " request; consumed \(mb(curl.map { Double($0.count) / 1e6 })) MB at"
        + " \(mb(curl.map { Double($0.count) / 1e6 / $0.seconds })) MB/s in chunks of up to"
        + " \(mb(curl.map { Double($0.largestChunk ?? 0) / 1024 })) KiB; arrived but not consumed when the"
        + " window ended: \(mb(curl.map { Double(($0.bytesReceived ?? 0) - $0.count) / 1e6 })) MB; RSS growth by quarter of the window (max"
        + " of 50 ms samples, MB): \(quarters). The transfer is paused with 1 MiB waiting and resumed at"
        + " half, so after the first second the same memory is reused: the window shows the bound (a full"
        + " 268 s run is in the analysis)" + tally.note
    let growths = session.map { format(Double($0.peakRSS - $0.rssBefore) / 1e6) }.joined(separator: ", ")
    let sessionNote = session.first.map { first in
        "maximumBufferSize \(limit) MiB; first round: \(describeSlow(first)); peak RSS growth by round:"
            + " \(growths) MB. A growth far above the limit is URLSession reading on after the stream"
            + " ended and its task was cancelled (see the analysis)"
    } ?? "no run"
    return [
        Row(figure: figure, variant: "Courier curl (pauses the transfer), peak RSS growth", unit: "MB",
            courier: results[CourierTransport.curl.name], baselineName: "— (absolute target)",
            target: .valueAtMost(16, unit: "MB"), errors: tally.failures, note: curlNote),
        Row(figure: figure, variant: "Courier URLSession (cannot pause), peak RSS growth", unit: "MB",
            courier: results[CourierTransport.urlSession.name], baselineName: "— (contrast, no target)",
            note: sessionNote),
    ]
}

/// "consumed 1.1 MB in 0.05 s; the transport delivered 17 MB; ended: …; RSS +18 MB".
func describeSlow(_ report: ChildReport) -> String {
    let received = report.bytesReceived.map { ", \(format(Double($0) / 1e6)) MB arrived" } ?? ""
    return "read \(format(Double(report.count) / 1e6)) MB in \(format(report.seconds)) s\(received),"
        + " \(report.ending ?? "?"); peak RSS growth \(format(Double(report.peakRSS - report.rssBefore) / 1e6)) MB"
}

// MARK: - 1 GiB download to a file

/// The 1 GiB body of the download figure.
struct DownloadFileRequest: Request {
    typealias ResponseType = EmptyResponse
    var path: String { "/download-1GiB.bin" }
    var method: HTTPMethod { .get }
}

let downloadFileSize = 1 << 30

/// Where the downloads go; each contender's file is deleted after its round.
let downloadDirectory = ".build/bench/downloads"

/// A child that downloads the 1 GiB file to `file`, by Courier's `download` through `transport`, or
/// (`transport` nil) by `downloadTask` and a move to `file`; reports the time until the file is in
/// place and the peak RSS.
func downloadChild(transport: CourierTransport?, baseURL: URL, file: URL) -> ChildReport {
    var report = ChildReport()
    let url = baseURL.appendingPathComponent("download-1GiB.bin")
    let outcome = Mutex<String?>(nil)
    let start = now()
    if let transport {
        let configuration = transport.configuration(label: "CourierBench.download", maxConcurrentRequests: 2)
        let queue = RequestQueue(configuration: configuration, baseURL: baseURL)
        let error = blockingAwait { () -> String? in
            do {
                let downloaded = try await queue.download(DownloadFileRequest(), to: file).file
                return downloaded.resumedAt == 0 ? nil : "resumed at \(downloaded.resumedAt)"
            } catch {
                return "\(error)"
            }
        }
        outcome.withLock { $0 = error }
        withExtendedLifetime(queue) {}
    } else {
        let done = DispatchSemaphore(value: 0)
        // The session writes to a temporary file in NSTemporaryDirectory(), which the figure
        // points (TMPDIR) at the download directory, so that the move is a rename.
        URLSession.shared.downloadTask(with: url) { location, response, error in
            if let error {
                outcome.withLock { $0 = "\(error)" }
            } else if (response as? HTTPURLResponse)?.statusCode != 200 {
                outcome.withLock { $0 = "status \((response as? HTTPURLResponse)?.statusCode ?? 0)" }
            } else if let location {
                do {
                    try? FileManager.default.removeItem(at: file)
                    try FileManager.default.moveItem(at: location, to: file)
                } catch {
                    outcome.withLock { $0 = "moving the file: \(error)" }
                }
            } else {
                outcome.withLock { $0 = "no file" }
            }
            done.signal()
        }.resume()
        if done.wait(timeout: .now() + 270) == .timedOut { outcome.withLock { $0 = "timed out" } }
    }
    report.seconds = now() - start
    report.peakRSS = procStatus("VmHWM")
    report.count = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
    if let error = outcome.withLock({ $0 }) {
        report.errors = 1
        report.firstError = error
    } else if report.count != downloadFileSize {
        report.errors = 1
        report.firstError = "the file has \(report.count) bytes, not \(downloadFileSize)"
    }
    return report
}

func downloadFigure(_ bench: Bench) -> [Row] {
    let base = bench.baseURL.absoluteString
    let tally = ChildTally()
    var peaks: [String: [Double]] = [:]
    let rounds = min(bench.rounds, 3)
    let directory = URL(fileURLWithPath: downloadDirectory)
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let baseline = "URLSession downloadTask"
    /// Each round's file, deleted (with anything else in the directory) once the round is measured.
    func cleanUp() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }
    cleanUp()
    /// Before each round, untimed: the page cache's dirty data (other figures' files, the last
    /// round's) goes to the disk, so that no contender's writes wait behind it and Courier's
    /// flush of its own file (fsync) writes that file only.
    func settle() { sync() }
    var contenders = zip(childKinds("download"), [baseline] + CourierTransport.allCases.map(\.name)).map { kind, name in
        Contender(name) {
            defer { cleanUp() }
            settle()
            let file = directory.appendingPathComponent("\(kind).bin")
            guard let report = tally.run([kind, String(downloadFileSize), base, file.path], timeout: 280,
                                         environment: ["TMPDIR": directory.path]) else { return .nan }
            peaks[name, default: []].append(Double(report.peakRSS) / 1e6)
            return Double(downloadFileSize) / 1e6 / report.seconds
        }
    }
    if FileManager.default.isExecutableFile(atPath: curlCommandPath) {
        contenders.append(Contender(commandLineName) {
            defer { cleanUp() }
            settle()
            let file = directory.appendingPathComponent("curl.bin")
            let arguments = ["-sS", "-o", file.path, "-w", "%{http_code} %{size_download}", base + "/download-1GiB.bin"]
            let run = runCommand(curlCommandPath, arguments, samplingPeak: true)
            guard let run, run.status == 0, run.output == "200 \(downloadFileSize)", let peak = run.peakRSS else {
                let what = run.map { "status \($0.status), \($0.output) \($0.errorOutput)" } ?? "not started"
                tally.record(errors: 1, firstError: "curl download: " + what)
                return .nan
            }
            peaks[commandLineName, default: []].append(Double(peak) / 1e6)
            return Double(downloadFileSize) / 1e6 / run.seconds
        })
    }
    let results = measure(bench, rounds: rounds, contenders)
    let figure = "Download of a 1 GiB file to disk (fresh process per round, \(rounds) rounds)"
    let note = "MB/s: the file's bytes over the time until the file is complete at its destination"
        + " (downloadTask: its temporary file moved there); curl command line: -o FILE" + tally.note
    return [
        networkRow(figure, "to a file under .build/bench", unit: "MB/s", results: results, baseline: baseline,
                   courier: \.name, commandLine: commandLineName, target: .ratioAtLeast(1.0),
                   commandLineTarget: .ratioAtLeast(0.8), errors: tally.failures, note: note),
        networkRow(figure, "peak RSS of the process", unit: "MB", results: peaks.mapValues(Summary.init),
                   baseline: baseline, courier: \.name, commandLine: commandLineName,
                   target: .valueAtMost(64, unit: "MB"), errors: tally.failures),
    ]
}
