import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import Courier

/// Issue #22's crash test: an app (the `CourierCrashChild` program) adds durable writes against an
/// origin that records each request's Idempotency-Key (Scripts/json_api.py), and is killed with
/// SIGKILL at random points, then started again on the same folders, until it exits having a
/// result for every write. Afterwards the origin has seen every write, with one key each (replays
/// carry the same key); the app got exactly one distinct result per write; each lane's writes
/// reached the origin in the order they were added.
///
/// Random delays, from a seed printed with every failure (`COURIER_CRASH_SEED=N` runs one again;
/// the kills then land at the same delays, though the processes' own timing varies);
/// `COURIER_CRASH_WRITES` sets the number of writes (1,000 by default). The child's folders are
/// kept when a check fails, and their path is printed. Each scenario prints a summary (its time,
/// the kills in each window, the writes added again, the results given again), also appended to
/// the file `COURIER_CRASH_SUMMARY` names, if set.
final class DurableCrashTests: XCTestCase {
    func testEveryWriteEndsOnceAcrossKills() throws {
        // Given the shared recording origin, and a child told to add the writes there
        let origin = try HTTPBin.jsonAPI()
        let scenario = try CrashScenario(name: "kills", origin: origin, test: self)
        // When it is killed at random points and started again until it exits 0
        let report = try scenario.run(originControl: nil)
        // Then the origin and the child's results pass every check
        try scenario.check(report)
    }

    func testEveryWriteEndsOnceAcrossKillsWhileTheOriginComesAndGoes() throws {
        // Given an origin of this test's own, which it stops and starts again meanwhile
        let environment = ProcessInfo.processInfo.environment
        guard let python = environment["COURIER_PYTHON"], let script = environment["COURIER_JSON_API_SCRIPT"] else {
            throw HTTPBin.missing("The crash test's origin that goes away runs Scripts/json_api.py itself: run Scripts/test.sh, "
                + "or set COURIER_PYTHON (.build/venv/bin/python) and COURIER_JSON_API_SCRIPT (Scripts/json_api.py)")
        }
        let port = HTTPBin.closedPort()
        let scenario = try CrashScenario(name: "origin-comes-and-goes", origin: URL(string: "http://127.0.0.1:\(port)")!, test: self)
        let control = try OriginControl(python: python, script: script, port: port,
                                        record: scenario.folder.appendingPathComponent("origin-record.jsonl"),
                                        log: scenario.folder.appendingPathComponent("origin.log"), seed: scenario.seed)
        defer { control.stopForGood() }
        // When the child is killed at random points while the origin goes away and comes back
        let report = try scenario.run(originControl: control)
        // Then the same checks pass, and the origin went away at least once
        XCTAssertGreaterThan(control.stops, 0, "the origin never went away (\(scenario.context))")
        try scenario.check(report)
    }
}

/// What happened in one scenario's runs.
struct CrashReport {
    var runs = 0
    /// Kills before the run wrote anything (its journal opening, its observers registered again)
    /// with writes left to add; while it was adding writes; after it had added all but before any
    /// result in that run; and after it had got results in that run (each kill counted in one).
    var killsWhileOpening = 0, killsWhileAdding = 0, killsWhileSending = 0, killsWhileDelivering = 0
    /// Kills that landed between the child's record of its intent to add a write and its record
    /// that the add returned.
    var killsBetweenAddAndRecord = 0
    /// Of the kills while adding, those in runs that had got results too.
    var killsWhileAddingAndDelivering = 0
    /// Per killed run: how many results it had got when killed.
    var deliveredBeforeKill: [Int: Int] = [:]
    var duration: Duration = .zero
    /// How many times the origin went away (the scenario where it does).
    var originStops = 0
    /// Runs started once the child had added every write.
    var runsAfterAllAdded = 0
}

/// One scenario: the child's folders, the seed, the run loop and the checks.
final class CrashScenario {
    let name: String
    let origin: URL
    let writes: Int
    let lanes = 5
    let seed: UInt64
    let tag: String
    let folder: URL
    let transport: String
    private let child: URL
    private unowned let test: XCTestCase

