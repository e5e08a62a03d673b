import Foundation

// The report: a table on stdout, BENCHMARKS.md, and Benchmarks/throughput.svg.

func cell(_ summary: Summary?, unit: String) -> String {
    guard let summary else { return "—" }
    return "\(format(summary.median)) \(unit) (\(format(summary.min))–\(format(summary.max)))"
}

func ratioText(_ row: Row) -> String {
    row.ratio.map { String(format: "%.2f ×", $0) } ?? "—"
}

/// A ratio with its target and verdict: "3.81 × (≥ 2.50 ×) met"; `bold` marks the verdict for
/// Markdown. A `valueAtMost` target is judged on `value` (Courier's median), not on the ratio.
func judgedRatio(_ ratio: Double?, _ target: Target, value: Double? = nil, errors: Int, bold: Bool) -> String {
    guard ratio != nil || value != nil else { return "—" }
    let text = ratio.map { String(format: "%.2f ×", $0) } ?? "—"
    guard var verdict = target.verdict(ratio, value: value) else { return text }
    if errors > 0 { verdict = "missed (errors)" }
    return "\(text) (\(target.text)) " + (bold ? "**\(verdict)**" : verdict)
}

/// The rows with a note, leaving out a note its figure's previous row already gave.
func distinctNotes(_ rows: [Row]) -> [Row] {
    var seen = Set<String>()
    return rows.filter { !$0.note.isEmpty && seen.insert($0.figure + "\u{0}" + $0.note).inserted }
}

/// A table as header and cells.
struct Table {
    var header: [String]
    var lines: [[String]]
}

/// The network figures with every contender, nil when none ran.
func networkTable(_ rows: [Row], bold: Bool) -> Table? {
    let lines = rows.compactMap { row -> [String]? in
        guard let columns = row.network else { return nil }
        return [row.figure, row.variant, row.baselineName, cell(row.baseline, unit: row.unit),
                cell(row.courier, unit: row.unit), cell(columns.urlSession, unit: row.unit),
                cell(columns.commandLine, unit: row.unit), grouped(row.errors),
                judgedRatio(row.ratio, row.target, value: row.courier?.median, errors: row.errors, bold: bold),
                judgedRatio(Row.ratio(row.courier, columns.commandLine), columns.commandLineTarget, errors: row.errors, bold: bold),
                judgedRatio(Row.ratio(columns.urlSession, row.baseline), .none, errors: 0, bold: bold)]
    }
    return lines.isEmpty ? nil : Table(header: [
        "Figure", "Variant", "Baseline", "Baseline median (min–max)", "Courier curl (default)", "Courier URLSession",
        "curl command line", "Errors", "Courier curl ÷ baseline", "Courier curl ÷ command line", "Courier URLSession ÷ baseline",
    ], lines: lines)
}

/// The other figures (Courier against a baseline), nil when none ran.
func otherTable(_ rows: [Row], bold: Bool) -> Table? {
    let lines = rows.filter { $0.network == nil }.map { row in
        [row.figure, row.variant, cell(row.courier, unit: row.unit), row.baselineName,
         cell(row.baseline, unit: row.unit), ratioText(row), row.target.text, bold ? "**\(row.verdict)**" : row.verdict]
    }
    return lines.isEmpty ? nil : Table(header: ["Figure", "Variant", "Courier", "Baseline", "Baseline median (min–max)",
                                                "Ratio", "Target", "Result"], lines: lines)
}

// MARK: - stdout

func printTable(_ rows: [Row]) {
    for table in [networkTable(rows, bold: false), otherTable(rows, bold: false)].compactMap({ $0 }) {
        let (header, lines) = (table.header, table.lines)
        let widths = header.indices.map { column in
            ([header] + lines).map { $0[column].count }.max() ?? 0
        }
        func render(_ fields: [String]) -> String {
            zip(fields, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: " | ")
        }
        print(render(header))
        print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-+-"))
        for line in lines { print(render(line)) }
        print("")
    }
    for row in distinctNotes(rows) {
        print("note: \(row.figure) / \(row.variant): \(row.note)")
    }
}

// MARK: - BENCHMARKS.md

