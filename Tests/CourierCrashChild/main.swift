// The child of DurableCrashTests (issue #22's crash test): an app that adds durable writes and
// waits for their results, killed with SIGKILL at random points and started again on the same
// folders by the test, until it exits 0.
//
//   CourierCrashChild --journal DIR --state DIR --origin URL --tag TAG --writes N --lanes L
//                     --run K [--transport curl|urlsession]
//
// Write i (0 ..< N) is POST <origin>/durable/<tag>/w<i>, in lane "lane-<i % L>" when i is even,
// in no lane otherwise. The child's own records, in --state, each line written and fsync'd:
//   added.log    "intent <i>" before addDurably, "added <i> <id>" after it returned. An intent
//                without its "added" is a write the child cannot know was journaled (it was killed
//                in between): the child adds it again under the same key ("<tag>-w<i>", which
//                returns the journaled request's ID if the first add went through) and says so
//                ("again <i>"), so the test counts it; the origin must still see it under one key.
//   results.log  "<i> <id> <run> <outcome>" for every result an observer got, in the order got:
//                "ok <server's id> <text>", "failed <error>", or "unavailable" (the queue had no
//                result for an ID the child never got one for: a lost write).
// Every run observes every ID it added (in any run) again: a result the queue gives again after a
// kill is written again, for the test to count; an ID the queue has no result for any more, and
// that has one in results.log, is a result seen before (counted on standard error only).
// It exits 0 once every write has a result and every observer it registered was answered; 2 on
// bad arguments; 3 when the journal cannot be opened.
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Courier

/// The origin's answer to a write (Scripts/json_api.py's recording endpoint).
struct Recorded: Decodable, Sendable {
    let id: Int
    let text: String
}

struct Draft: JSONBodyData {
    let text: String
}

struct Write: Request {
    typealias ResponseType = Recorded
    let tag: String
    let name: String
    var parameters: Draft { Draft(text: name) }
    var path: String { "/durable/\(tag)/\(name)" }
    var method: HTTPMethod { .post }
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("CourierCrashChild: \(message)\n".utf8))
    exit(status)
}

// MARK: Arguments

let options: [String: String] = {
    var options: [String: String] = [:]
    var arguments = CommandLine.arguments.dropFirst()
    while let name = arguments.popFirst() {
        guard name.hasPrefix("--"), let value = arguments.popFirst() else { fail("bad argument \(name)", status: 2) }
        options[String(name.dropFirst(2))] = value
    }
    return options
}()
@MainActor func option(_ name: String) -> String {
    guard let value = options[name] else { fail("--\(name) is missing", status: 2) }
    return value
}
let journalFolder = URL(fileURLWithPath: option("journal"))
let stateFolder = URL(fileURLWithPath: option("state"))
guard let origin = URL(string: option("origin")) else { fail("--origin is not a URL", status: 2) }
let tag = option("tag")
guard let writes = Int(option("writes")), writes > 0, let lanes = Int(option("lanes")), lanes > 0,
      let run = Int(option("run")) else { fail("--writes, --lanes and --run take numbers", status: 2) }

func name(_ index: Int) -> String { "w\(index)" }
func lane(_ index: Int) -> String? { index % 2 == 0 ? "lane-\(index / 2 % lanes)" : nil }

// MARK: Records

/// An append-only file of lines, each flushed to the disk before `append` returns.
final class RecordFile: Sendable {
    let url: URL
    private let descriptor: Int32

    init(_ url: URL) {
        self.url = url
        descriptor = open(url.path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        if descriptor < 0 { fail("cannot open \(url.path): errno \(errno)", status: 3) }
    }

    /// The lines the file holds, without one cut short by a kill.
    static func lines(_ url: URL) -> [Substring] {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // after the last newline: empty, or a line cut short
        return lines
    }

    func append(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else { fail("cannot write \(url.path): errno \(errno)", status: 3) }
    }
}

try? FileManager.default.createDirectory(at: stateFolder, withIntermediateDirectories: true)
let addedURL = stateFolder.appendingPathComponent("added.log")
let resultsURL = stateFolder.appendingPathComponent("results.log")

// What earlier runs did: the IDs added, the writes whose add may or may not have been journaled,
// and the writes with a result.
var addedIDs: [Int: RequestID] = [:]
var intended: Set<Int> = []
for line in RecordFile.lines(addedURL) {
    let fields = line.split(separator: " ")
    guard fields.count >= 2, let index = Int(fields[1]) else { continue }
    switch fields[0] {
    case "intent": intended.insert(index)
    case "added":
        guard fields.count == 3, let raw = UInt64(fields[2]), let id = RequestID(durableRawValue: raw) else { continue }
        addedIDs[index] = id
    default: break
    }
}
var withResult: Set<Int> = []
for line in RecordFile.lines(resultsURL) {
    let fields = line.split(separator: " ", maxSplits: 3)
    if fields.count == 4, fields[3] != "unavailable", let index = Int(fields[0]) { withResult.insert(index) }
}
let added = RecordFile(addedURL)
let results = RecordFile(resultsURL)

// MARK: Observing

/// A value behind an NSLock. Not `Synchronization.Mutex`: on Linux ThreadSanitizer does not see
/// `Mutex`'s lock (a futex of its own) and reports the accesses it guards as races.
/// `@unchecked Sendable`: `value` is read and written only inside `withLock`.
final class Guarded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// What this run waits for: every write with a result, every observer answered.
final class Progress: Sendable {
    private struct State {
        var missing: Set<Int>
        var unanswered = 0
        var seenBefore = 0
    }

