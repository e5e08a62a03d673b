import Dispatch
import Foundation
import Synchronization

// The harness: options, clocks, statistics, interleaved rounds, memory readings, result rows.

// MARK: - Options

struct Options {
    var baseURL: URL?
    /// Smaller counts and 3 rounds, for development. Figures then say they are quick.
    var quick = false
    var rounds = 7
    /// Keys of the figures to run; nil runs all.
    var only: Set<String>?
    /// Requests per memory-figure round (each round is one child process per contender).
    var memoryCount = 10_000
    /// Seconds the slow-consumer figure reads its 256 MiB stream for (the whole body takes 268 s).
    var slowSeconds = 20
    /// The URLSession slow consumer's `StreamOptions.maximumBufferSize`, in MiB.
    var slowLimitMiB = 16
    var writeReport = true
    var markdownPath = "BENCHMARKS.md"
    var svgPath = "Benchmarks/throughput.svg"
    /// How the run was started, for the report (Scripts/bench.sh passes it).
    var command = "CourierBench " + CommandLine.arguments.dropFirst().joined(separator: " ")
    var swiftVersion = "unknown (pass --swift-version)"
    var serverVersion = "nginx"
    /// The HTTPS figures' servers (HTTP/1.1 only, and HTTP/2) and the private CA that signed them.
    var tlsURL: URL?
    var tlsHTTP2URL: URL?
    var tlsCA: URL?

    /// `full` in a full run, `quick` with `--quick`.
    func count(_ full: Int, quick small: Int) -> Int { quick ? small : full }