func markdownReport(_ rows: [Row], bench: Bench, date: Date, seconds: Double) -> String {
    let options = bench.options
    let memory = ProcessInfo.processInfo.physicalMemory
    let dateText = ISO8601DateFormatter().string(from: date)
    var text = """
        # Courier benchmarks

        Written by `CourierBench` (run through `Scripts/bench.sh`); rerun the script rather than editing this file.

        - Date: \(dateText)
        - Machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(String(format: "%.0f", Double(memory) / 1_073_741_824)) GiB, \(ProcessInfo.processInfo.operatingSystemVersionString)
        - Swift: \(options.swiftVersion)
        - Server: \(options.serverVersion), a private instance on 127.0.0.1 (1 worker, keep-alive, no access log)
        - Command: `\(options.command)`
        - Rounds: \(options.rounds), interleaved in one process run (contenders in one order in odd rounds, reversed in even rounds)\(options.quick ? " — **quick mode: smaller counts, not for comparison**" : "")
        - Whole benchmark: \(Int(seconds.rounded())) s; CPU steal by the host meanwhile: \(bench.stealText); load average at the end: \(loadAverageText)

        Each cell is the median of the rounds, with the minimum and maximum in brackets. A ratio is
        one median over another; a target applies to the ratio it stands beside. Any error in a round
        of a figure misses its targets.

        """
    if let network = networkTable(rows, bold: true) {
        text += """

        ## Network figures

        Every network figure runs, in the same interleaved rounds: the **baseline** (raw URLSession,
        what users have without Courier), **Courier curl (default)** (`RequestTransport.curl`, the
        default network transport on Linux), **Courier URLSession** (`configuration.transport =
        .urlSession`) and, where the figure has that shape, the **curl command line** (`\(curlCommandPath)`,
        the same libcurl, one process per round, timed with its start-up: the limit). The targets are
        those of issue #11 for Courier's default transport. The URLSession transport's ratio is
        reported, not judged (it was judged against 0.95–1.0 × raw URLSession before the curl
        transport; see the analysis below).


        """ + markdownTable(network)
    }
    if let other = otherTable(rows, bold: true) {
        text += """

        ## Other figures

        Courier's queue against a baseline of its own kind (no network, or requests held back); the
        queue sends through its default transport where it sends at all.


        """ + markdownTable(other)
    }
    let notes = distinctNotes(rows)
    if !notes.isEmpty {
        text += "\nNotes from this run:\n\n"
        for row in notes { text += "- \(row.figure), \(row.variant): \(row.note)\n" }
    }
    text += """

        ## Throughput against requests in flight

        ![Requests per second against requests in flight: raw URLSession, Courier through curl and through URLSession, curl's command line](Benchmarks/throughput.svg)

        Small JSON, N requests kept outstanding by every contender: Courier with `maxConcurrentRequests`
        N, raw URLSession with `httpMaximumConnectionsPerHost` ≥ N, curl's command line with
        `--parallel-max N` (one at a time: one process fetching every URL over one connection).
        Both axes are logarithmic; bars show the minimum and maximum.

        ## How it is measured

        - **Server.** `Scripts/bench.sh` runs its own nginx (`worker_processes 1`, `keepalive_requests`
          10,000,000, `access_log off`, `gzip off`) on 127.0.0.1 at a free port, serving `/small.json`
          (~200 bytes), `/large.bin` (1 MiB), `/stream-256MiB.bin` and `/download-1GiB.bin` (sparse files
          of zeros, made once; the script checks that they come uncompressed, with their full
          Content-Length, even to a client that offers gzip) and an upload sink at `/upload` (`return 200`,
          which makes nginx read and discard the whole body to keep the connection; the script checks with
          an 8 MiB upload that the whole body was read and the connection reused).
        - **New connections.** Around each throughput round the benchmark reads nginx's `stub_status`
          (`/status`, from a session of its own) and reports the connections nginx accepted per 1,000
          requests in the row's note: a high number means libcurl is churning connections.
        - **Baseline.** One `URLSession(configuration: .default)` per figure, `httpMaximumConnectionsPerHost`
          raised to at least the number in flight, `dataTask(with:completionHandler:)`. To keep N outstanding,
          the baseline starts its next request **from a separate serial DispatchQueue** (one `async` hop
          out of the completion handler): PLATFORM.md measured that starting it inside the completion
          handler churns connections, and the hop is what makes the baseline fast. The baseline with a
          Decodable counterpart decodes `Item` with a new `JSONDecoder` in the completion handler.
        - **Courier.** `RequestQueue(configuration:baseURL:)` with a private serial `callbackQueue`,
          `maxConcurrentRequests` as the figure says and `transport` `.curl` or `.urlSession` (one queue
          per contender); each request is `add` + `addObserver(for:)`, and the next one is added from
          that observer (on the private callback queue, so no extra hop); the async variant runs one
          `Task { try await queue.send(…) }` per request. `EmptyResponse` ignores the body; `Item` is a
          Decodable struct decoded by Courier's default JSON decoding.
        - **curl command line.** One `\(curlCommandPath)` process per round, started with `posix_spawn`
          and timed until `waitpid` returns (start-up included, about 5 ms here), reading a config file
          with one `url` and `output = "/dev/null"` per request and `write-out` of each status (a
          status other than 200, or a non-zero exit, counts as an error). One at a time, that is one
          connection kept alive for every URL; N in flight is `-Z --parallel-max N`. It fetches the
          same URLs from the same nginx; it has no Courier, no URLSession, no Swift and no threads
          to hand results between, so it shows what libcurl and this machine can do.
        - **Bursts.** "N added at once": batches of N requests started together, the next batch when the
          whole batch has ended (Courier holds all N, 16 at a time; raw URLSession runs N at once). curl's
          command line has no such shape (it cannot hold a batch back), so this figure goes without it.
        - **Observer delivery.** No network: a queue without a base URL and a request with a relative
          path end at once with `invalidURL`, which goes through the same claim-and-deliver path as a
          network response. Each request is `add` + an ID observer, and both queues have one live type
          observer of the probed type. The other 100,000 observers each have their own live owner and are
          spread over 1,000 distinct generic response types (`Zero<One<…<Leaf>>>`).
        - **`add` held back.** A fresh process per round adds 10,000 or 100,000 requests to a queue with
          `maxConcurrentRequests` 8 (after 16 warm-up requests); time per `add` and VmRSS growth per
          request, then releasing the queue cancels them all (also timed).
        - **Memory.** A fresh process per round and contender: 512 warm-up requests, VmRSS, then
          \(grouped(options.memoryCount)) requests with 16 in flight, VmRSS again 0.2 s later. The issue asks about
          100,000 requests; through URLSession at 2,000–4,000 requests/s that is 25–50 s per process,
          too long for \(options.rounds) interleaved rounds of three contenders in this run. The full run therefore uses
          \(grouped(options.memoryCount)) requests per round (\(grouped(options.memoryCount * options.rounds)) per contender over the rounds);
          `--memory-count 100000` runs the full count (see the analysis for such a run).
        - **Encoding.** 64 distinct values of a 10-field struct (escaped strings, ints, a double, a
          bool, an optional, an array, a dictionary, a Date, a URL, a nested struct), encoded in turn
          in one thread: Courier's `JSONBodyData` and `URLEncodedBodyData` against the same values made
          `Codable` through `JSONEncoder` with `.convertToSnakeCase`.
        - **Upload.** A fresh process per round: a 1 GiB file sent to nginx's `/upload` sink by
          `uploadTask(with:fromFile:)`, and by Courier (through each transport) as one file part of a
          `MultipartFormData` (written to a temporary file, then streamed with a Content-Length);
          curl's command line sends the file itself as the body (`-T FILE -X POST`, no
          `Expect: 100-continue`). MB/s counts the file's bytes; peak RSS is the child's VmHWM (for
          curl, its VmHWM sampled every 5 ms: `ru_maxrss` of a spawned child starts from the parent's peak).
        - **Time to first byte.** One request at a time for `/small.json`, each contender on its own
          queue (`maxConcurrentRequests` 1): `stream` timed from the call until the first body chunk is
          in the consumer's hands (the rest of the body is read before the next request), against `async`
          `send` of the same request timed to its result, through the same transport; a round's value is
          its median request. Raw URLSession's data task (to its completion handler) is given for context.
        - **Slow consumer.** A fresh process per round and transport: one warm-up request, VmRSS, VmHWM
          reset (`/proc/self/clear_refs`), then `stream` of `/stream-256MiB.bin` read at 1 MB/s (after
          each chunk the consumer sleeps until the bytes read so far have taken their time) for the
          first \(options.slowSeconds) s (`--slow-seconds`); the value is VmHWM minus the VmRSS before (also
          sampled every 50 ms). The URLSession transport cannot pause, so its stream has
          `maximumBufferSize` \(options.slowLimitMiB) MiB (`--slow-limit-mib`) and is expected to end with
          `streamLimitExceeded`: a contrast, not judged.
        - **Download.** A fresh process per round: `/download-1GiB.bin` to a file under
          `.build/bench/downloads` (deleted after each round) by `URLSession.downloadTask` (its
          temporary file, which `TMPDIR` puts in the same directory, moved to the destination in the
          completion handler), by Courier's `download` through each transport, and by curl's command
          line (`curl -sS -o FILE`), each round after a `sync()` (untimed). MB/s counts the file's bytes over the time until the file is
          complete at its destination; peak RSS is the process's VmHWM (curl's sampled every 5 ms).
        - **Noise.** The machine is a 2-core VM whose host shares its CPUs: the same raw URLSession
          loop moves by a third between rounds of one run and between runs minutes apart. The
          figures interleave contenders round by round so all see the same conditions, but
          differences under about 10 % are not resolved. CPU steal reported by the kernel during the
          run: \(bench.stealText).

        """
    // The hand-written analysis of the misses lives beside the benchmark and is kept across runs.
    if let analysis = try? String(contentsOfFile: "Benchmarks/ANALYSIS.md", encoding: .utf8) {
        text += "\n" + analysis
    }
    return text
}