    var journal: URL { folder.appendingPathComponent("journal") }
    var state: URL { folder.appendingPathComponent("state") }
    var context: String { "scenario \(name), seed \(seed), \(writes) writes, transport \(transport), folders kept at \(folder.path)" }

    init(name: String, origin: URL, test: XCTestCase) throws {
        let environment = ProcessInfo.processInfo.environment
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        child = products.appendingPathComponent("CourierCrashChild")
        guard FileManager.default.isExecutableFile(atPath: child.path) else {
            throw XCTSkip("the crash test's child program is not built (swift build --build-tests builds it at \(child.path))")
        }
        self.name = name
        self.origin = origin
        self.test = test
        writes = environment["COURIER_CRASH_WRITES"].flatMap(Int.init) ?? 1000
        seed = environment["COURIER_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        transport = environment["COURIER_TEST_TRANSPORT"] ?? "network"
        tag = "crash-\(name)-\(UUID().uuidString.lowercased().prefix(8))"
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        test.addTeardownBlock { [folder] in
            if test.testRun?.hasSucceeded == true { try? FileManager.default.removeItem(at: folder) }
        }
    }

    /// Starts the child again and again, killing it after random delays, until it exits 0.
    func run(originControl: OriginControl?) throws -> CrashReport {
        var random = SeededGenerator(seed: seed)
        var report = CrashReport()
        let started = ContinuousClock.now
        let deadline = started + DurableCrashTestsBounds.maximumDuration
        originControl?.startTogglingUntilStopped()
        // The checks read the origin's log: it is up once the runs are over.
        defer { originControl?.stopToggling() }
        let log = folder.appendingPathComponent("child.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        while true {
            report.runs += 1
            guard report.runs <= DurableCrashTestsBounds.maximumRuns else {
                throw failure("the child was started \(DurableCrashTestsBounds.maximumRuns) times without ending (\(report))")
            }
            let before = try records()
            let allAdded = before.added.count == writes
            if allAdded { report.runsAfterAllAdded += 1 }
            let killing = report.deliveredBeforeKill.count < DurableCrashTestsBounds.maximumKills
                && ContinuousClock.now - started < DurableCrashTestsBounds.killingDuration
                && report.runsAfterAllAdded <= DurableCrashTestsBounds.killsAfterAllAdded
            // While adding, delays from 20 ms (before the journal is open) to 300 ms (a good part
            // of the writes); once all are added, what is left takes less: 20 to 200 ms, so that
            // kills land while the last writes are sent and their results delivered.
            let delay = Double.random(in: 0.02...(allAdded ? 0.2 : 0.3), using: &random)
            if !killing, let originControl {
                // The last run goes to its end with the origin there.
                originControl.stopToggling()
            }
            let process = Process()
            process.executableURL = child
            process.arguments = ["--journal", journal.path, "--state", state.path, "--origin", origin.absoluteString,
                                 "--tag", tag, "--writes", "\(writes)", "--lanes", "\(lanes)", "--run", "\(report.runs)",
                                 "--transport", transport]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = output
            let exited = DispatchSemaphore(value: 0)
            process.terminationHandler = { _ in exited.signal() }
            try process.run()
            let limit: DispatchTime = killing ? .now() + delay : .now() + max(0, (deadline - ContinuousClock.now).seconds)
            if exited.wait(timeout: limit) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                guard exited.wait(timeout: .now() + 30) == .success else {
                    throw failure("the child \(process.processIdentifier) did not end within 30 s of SIGKILL")
                }
                guard killing else {
                    throw failure("the child did not end within \(DurableCrashTestsBounds.maximumDuration) (\(report))\n\(tail(of: log))")
                }
                try classifyKill(of: report.runs, before: before, into: &report)
                continue
            }
            guard process.terminationReason == .exit, process.terminationStatus == 0 else {
                throw failure("the child's run \(report.runs) ended with \(process.terminationReason) \(process.terminationStatus)\n\(tail(of: log))")
            }
            report.duration = ContinuousClock.now - started
            report.originStops = originControl?.stops ?? 0
            return report
        }
    }

