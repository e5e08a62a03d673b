import Courier
import Foundation

// CourierBench: Courier against raw URLSession, in one process run, against a local nginx.
// Run it through Scripts/bench.sh, which starts the server; `--help` lists the flags.

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "child" {
    runChild(Array(arguments.dropFirst()))
}

let options = Options.parse(arguments)
if let reason = RequestTransport.curlUnavailableReason {
    // Courier would quietly use URLSession for the curl contenders, and the figures would lie.
    fail("Courier's curl transport cannot be used here: \(reason)")
}
let bench = Bench(options: options)
let started = Date()
let startTime = now()
var rows: [Row] = []
for figure in allFigures where options.only?.contains(figure.key) ?? true {
    if figure.needsServer && options.baseURL == nil {
        log("==> \(figure.title): skipped, needs --base-url")
        continue
    }
    log("==> \(figure.title)")
    let figureStart = now()
    rows += figure.run(bench)
    log("    (\(format(now() - figureStart)) s)")
}
let seconds = now() - startTime

print("")
printTable(rows)
if options.writeReport {
    do {
        try markdownReport(rows, bench: bench, date: started, seconds: seconds)
            .write(toFile: options.markdownPath, atomically: true, encoding: .utf8)
        log("wrote \(options.markdownPath)")
        if bench.chart.isEmpty {
            log("no throughput points measured; \(options.svgPath) left as it is")
        } else {
            try throughputSVG(bench.chart, cores: ProcessInfo.processInfo.activeProcessorCount)
                .write(toFile: options.svgPath, atomically: true, encoding: .utf8)
            log("wrote \(options.svgPath)")
        }
    } catch {
        fail("could not write the report: \(error)")
    }
}
log("done in \(Int(seconds.rounded())) s; CPU steal by the host meanwhile: \(bench.stealText)")
