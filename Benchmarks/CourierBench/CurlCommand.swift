import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// curl's command line against the same nginx: the limit that libcurl itself reaches, with no
// Courier and no URLSession in the way. One process per round, timed around the whole process
// (its start-up included), started with posix_spawn and reaped with wait4 (which reports its CPU time).

/// The curl command line the figures run (the same libcurl that Courier loads).
let curlCommandPath = "/usr/bin/curl"

/// Where its config files and output go: under .build, which the next run overwrites.
let curlScratch = ".build/bench/curl"

/// How one curl process ended.
struct CommandRun {
    var seconds = 0.0
    var status: Int32 = -1
    /// The process's peak RSS in bytes, when sampled.
    var peakRSS: Int?
    /// User + system CPU time of the process, in seconds.
    var cpuSeconds = 0.0
    var output = ""
    var errorOutput = ""
}

/// Runs `path` with `arguments`, stdout and stderr into files under `curlScratch`; nil when it
/// cannot be started. `samplingPeak` also samples its peak RSS.
func runCommand(_ path: String, _ arguments: [String], samplingPeak: Bool = false) -> CommandRun? {
    let outPath = curlScratch + "/stdout.txt", errPath = curlScratch + "/stderr.txt"
    try? FileManager.default.createDirectory(atPath: curlScratch, withIntermediateDirectories: true)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let start = now()
    guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else { return nil }
    let sampler = samplingPeak ? PeakSampler(pid: pid, name: URL(fileURLWithPath: path).lastPathComponent) : nil
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
        guard errno == EINTR else { return nil }
    }
    var run = CommandRun(seconds: now() - start, cpuSeconds: cpuSeconds(of: usage))
    // WIFEXITED / WEXITSTATUS, which Swift does not import as macros.
    run.status = status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    run.peakRSS = sampler?.stop()
    run.output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    run.errorOutput = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    return run
}

/// Samples a child's VmHWM every 5 ms while it runs. `ru_maxrss` cannot be used: a child made by
/// posix_spawn shares the spawning process's memory until it execs, and Linux starts the child's
/// `ru_maxrss` from that (here CourierBench's own peak, 150 MB, for an 11 MB curl).
final class PeakSampler: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let peak = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)

    init(pid: pid_t, name: String) {
        Thread.detachNewThread { [self] in
            while !stopped.load(ordering: .acquiring) {
                // Only once it execs: before that, /proc shows the spawning process's memory.
                let status = "/proc/\(pid)/status"
                if procStatusText("Name", of: status) == name {
                    let value = procStatus("VmHWM", of: status)
                    if value > peak.load(ordering: .relaxed) { peak.store(value, ordering: .relaxed) }
                }
                usleep(5_000)
            }
            done.signal()
        }
    }

    /// Stops sampling; the highest VmHWM seen, in bytes (the last 5 ms before the child exited are missed).
    func stop() -> Int {
        stopped.store(true, ordering: .releasing)
        done.wait()
        return peak.load(ordering: .relaxed)
    }
}

/// One curl process fetching `count` URLs: one after another over one kept-alive connection, or
/// with `-Z --parallel-max N` (N connections, a new transfer whenever one ends).
struct CurlCommand {
    let arguments: [String]
    let count: Int

    /// Nil when there is no curl command line here. `extraArguments` go before the URLs
    /// (`--cacert` for the HTTPS figures).
    init?(url: URL, count: Int, parallel: Int? = nil, extraArguments: [String] = []) {
        guard FileManager.default.isExecutableFile(atPath: curlCommandPath) else { return nil }
        try? FileManager.default.createDirectory(atPath: curlScratch, withIntermediateDirectories: true)
        // A config file names every URL with its own output; write-out prints one line per transfer.
        let configPath = curlScratch + "/urls-\(count)-\(parallel ?? 1)-\(url.port ?? 0)\(url.lastPathComponent).txt"
        var config = "silent\nshow-error\nwrite-out = \"%{http_code} %{size_download}\\n\"\n"
        config.reserveCapacity(config.utf8.count + count * (url.absoluteString.utf8.count + 30))
        for _ in 0..<count { config += "url = \"\(url.absoluteString)\"\noutput = \"/dev/null\"\n" }
        guard FileManager.default.createFile(atPath: configPath, contents: Data(config.utf8)) else { return nil }
        var arguments = extraArguments + ["--config", configPath]
        if let parallel { arguments = ["-Z", "--parallel-max", String(parallel), "--no-progress-meter"] + arguments }
        self.arguments = arguments
        self.count = count
    }

    /// Runs the process once; its transfers as a `LoadResult` (status 200 counts as success).
    func run() -> LoadResult {
        guard let run = runCommand(curlCommandPath, arguments) else {
            return LoadResult(elapsed: 1, succeeded: 0, failed: count, bytes: 0, firstError: "could not start \(curlCommandPath)")
        }
        var result = LoadResult(elapsed: run.seconds, succeeded: 0, failed: 0, bytes: 0, cpuSeconds: run.cpuSeconds)
        for line in run.output.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.first == "200" {
                result.succeeded += 1
                result.bytes += fields.count > 1 ? Int(fields[1]) ?? 0 : 0
            } else {
                result.failed += 1
                result.firstError = result.firstError ?? "status \(fields.first ?? "?")"
            }
        }
        if result.succeeded + result.failed < count {
            result.failed = count - result.succeeded
            result.firstError = result.firstError ?? "curl exited with \(run.status) after \(result.succeeded) transfers"
        }
        if run.status != 0 {
            let message = run.errorOutput.split(separator: "\n").first.map(String.init) ?? "no message"
            result.firstError = "curl exited with \(run.status): \(message)"
            result.failed = max(result.failed, 1)
        }
        return result
    }
}