    private let state: Guarded<State>
    private let results: RecordFile
    private let run: Int
    let done = DispatchSemaphore(value: 0)

    init(missing: Set<Int>, results: RecordFile, run: Int) {
        state = Guarded(State(missing: missing))
        self.results = results
        self.run = run
    }

    func registered() {
        state.withLock { $0.unanswered += 1 }
    }

    /// Records an observer's answer; called on the queue's (serial) callback queue.
    func answered(_ index: Int, _ id: RequestID, _ result: Result<Recorded, RequestError>, had: Bool) {
        let outcome: String
        switch result {
        case .success(let value): outcome = "ok \(value.id) \(value.text)"
        case .failure(.resultUnavailable) where had:
            // Seen by an earlier run and noted as delivered: nothing to record.
            outcome = ""
        case .failure(.resultUnavailable): outcome = "unavailable"
        case .failure(let error): outcome = "failed \(String(describing: error).replacingOccurrences(of: "\n", with: " "))"
        }
        if !outcome.isEmpty { results.append("\(index) \(id.rawValue) \(run) \(outcome)") }
        let finished = state.withLock { state -> Bool in
            state.unanswered -= 1
            if outcome.isEmpty { state.seenBefore += 1 } else { state.missing.remove(index) }
            return state.missing.isEmpty && state.unanswered == 0
        }
        if finished { done.signal() }
    }

    /// Once every observer is registered: done already when none was (nothing left to observe).
    func allRegistered() {
        if state.withLock({ $0.missing.isEmpty && $0.unanswered == 0 }) { done.signal() }
    }

    var seenBefore: Int { state.withLock { $0.seenBefore } }
}

let progress = Progress(missing: Set(0..<writes).subtracting(withResult), results: results, run: run)

var configuration = RequestQueueConfiguration.default
configuration.callbackQueue = DispatchQueue(label: "CourierCrashChild.callbacks")
switch options["transport"] {
case "curl": configuration.transport = .curl
case "urlsession": configuration.transport = .urlSession
default: configuration.transport = .network
}
configuration.timeoutInterval = 10
// Retried quickly and for long: the origin may be gone for seconds, and the test bounds the time.
configuration.retryPolicy = RetryPolicy(baseDelay: 0.05, maximumDelay: 0.5)
configuration.durability = Durability(folder: journalFolder, responseTypes: [Recorded.self],
                                      limits: Durability.Limits(attempts: 100_000))
let queue: RequestQueue
do {
    queue = try RequestQueue.open(configuration: configuration, baseURL: origin)
} catch {
    fail("the journal does not open: \(error)", status: 3)
}

@MainActor func observe(_ index: Int, _ id: RequestID) {
    let had = withResult.contains(index)
    progress.registered()
    queue.addObserver(for: id) { (result: Result<Recorded, RequestError>) in
        progress.answered(index, id, result, had: had)
    }
}

// Every ID added before, again.
for (index, id) in addedIDs.sorted(by: { $0.key < $1.key }) { observe(index, id) }

// Then the writes not added yet, in order.
var again = 0
for index in 0..<writes where addedIDs[index] == nil {
    if intended.contains(index) {
        // Killed between the intent and the record of the add: perhaps journaled, perhaps not.
        added.append("again \(index)")
        again += 1
    }
    added.append("intent \(index)")
    let id: RequestID
    do {
        // Under the write's own key: added again after a kill, it is the request the journal holds.
        id = try queue.addDurably(Write(tag: tag, name: name(index)), lane: lane(index), key: "\(tag)-\(name(index))")
    } catch {
        fail("addDurably of write \(index) threw \(error)", status: 3)
    }
    added.append("added \(index) \(id.rawValue)")
    observe(index, id)
}

progress.allRegistered()
progress.done.wait()
FileHandle.standardError.write(Data("CourierCrashChild: run \(run) done, \(progress.seenBefore) results seen before, \(again) adds again\n".utf8))
exit(0)