    static let usage = """
        usage: CourierBench --base-url URL [--quick] [--rounds N] [--only key,key] [--memory-count N]
                            [--slow-seconds N] [--slow-limit-mib N] [--no-report] [--markdown PATH] [--svg PATH]
                            [--command TEXT] [--swift-version TEXT] [--server TEXT] [--list]
                            [--tls-url URL --tls-http2-url URL --tls-ca FILE]
        Scripts/bench.sh starts nginx and passes --base-url and the descriptive flags.
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        func value(_ flag: String) -> String {
            guard let value = iterator.next() else { fail("\(flag) needs a value") }
            return value
        }
        var roundsGiven = false
        var memoryGiven = false
        var slowGiven = false
        while let argument = iterator.next() {
            switch argument {
            case "--base-url":
                guard let url = URL(string: value(argument)) else { fail("--base-url needs a URL") }
                options.baseURL = url
            case "--quick": options.quick = true
            case "--rounds":
                options.rounds = max(1, Int(value(argument)) ?? 7)
                roundsGiven = true
            case "--only": options.only = Set(value(argument).split(separator: ",").map(String.init))
            case "--memory-count":
                options.memoryCount = max(1_000, Int(value(argument)) ?? 10_000)
                memoryGiven = true
            case "--slow-seconds":
                options.slowSeconds = max(1, Int(value(argument)) ?? 20)
                slowGiven = true
            case "--slow-limit-mib": options.slowLimitMiB = max(1, Int(value(argument)) ?? 16)
            case "--no-report": options.writeReport = false
            case "--markdown": options.markdownPath = value(argument)
            case "--svg": options.svgPath = value(argument)
            case "--command": options.command = value(argument)
            case "--swift-version": options.swiftVersion = value(argument)
            case "--server": options.serverVersion = value(argument)
            case "--tls-url": options.tlsURL = URL(string: value(argument))
            case "--tls-http2-url": options.tlsHTTP2URL = URL(string: value(argument))
            case "--tls-ca": options.tlsCA = URL(fileURLWithPath: value(argument))
            case "--list":
                for figure in allFigures { print(figure.key.padding(toLength: 16, withPad: " ", startingAt: 0), figure.title) }
                exit(0)
            case "--help", "-h":
                print(usage)
                exit(0)
            default: fail("unknown argument \(argument)\n\(usage)")
            }
        }
        if options.quick {
            if !roundsGiven { options.rounds = 3 }
            if !memoryGiven { options.memoryCount = 3_000 }
            if !slowGiven { options.slowSeconds = 5 }
        }
        return options
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("CourierBench: \(message)\n".utf8))
    exit(2)
}

/// Progress goes to stderr so that stdout holds only the table.
func log(_ message: String) {
    FileHandle.standardError.write(Data("\(message)\n".utf8))
}

// MARK: - Clock

/// Monotonic time in seconds.
func now() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}

// MARK: - Statistics

/// The samples of one contender across rounds.
struct Summary: Sendable {
    let samples: [Double]

    init(_ samples: [Double]) {
        precondition(!samples.isEmpty, "a summary needs samples")
        self.samples = samples
    }

    var median: Double {
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    var min: Double { samples.min()! }
    var max: Double { samples.max()! }
}

/// A contender in a figure: a name and one round's measurement.
struct Contender {
    let name: String
    let round: () -> Double
    /// An untimed run before the first round (opens connections, fills caches).
    let warmUp: (() -> Void)?

    init(_ name: String, warmUp: (() -> Void)? = nil, round: @escaping () -> Double) {
        self.name = name
        self.round = round
        self.warmUp = warmUp
    }
}

/// Runs the contenders' rounds interleaved (A, B, A, B, …) and returns each one's samples, in order.
func interleaved(rounds: Int, _ contenders: [Contender]) -> [Summary] {
    for contender in contenders { contender.warmUp?() }
    var samples = Array(repeating: [Double](), count: contenders.count)
    for round in 1...rounds {
        // Every other round runs the contenders in reverse, so that whoever runs first (or right
        // after another) in a round has no systematic advantage.
        let order = round.isMultiple(of: 2) ? Array(contenders.indices.reversed()) : Array(contenders.indices)
        for index in order {
            let contender = contenders[index]
            let value = contender.round()
            samples[index].append(value)
            log("    round \(round)/\(rounds) \(contender.name): \(format(value))")
        }
    }
    return samples.map(Summary.init)
}

// MARK: - Machine

/// The machine's CPU time counters (the first line of /proc/stat), to report the time the host
/// took from this VM ("steal"), which shows as slower rounds.
struct CPUTimes {
    var steal = 0
    var total = 0

    static func read() -> CPUTimes? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard fields.count >= 8 else { return nil }
        return CPUTimes(steal: fields[7], total: fields.reduce(0, +))
    }
}

extension Bench {
    /// The share of CPU time the host took since the benchmark started, as text.
    var stealText: String {
        guard let start = startTimes, let end = CPUTimes.read(), end.total > start.total else { return "unknown" }
        let share = Double(end.steal - start.steal) / Double(end.total - start.total) * 100
        return String(format: "%.1f %% of CPU time", share)
    }
}

// MARK: - Memory

/// A value from /proc/self/status (or another process's status file) in bytes (`VmRSS`,
/// `VmHWM`), or 0 where there is none.
func procStatus(_ key: String, of file: String = "/proc/self/status") -> Int {
    guard let text = procStatusText(key, of: file), let kilobytes = Int(text.split(separator: " ").first ?? "") else { return 0 }
    return kilobytes * 1024
}

/// The text of a field of a /proc status file ("Name", "VmHWM"…), nil where there is none.
func procStatusText(_ key: String, of file: String) -> String? {
    guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
        return line.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces)
    }
    return nil
}

// MARK: - Rows

/// How a Courier figure is judged against its baseline.
enum Target {
    /// Courier's median / baseline's median must be at least this (throughput).
    case ratioAtLeast(Double)
    /// Courier's median / baseline's median must be at most this (time, memory).
    case ratioAtMost(Double)
    /// Courier's median itself must be at most this, in the row's unit (memory).
    case valueAtMost(Double, unit: String)
    /// Reported, not judged.
    case none

    var text: String {
        switch self {
        case .ratioAtLeast(let ratio): "≥ " + String(format: "%.2f", ratio) + " ×"
        case .ratioAtMost(let ratio): "≤ " + String(format: "%.2f", ratio) + " ×"
        case .valueAtMost(let limit, let unit): "Courier ≤ \(format(limit)) \(unit)"
        case .none: "—"
        }
    }
}

/// One line of the report: a Courier figure and its baseline from the same run.
struct Row {
    var figure: String
    var variant: String
    var unit: String
    /// Courier; in a network figure, through its default transport (curl on Linux).
    var courier: Summary?
    var baselineName: String = ""
    var baseline: Summary?
    var target: Target = .none
    /// A network figure's other contenders; nil in the other figures.
    var network: NetworkColumns?
    /// Errors over all rounds, Courier and baseline together; any error is a miss.
    var errors = 0
    var note = ""

    var ratio: Double? { Self.ratio(courier, baseline) }

    static func ratio(_ numerator: Summary?, _ denominator: Summary?) -> Double? {
        guard let numerator, let denominator, denominator.median != 0 else { return nil }
        return numerator.median / denominator.median
    }

    var verdict: String {
        guard courier != nil else { return "TODO" }
        if errors > 0 { return "missed (errors)" }
        return target.verdict(ratio, value: courier?.median) ?? "—"
    }
}

/// The columns a network figure adds: Courier through URLSession and curl's command line.
struct NetworkColumns {
    /// Courier with `configuration.transport = .urlSession`.
    var urlSession: Summary?
    /// curl's command line on the same server, where the figure has one.
    var commandLine: Summary?
    /// Courier (default transport) over the command line.
    var commandLineTarget: Target = .none
}

extension Target {
    /// "met" or "missed" for a ratio (or, for `valueAtMost`, Courier's median `value`), nil when
    /// there is nothing to judge.
    func verdict(_ ratio: Double?, value: Double? = nil) -> String? {
        switch self {
        case .ratioAtLeast(let minimum): return ratio.map { $0 >= minimum ? "met" : "missed" }
        case .ratioAtMost(let maximum): return ratio.map { $0 <= maximum ? "met" : "missed" }
        case .valueAtMost(let limit, _): return value.map { $0 <= limit ? "met" : "missed" }
        case .none: return nil
        }
    }
}

/// A figure: one small function registered in `allFigures`.
struct Figure: Sendable {
    let key: String
    let title: String
    let needsServer: Bool
    let run: @Sendable (Bench) -> [Row]
}

/// An integer that any thread may change.
final class Counter: Sendable {
    private let storage: Atomic<Int>

    init(_ value: Int = 0) {
        storage = Atomic(value)
    }

    var value: Int { storage.load(ordering: .acquiring) }

    /// Adds `amount` and returns the new value.
    @discardableResult
    func add(_ amount: Int) -> Int {
        storage.wrappingAdd(amount, ordering: .acquiringAndReleasing).newValue
    }
}

/// One point of the chart: requests/s of every contender at one number in flight.
struct ChartPoint {
    var raw: Summary
    var curl: Summary
    var urlSession: Summary
    var commandLine: Summary?
}

/// What figures share: the options and the throughput points for the chart.
final class Bench {
    let options: Options
    /// Requests/s by requests in flight, for Benchmarks/throughput.svg.
    var chart: [Int: ChartPoint] = [:]

    /// nginx's `stub_status`, when the server has one: new connections are then counted.
    let statusURL: URL?
    /// CPU time counters (/proc/stat) when the benchmark started.
    private let startTimes = CPUTimes.read()

    init(options: Options) {
        self.options = options
        let candidate = options.baseURL?.appendingPathComponent("status")
        statusURL = acceptedConnections(candidate) == nil ? nil : candidate
    }

    var baseURL: URL {
        guard let url = options.baseURL else { fail("this figure needs --base-url (run Scripts/bench.sh)") }
        return url
    }

    var rounds: Int { options.rounds }
}

// MARK: - Formatting

/// A number with a sensible count of digits for tables.
func format(_ value: Double) -> String {
    let magnitude = abs(value)
    if magnitude >= 100 || value == value.rounded() && magnitude < 1e15 {
        return grouped(Int(value.rounded()))
    }
    if magnitude >= 10 { return String(format: "%.1f", value) }
    if magnitude >= 1 { return String(format: "%.2f", value) }
    return String(format: "%.3f", value)
}

/// An integer with thousands separators: 12,345.
func grouped(_ value: Int) -> String {
    let digits = String(abs(value))
    var result = ""
    for (index, character) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(character)
    }
    return value < 0 ? "-" + result : result
}
