import Foundation

// The report: a table on stdout, BENCHMARKS.md, and Benchmarks/throughput.svg.

func cell(_ summary: Summary?, unit: String) -> String {
    guard let summary else { return "—" }
    return "\(format(summary.median)) \(unit) (\(format(summary.min))–\(format(summary.max)))"
}

func ratioText(_ row: Row) -> String {
    row.ratio.map { String(format: "%.2f ×", $0) } ?? "—"
}

/// The rows with a note, leaving out a note its figure's previous row already gave.
func distinctNotes(_ rows: [Row]) -> [Row] {
    var seen = Set<String>()
    return rows.filter { !$0.note.isEmpty && seen.insert($0.figure + "\u{0}" + $0.note).inserted }
}

// MARK: - stdout

func printTable(_ rows: [Row]) {
    let header = ["Figure", "Variant", "Courier median (min–max)", "Baseline", "Baseline median (min–max)",
                  "Ratio", "Target", "Result"]
    let lines = rows.map { row in
        [row.figure, row.variant, cell(row.courier, unit: row.unit), row.baselineName,
         cell(row.baseline, unit: row.unit), ratioText(row), row.target.text, row.verdict]
    }
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
        - Rounds: \(options.rounds), interleaved in one process run (baseline first in odd rounds, last in even rounds)\(options.quick ? " — **quick mode: smaller counts, not for comparison**" : "")
        - Whole benchmark: \(Int(seconds.rounded())) s; CPU steal by the host meanwhile: \(bench.stealText)

        Each cell is the median of the rounds, with the minimum and maximum in brackets. The ratio is
        Courier's median over the baseline's median; the target applies to it. Any error in a round is a miss.

        | Figure | Variant | Courier | Baseline | Baseline median (min–max) | Ratio | Target | Result |
        |---|---|---|---|---|---|---|---|

        """
    for row in rows {
        let fields = [row.figure, row.variant, cell(row.courier, unit: row.unit), row.baselineName,
                      cell(row.baseline, unit: row.unit), ratioText(row), row.target.text, "**\(row.verdict)**"]
        text += "| " + fields.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n"
    }
    let notes = distinctNotes(rows)
    if !notes.isEmpty {
        text += "\nNotes from this run:\n\n"
        for row in notes { text += "- \(row.figure), \(row.variant): \(row.note)\n" }
    }
    text += """

        ## Throughput against requests in flight

        ![Requests per second against requests in flight, raw URLSession and Courier](Benchmarks/throughput.svg)

        Small JSON, N requests kept outstanding for both; Courier with `maxConcurrentRequests` N and
        raw URLSession with `httpMaximumConnectionsPerHost` ≥ N. Bars show the minimum and maximum.

        ## How it is measured

        - **Server.** `Scripts/bench.sh` runs its own nginx (`worker_processes 1`, `keepalive_requests`
          10,000,000, `access_log off`) on 127.0.0.1 at a free port, serving `/small.json` (~200 bytes),
          `/large.bin` (1 MiB) and an upload sink at `/upload` (`return 200`, which makes nginx read and
          discard the whole body to keep the connection; the script checks with an 8 MiB upload that the
          whole body was read and the connection reused).
        - **New connections.** Around each throughput round the benchmark reads nginx's `stub_status`
          (`/status`, from a session of its own) and reports the connections nginx accepted per 1,000
          requests in the row's note: a high number means libcurl is churning connections.
        - **Baseline.** One `URLSession(configuration: .default)` per figure, `httpMaximumConnectionsPerHost`
          raised to at least the number in flight, `dataTask(with:completionHandler:)`. To keep N outstanding,
          the baseline starts its next request **from a separate serial DispatchQueue** (one `async` hop
          out of the completion handler): PLATFORM.md measured that starting it inside the completion
          handler churns connections, and the hop is what makes the baseline fast. The baseline with a
          Decodable counterpart decodes `Item` with a new `JSONDecoder` in the completion handler.
        - **Courier.** `RequestQueue(configuration:baseURL:)` with a private serial `callbackQueue` and
          `maxConcurrentRequests` as the figure says; each request is `add` + `addObserver(for:)`, and the
          next one is added from that observer (on the private callback queue, so no extra hop); the
          async variant runs one `Task { try await queue.send(…) }` per request. `EmptyResponse` ignores
          the body; `Item` is a Decodable struct decoded by Courier's default JSON decoding.
        - **Bursts.** "N added at once": batches of N requests started together, the next batch when the
          whole batch has ended, for both (Courier holds all N, 16 at a time; raw URLSession runs N at once).
        - **Observer delivery.** No network: a queue without a base URL and a request with a relative
          path end at once with `invalidURL`, which goes through the same claim-and-deliver path as a
          network response. Each request is `add` + an ID observer, and both queues have one live type
          observer of the probed type. The other 100,000 observers each have their own live owner and are
          spread over 1,000 distinct generic response types (`Zero<One<…<Leaf>>>`).
        - **`add` held back.** A fresh process per round adds 10,000 or 100,000 requests to a queue with
          `maxConcurrentRequests` 8 (after 16 warm-up requests); time per `add` and VmRSS growth per
          request, then releasing the queue cancels them all (also timed).
        - **Memory.** A fresh process per round and contender: 512 warm-up requests, VmRSS, then
          \(grouped(options.memoryCount)) requests with 16 in flight, VmRSS again 0.2 s later. The brief asks for
          100,000 requests; at about 2,000 requests/s that is ~50 s per process, so 5 interleaved rounds of
          both would take over 8 minutes. The full run therefore uses \(grouped(options.memoryCount)) requests per
          round (\(grouped(options.memoryCount * options.rounds)) per contender over the rounds);
          `--memory-count 100000` runs the full count.
        - **Encoding.** 64 distinct values of a 10-field struct (escaped strings, ints, a double, a
          bool, an optional, an array, a dictionary, a Date, a URL, a nested struct), encoded in turn
          in one thread: Courier's `JSONBodyData` and `URLEncodedBodyData` against the same values made
          `Codable` through `JSONEncoder` with `.convertToSnakeCase`.
        - **Upload.** A fresh process per round: a 1 GiB file sent to nginx's `/upload` sink by
          `uploadTask(with:fromFile:)`, and by Courier as one file part of a `MultipartFormData`
          (written to a temporary file, then streamed with a Content-Length); MB/s counts the file's
          bytes, peak RSS is the child's VmHWM.
        - **Noise.** The machine is a 2-core VM whose host shares its CPUs: the same raw URLSession
          loop moves by a third between rounds of one run and between runs minutes apart. The
          figures interleave contenders round by round so both see the same conditions, but
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

/// A line chart of requests/s against requests in flight, raw URLSession against Courier.
func throughputSVG(_ chart: [Int: (raw: Summary, courier: Summary)], cores: Int) -> String {
    let points = chart.keys.sorted()
    let width = 720.0, height = 440.0
    let left = 80.0, right = 30.0, top = 56.0, bottom = 64.0
    let plotWidth = width - left - right, plotHeight = height - top - bottom
    let highest = points.flatMap { [chart[$0]!.raw.max, chart[$0]!.courier.max] }.max() ?? 1
    let step = niceStep(highest / 5)
    let yMax = (highest / step).rounded(.up) * step
    let logs = points.map { log2(Double($0)) }
    let xMin = logs.min() ?? 0, xMax = max(logs.max() ?? 1, xMin + 1)
    func x(_ inFlight: Int) -> Double { left + (log2(Double(inFlight)) - xMin) / (xMax - xMin) * plotWidth }
    func y(_ value: Double) -> Double { top + plotHeight - value / yMax * plotHeight }
    func f(_ value: Double) -> String { String(format: "%.1f", value) }

    var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="13">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(f(width / 2))" y="26" text-anchor="middle" font-size="16" font-weight="bold">Requests per second against requests in flight</text>
        <text x="\(f(width / 2))" y="44" text-anchor="middle" fill="#555">small JSON from a local nginx, \(cores) cores; median of the rounds, bars from min to max</text>

        """
    var tick = 0.0
    while tick <= yMax + step / 2 {
        svg += "<line x1=\"\(f(left))\" y1=\"\(f(y(tick)))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(y(tick)))\" stroke=\"#e5e5e5\"/>\n"
        svg += "<text x=\"\(f(left - 8))\" y=\"\(f(y(tick) + 4))\" text-anchor=\"end\">\(grouped(Int(tick)))</text>\n"
        tick += step
    }
    for point in points {
        svg += "<line x1=\"\(f(x(point)))\" y1=\"\(f(top + plotHeight))\" x2=\"\(f(x(point)))\" y2=\"\(f(top + plotHeight + 5))\" stroke=\"#333\"/>\n"
        svg += "<text x=\"\(f(x(point)))\" y=\"\(f(top + plotHeight + 20))\" text-anchor=\"middle\">\(point)</text>\n"
    }
    svg += "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(top + plotHeight))\" stroke=\"#333\"/>\n"
    svg += "<line x1=\"\(f(left))\" y1=\"\(f(top + plotHeight))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(top + plotHeight))\" stroke=\"#333\"/>\n"
    svg += "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(height - 18))\" text-anchor=\"middle\">requests in flight (log scale)</text>\n"
    svg += "<text transform=\"translate(22 \(f(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">requests per second</text>\n"

    let series: [(name: String, color: String, pick: ((raw: Summary, courier: Summary)) -> Summary)] = [
        ("raw URLSession", "#4C72B0", { $0.raw }),
        ("Courier", "#DD8452", { $0.courier }),
    ]
    for (name, color, pick) in series {
        let coordinates = points.map { "\(f(x($0))),\(f(y(pick(chart[$0]!).median)))" }.joined(separator: " ")
        svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2.5\" points=\"\(coordinates)\"><title>\(name)</title></polyline>\n"
        for point in points {
            let summary = pick(chart[point]!)
            svg += "<line x1=\"\(f(x(point)))\" y1=\"\(f(y(summary.min)))\" x2=\"\(f(x(point)))\" y2=\"\(f(y(summary.max)))\" stroke=\"\(color)\" stroke-width=\"1.5\"/>\n"
            svg += "<circle cx=\"\(f(x(point)))\" cy=\"\(f(y(summary.median)))\" r=\"4\" fill=\"\(color)\"><title>\(name), \(point) in flight: \(grouped(Int(summary.median))) req/s</title></circle>\n"
        }
    }
    // Legend, bottom right of the plot area.
    let legendX = left + plotWidth - 170, legendY = top + plotHeight - 62
    svg += "<rect x=\"\(f(legendX))\" y=\"\(f(legendY))\" width=\"160\" height=\"52\" fill=\"white\" stroke=\"#ccc\"/>\n"
    for (index, entry) in series.enumerated() {
        let rowY = legendY + 18 + Double(index) * 20
        svg += "<line x1=\"\(f(legendX + 10))\" y1=\"\(f(rowY - 4))\" x2=\"\(f(legendX + 36))\" y2=\"\(f(rowY - 4))\" stroke=\"\(entry.color)\" stroke-width=\"2.5\"/>\n"
        svg += "<circle cx=\"\(f(legendX + 23))\" cy=\"\(f(rowY - 4))\" r=\"4\" fill=\"\(entry.color)\"/>\n"
        svg += "<text x=\"\(f(legendX + 44))\" y=\"\(f(rowY))\">\(entry.name)</text>\n"
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