    /// Counts a kill of run `run` in the window it landed in, from what the child had written.
    private func classifyKill(of run: Int, before: ChildRecords, into report: inout CrashReport) throws {
        let after = try records()
        let delivered = after.results.count { $0.run == run }
        report.deliveredBeforeKill[run] = delivered
        let addedLines = after.addedLines - before.addedLines
        if addedLines > 0 && after.lastIntentUnrecorded { report.killsBetweenAddAndRecord += 1 }
        if addedLines == 0 && delivered == 0 && after.added.count < writes {
            report.killsWhileOpening += 1
        } else if after.added.count < writes {
            report.killsWhileAdding += 1
            if delivered > 0 { report.killsWhileAddingAndDelivering += 1 }
        } else if delivered == 0 {
            report.killsWhileSending += 1
        } else {
            report.killsWhileDelivering += 1
        }
    }

    // MARK: Checks

    func check(_ report: CrashReport) throws {
        let records = try records()
        let log = try originLog()
        var problems: [String] = []
        let names = (0..<writes).map { "w\($0)" }
        let index = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })

        // The origin saw every write, under its own key only: a write the child added again after a
        // kill between its add and its record of it is the same request (addDurably's key).
        var keys: [String: [String]] = [:]
        var firstArrivals: [(name: String, key: String)] = []
        var seenKeys: Set<String> = []
        for (name, key) in log {
            guard index[name] != nil else { problems.append("the origin recorded \(name), which the child never wrote"); continue }
            if seenKeys.insert(key).inserted {
                keys[name, default: []].append(key)
                firstArrivals.append((name, key))
            }
        }
        let neverSent = names.filter { keys[$0] == nil }
        if !neverSent.isEmpty { problems.append("\(neverSent.count) writes never reached the origin: \(neverSent.prefix(20))") }
        for (name, itsKeys) in keys where itsKeys != ["\(tag)-\(name)"] {
            problems.append("\(name) reached the origin under the keys \(itsKeys), added again \(records.again[index[name]!, default: 0]) times")
        }

        // Each write has exactly one distinct result, a success; the same result given again
        // (same ID, same outcome) is counted, and must come after a kill that landed while that
        // run was getting results.
        var resultsOf: [Int: [ChildRecords.Result]] = [:]
        for result in records.results { resultsOf[result.index, default: []].append(result) }
        var duplicateDeliveries: [(index: Int, firstRun: Int, position: Int)] = []
        for writeIndex in 0..<writes {
            guard let itsResults = resultsOf[writeIndex], let first = itsResults.first else {
                problems.append("w\(writeIndex) has no result"); continue
            }
            // "ok <the origin's count> <the name it was sent>": the result of this write, not another's.
            let fields = first.outcome.split(separator: " ")
            if fields.count != 3 || fields[0] != "ok" || fields[2] != "w\(writeIndex)" {
                problems.append("w\(writeIndex) ended with \(first.outcome) (ID \(first.id))")
            }
            for later in itsResults.dropFirst() {
                guard later.id == first.id, later.outcome == first.outcome else {
                    problems.append("w\(writeIndex) has two results: \(first) and \(later)"); continue
                }
                guard later.run > first.run, report.deliveredBeforeKill[first.run] != nil else {
                    problems.append("w\(writeIndex)'s result was given twice without a kill in between: \(first), \(later)"); continue
                }
                // How far from the kill the first copy was: 1 = the run's last result.
                let ofRun = records.results.filter { $0.run == first.run }
                let position = ofRun.count - (ofRun.firstIndex { $0.index == writeIndex } ?? 0)
                duplicateDeliveries.append((writeIndex, first.run, position))
            }
        }

        // Each lane's writes reached the origin in the order added (the first arrival of each key).
        for lane in 0..<lanes {
            let arrivals = firstArrivals.compactMap { arrival -> Int? in
                let writeIndex = index[arrival.name]!
                return writeIndex % 2 == 0 && writeIndex / 2 % lanes == lane ? writeIndex : nil
            }
            if let wrong = zip(arrivals, arrivals.dropFirst()).first(where: { $0.0 > $0.1 }) {
                problems.append("lane-\(lane): w\(wrong.0) reached the origin before w\(wrong.1)")
            }
        }

        let kills = report.deliveredBeforeKill.count
        let summary = """
            DurableCrashTests \(context): \(report.runs) runs in \(report.duration), \(kills) kills: \(report.killsWhileOpening) while opening, \
            \(report.killsWhileAdding) while adding (\(report.killsWhileAddingAndDelivering) of them while results came too, \
            \(report.killsBetweenAddAndRecord) between an add and the child's record of it), \(report.killsWhileSending) while \
            sending (all added, no result yet in that run), \(report.killsWhileDelivering) while delivering; \
            \(records.again.values.reduce(0, +)) writes added again under their keys; \
            \(duplicateDeliveries.count) results given again after a kill \
            (in \(Set(duplicateDeliveries.map(\.firstRun)).count) of the \(report.deliveredBeforeKill.values.count { $0 > 0 }) kills of runs that had got results) \
            (positions before the kill: \(duplicateDeliveries.map(\.position).sorted())); \(log.count) requests at the origin, \
            which went away \(report.originStops) times
            """
        print(summary)
        if let path = ProcessInfo.processInfo.environment["COURIER_CRASH_SUMMARY"],
           let file = FileHandle(forWritingAtPath: path) ?? (FileManager.default.createFile(atPath: path, contents: nil)
               ? FileHandle(forWritingAtPath: path) : nil) {
            // For runs whose output is not kept (Scripts/stress.sh keeps only failed runs').
            _ = try? file.seekToEnd()
            try? file.write(contentsOf: Data((summary + "\n").utf8))
            try? file.close()
        }
        // A result is given again only when the kill came before the journal noted it as seen:
        // among the last results the killed run got (the journal's notes trail the deliveries by
        // a few writes at most).
        for duplicate in duplicateDeliveries where duplicate.position > 32 {
            problems.append("w\(duplicate.index)'s result was given again though \(duplicate.position - 1) results came after it in run \(duplicate.firstRun)")
        }
        if !problems.isEmpty {
            throw failure("\(problems.count) problems:\n" + problems.prefix(40).joined(separator: "\n") + "\n" + summary)
        }
    }

    // MARK: Records

    private func records() throws -> ChildRecords {
        try ChildRecords(state: state)
    }

    /// The [name, key] pairs the origin recorded under the scenario's tag, in the order they arrived.
    private func originLog() throws -> [(String, String)] {
        let url = origin.appendingPathComponent("durable/\(tag)/log")
        let pairs = try JSONDecoder().decode([[String]].self, from: Data(contentsOf: url))
        return pairs.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }

    private func tail(of log: URL) -> String {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return "the child's output ends:\n" + text.split(separator: "\n").suffix(20).joined(separator: "\n")
    }

    private func failure(_ message: String) -> any Error {
        XCTFail("\(message)\n(\(context))")
        return CrashTestFailure()
    }
}