// MARK: - SVG

/// A Markdown table.
func markdownTable(_ table: Table) -> String {
    func line(_ fields: [String]) -> String {
        "| " + fields.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n"
    }
    return line(table.header) + line(table.header.map { _ in "---" }) + table.lines.map(line).joined()
}

/// The 1, 5 and 15-minute load averages (/proc/loadavg).
var loadAverageText: String {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    let fields = text.split(separator: " ").prefix(3)
    return fields.count == 3 ? fields.joined(separator: ", ") : "unknown"
}

/// A line chart of requests/s against requests in flight for every contender, both axes logarithmic
/// (curl's command line runs ten times faster than URLSession).
func throughputSVG(_ chart: [Int: ChartPoint], cores: Int) -> String {
    let points = chart.keys.sorted()
    let width = 760.0, height = 500.0
    let left = 80.0, right = 30.0, top = 56.0, bottom = 90.0
    let plotWidth = width - left - right, plotHeight = height - top - bottom
    let series: [(name: String, color: String, pick: (ChartPoint) -> Summary?)] = [
        ("raw URLSession", "#4C72B0", { $0.raw }),
        ("Courier curl (default)", "#DD8452", { $0.curl }),
        ("Courier URLSession", "#55A868", { $0.urlSession }),
        ("curl command line", "#8172B3", { $0.commandLine }),
    ]
    let values = points.flatMap { point in series.compactMap { $0.pick(chart[point]!) } }
    let highest = values.map(\.max).filter { $0 > 0 }.max() ?? 10
    let lowest = values.map(\.min).filter { $0 > 0 }.min() ?? 1
    // Ticks at 1, 2 and 5 times powers of ten, from the decade below the lowest value.
    let yMin = pow(10, log10(lowest).rounded(.down)), yMax = niceStep(highest)
    let logs = points.map { log2(Double($0)) }
    let xMin = logs.min() ?? 0, xMax = max(logs.max() ?? 1, xMin + 1)
    func x(_ inFlight: Int) -> Double { left + (log2(Double(inFlight)) - xMin) / (xMax - xMin) * plotWidth }
    func y(_ value: Double) -> Double {
        top + plotHeight - (log10(max(value, yMin)) - log10(yMin)) / (log10(yMax) - log10(yMin)) * plotHeight
    }
    func f(_ value: Double) -> String { String(format: "%.1f", value) }

    var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="13">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(f(width / 2))" y="26" text-anchor="middle" font-size="16" font-weight="bold">Requests per second against requests in flight</text>
        <text x="\(f(width / 2))" y="44" text-anchor="middle" fill="#555">small JSON from a local nginx, \(cores) cores; median of the rounds, bars from min to max; log scales</text>

        """
    var decade = yMin
    while decade < yMax * 1.01 {
        for factor in [1.0, 2.0, 5.0] where decade * factor <= yMax * 1.01 {
            let tick = decade * factor
            svg += "<line x1=\"\(f(left))\" y1=\"\(f(y(tick)))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(y(tick)))\" stroke=\"#e5e5e5\"/>\n"
            svg += "<text x=\"\(f(left - 8))\" y=\"\(f(y(tick) + 4))\" text-anchor=\"end\">\(grouped(Int(tick)))</text>\n"
        }
        decade *= 10
    }
    for point in points {
        svg += "<line x1=\"\(f(x(point)))\" y1=\"\(f(top + plotHeight))\" x2=\"\(f(x(point)))\" y2=\"\(f(top + plotHeight + 5))\" stroke=\"#333\"/>\n"
        svg += "<text x=\"\(f(x(point)))\" y=\"\(f(top + plotHeight + 20))\" text-anchor=\"middle\">\(point)</text>\n"
    }
    svg += "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(top + plotHeight))\" stroke=\"#333\"/>\n"
    svg += "<line x1=\"\(f(left))\" y1=\"\(f(top + plotHeight))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(top + plotHeight))\" stroke=\"#333\"/>\n"
    svg += "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(top + plotHeight + 40))\" text-anchor=\"middle\">requests in flight (log scale)</text>\n"
    svg += "<text transform=\"translate(22 \(f(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">requests per second (log scale)</text>\n"

    for (name, color, pick) in series {
        let present = points.compactMap { point in pick(chart[point]!).map { (point, $0) } }
        guard !present.isEmpty else { continue }
        let coordinates = present.map { "\(f(x($0.0))),\(f(y($0.1.median)))" }.joined(separator: " ")
        svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2.5\" points=\"\(coordinates)\"><title>\(name)</title></polyline>\n"
        for (point, summary) in present {
            svg += "<line x1=\"\(f(x(point)))\" y1=\"\(f(y(summary.min)))\" x2=\"\(f(x(point)))\" y2=\"\(f(y(summary.max)))\" stroke=\"\(color)\" stroke-width=\"1.5\"/>\n"
            svg += "<circle cx=\"\(f(x(point)))\" cy=\"\(f(y(summary.median)))\" r=\"4\" fill=\"\(color)\"><title>\(name), \(point) in flight: \(grouped(Int(summary.median))) req/s</title></circle>\n"
        }
    }
    // Legend, one row under the axis label, centred; text width estimated at 6.6 px a character.
    let legendY = height - 16
    let entryWidths = series.map { 34 + Double($0.name.count) * 6.6 + 18 }
    var entryX = (width - entryWidths.reduce(0, +)) / 2
    for (entry, entryWidth) in zip(series, entryWidths) {
        svg += "<line x1=\"\(f(entryX))\" y1=\"\(f(legendY - 4))\" x2=\"\(f(entryX + 26))\" y2=\"\(f(legendY - 4))\" stroke=\"\(entry.color)\" stroke-width=\"2.5\"/>\n"
        svg += "<circle cx=\"\(f(entryX + 13))\" cy=\"\(f(legendY - 4))\" r=\"4\" fill=\"\(entry.color)\"/>\n"
        svg += "<text x=\"\(f(entryX + 34))\" y=\"\(f(legendY))\" font-size=\"12\">\(entry.name)</text>\n"
        entryX += entryWidth
    }
    svg += "</svg>\n"
    return svg
}

/// 1, 2 or 5 times a power of ten, at least `rough`.
func niceStep(_ rough: Double) -> Double {
    guard rough > 0 else { return 1 }
    let power = pow(10, (log10(rough)).rounded(.down))
    for factor in [1.0, 2.0, 5.0, 10.0] where factor * power >= rough { return factor * power }
    return 10 * power
}