struct CrashTestFailure: Error {}

/// A scenario's bounds.
enum DurableCrashTestsBounds {
    /// The child is started at most this many times (60 restarts), in at most this long.
    static let maximumRuns = 61
    static let maximumDuration: Duration = .seconds(90)
    /// No more kills after this many, or this long: the child then runs to its end.
    static let maximumKills = 45
    static let killingDuration: Duration = .seconds(45)
    /// And at most this many once every write is added (a child started more often would spend
    /// its runs opening the journal).
    static let killsAfterAllAdded = 15
}

/// What the child wrote in its state folder (its main.swift describes the lines).
struct ChildRecords {
    struct Result: CustomStringConvertible {
        let index: Int
        let id: UInt64
        let run: Int
        let outcome: String
        var description: String { "[w\(index) ID \(id) run \(run): \(outcome)]" }
    }

    /// The IDs of the writes added, by index.
    var added: [Int: UInt64] = [:]
    /// How many times each write was added again after a kill between its add and the record.
    var again: [Int: Int] = [:]
    /// Whether the last line is an intent without its record: a kill landed between the two.
    var lastIntentUnrecorded = false
    /// The lines of added.log.
    var addedLines = 0
    var results: [Result] = []

    init(state: URL) throws {
        for line in Self.lines(state.appendingPathComponent("added.log")) {
            let fields = line.split(separator: " ")
            guard fields.count >= 2, let index = Int(fields[1]) else { continue }
            switch fields[0] {
            case "added": if fields.count == 3, let id = UInt64(fields[2]) { added[index] = id }
            case "again": again[index, default: 0] += 1
            default: break
            }
            lastIntentUnrecorded = fields[0] == "intent"
            addedLines += 1
        }
        for line in Self.lines(state.appendingPathComponent("results.log")) {
            let fields = line.split(separator: " ", maxSplits: 3)
            guard fields.count == 4, let index = Int(fields[0]), let id = UInt64(fields[1]), let run = Int(fields[2]) else { continue }
            results.append(Result(index: index, id: id, run: run, outcome: String(fields[3])))
        }
    }

    /// The file's complete lines (a line cut short by a kill is not one).
    private static func lines(_ url: URL) -> [Substring] {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    }
}

/// The origin of the scenario where it goes away: Scripts/json_api.py with a record file, killed
/// and started again on the same port at random times until told to stop.
final class OriginControl: Sendable {
    private let python: String
    private let script: String
    private let port: Int
    private let record: URL
    private let log: URL
    private let seed: UInt64
    private let state = Locked<(process: Process?, toggling: Bool, stops: Int)>((nil, false, 0))
    private let stopRequest = DispatchSemaphore(value: 0)
    private let toggled = DispatchGroup()

    init(python: String, script: String, port: Int, record: URL, log: URL, seed: UInt64) throws {
        self.python = python
        self.script = script
        self.port = port
        self.record = record
        self.log = log
        self.seed = seed
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        try start()
    }

    var stops: Int { state.withLock { $0.stops } }

    /// Starts the origin and waits (up to 10 s) until uvicorn says it is listening.
    private func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, "\(port)", record.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let listening = DispatchSemaphore(value: 0)
        let output = Locked(Data())
        let logFile = log
        errors.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil; return }
            if let file = try? FileHandle(forWritingTo: logFile) {
                _ = try? file.seekToEnd()
                try? file.write(contentsOf: data)
                try? file.close()
            }
            let now = output.withLock { text -> Bool in
                let before = text.range(of: Data("Uvicorn running on".utf8)) != nil
                text.append(data)
                return !before && text.range(of: Data("Uvicorn running on".utf8)) != nil
            }
            if now { listening.signal() }
        }
        try process.run()
        guard listening.wait(timeout: .now() + 10) == .success else {
            process.terminate()
            throw OriginFailure(description: "the origin did not start on port \(port): \(String(decoding: output.withLock { $0 }, as: UTF8.self))")
        }
        state.withLock { $0.process = process }
    }

    private func stop() {
        guard let process = state.withLock({ state -> Process? in
            defer { state.process = nil }
            return state.process
        }) else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        state.withLock { $0.stops += 1 }
    }

    /// Kills the origin and starts it again at random times (up 0.2–1.5 s, gone 0.2–1.5 s) on a
    /// thread of its own, until `stopToggling`.
    func startTogglingUntilStopped() {
        state.withLock { $0.toggling = true }
        toggled.enter()
        Thread.detachNewThread { [self] in
            defer { toggled.leave() }
            var random = SeededGenerator(seed: seed ^ 0x5EED_0F_0819)
            while true {
                if stopRequest.wait(timeout: .now() + Double.random(in: 0.2...1.5, using: &random)) == .success { break }
                stop()
                if stopRequest.wait(timeout: .now() + Double.random(in: 0.2...1.5, using: &random)) == .success {
                    try? start()
                    break
                }
                do {
                    try start()
                } catch {
                    // Reported by the checks: the child cannot end without its origin.
                    FileHandle.standardError.write(Data("DurableCrashTests: \(error)\n".utf8))
                }
            }
        }
    }

    /// Stops the toggling with the origin up (waits for the toggling thread to end).
    func stopToggling() {
        guard state.withLock({ state -> Bool in
            defer { state.toggling = false }
            return state.toggling
        }) else { return }
        stopRequest.signal()
        toggled.wait()
        if state.withLock({ $0.process == nil }) { try? start() }
    }

    func stopForGood() {
        stopToggling()
        stop()
    }
}

struct OriginFailure: Error, CustomStringConvertible {
    let description: String
}

private extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
