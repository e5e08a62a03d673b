// A tour of Courier, step by step. Copy from it freely.
//
//     swift run CourierExample                                   # offline: fixtures in Examples/CourierExample/Fixtures
//     swift run CourierExample --base-url http://127.0.0.1:8080  # the same tour against a real httpbin
//         [--events-url http://127.0.0.1:8081]                   # and a server-sent-events server (Scripts/sse_server.py)
//
// The README shows how to start a local httpbin.

import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Observation
import Synchronization

// MARK: - Parameters: plain values, encoded by Courier

struct Search: DefaultQueryString {          // → ?query=swift%20%26%20linux&page=2&tags%5B%5D=server&tags%5B%5D=ios
    let query: String
    let page: Int
    let tags: [String]
}

struct LogIn: URLEncodedBodyData {           // → user_name=ada&password=p%40ss%20word
    let userName: String
    let password: String
}

struct Note: JSONBodyData {                  // → {"title":"Groceries","body":"Milk, \"good\" bread",...}
    let title: String
    let body: String
    let tags: [String]
    let pinned: Bool
}

// MARK: - Responses

/// What httpbin (or the tour's fixtures) says it received.
struct Echo: Decodable {
    let args: [String: Arg]?
    let form: [String: String]?
    let json: NoteEcho?
    let files: [String: String]?
    let headers: [String: String]?

    /// httpbin gives a repeated query key as a list, a single one as a string.
    enum Arg: Decodable, CustomStringConvertible {
        case one(String), many([String])
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(String.self) { self = .one(value) } else { self = .many(try container.decode([String].self)) }
        }
        var description: String {
            switch self {
            case .one(let value): value
            case .many(let values): values.joined(separator: ", ")
            }
        }
    }

    struct NoteEcho: Decodable { let title: String; let pinned: Bool }
}

/// A post of a JSON API; an array of them is a response as it is.
struct Post: Decodable {
    let id: Int
    let title: String

    /// `[{"id":1,"title":"Hello"},{"id":2,"title":"Again"}]` in base64, for httpbin's /base64 to send back.
    static let pageOfTwo = "W3siaWQiOjEsInRpdGxlIjoiSGVsbG8ifSx7ImlkIjoyLCJ0aXRsZSI6IkFnYWluIn1d"
}

// MARK: - Requests

struct SearchRequest: Request {
    typealias ResponseType = Echo
    let parameters: Search
    var path: String { "/get" }
    var method: HTTPMethod { .get }
}

struct LogInRequest: Request {
    typealias ResponseType = Echo
    let parameters: LogIn
    var path: String { "/post" }
    var method: HTTPMethod { .post }
}

struct NoteRequest: Request {
    typealias ResponseType = Echo
    let parameters: Note
    var path: String { "/post" }
    var method: HTTPMethod { .post }
    var headers: [String: String] { ["X-Client": "courier-tour"] }
}

struct UploadRequest: Request {
    typealias ResponseType = Echo
    let parameters: MultipartFormData
    var path: String { "/post" }
    var method: HTTPMethod { .post }
    var timeout: TimeInterval? { 120 }
}

struct DelayRequest: Request {
    typealias ResponseType = EmptyResponse
    let seconds: Int
    var path: String { "/delay/\(seconds)" }
    var method: HTTPMethod { .get }
    /// Each is a transfer of its own, for the concurrency demo: identical GETs in flight would
    /// otherwise share one.
    var sharesIdenticalRequests: Bool { false }
}

/// httpbin's caching endpoints: `/cache/60` is fresh for a minute; `/cache` must be validated
/// (httpbin answers the validation with 304).
struct CacheDemoRequest: Request {
    typealias ResponseType = EmptyResponse
    let path: String
    var method: HTTPMethod { .get }
}

/// Server-sent events: the request's response type is how the stream ended.
struct EventsRequest: Request {
    typealias ResponseType = StreamedResponse
    let url: String
    var path: String { url + "/events/reconnect?session=tour" }
    var method: HTTPMethod { .get }
}

/// A request with an absolute URL, as the shared queue (which has no base URL) needs.
struct HealthRequest: Request {
    typealias ResponseType = EmptyResponse
    let url: String
    var path: String { url }
    var method: HTTPMethod { .head }
}

struct MissingRequest: Request {
    typealias ResponseType = EmptyResponse
    var path: String { "/status/404" }
    var method: HTTPMethod { .get }
}

// MARK: - A delegate that logs every step, with timings

final class StepLogger: RequestQueueDelegate {
    private let start = Date()
    let quiet = Mutex(false)
    /// Offline, what the transport answers comes from the fixtures, not the network.
    let offline: Bool

    init(offline: Bool) {
        self.offline = offline
    }

    /// Where a response came from, in words.
    func origin(of source: ResponseSource?) -> String {
        switch source {
        case .network?: offline ? "from the fixtures (offline)" : "from the network"
        case let source?: "from the \(source)"
        case nil: "from nowhere (it failed)"
        }
    }

    private func log(_ text: String) {
        guard !quiet.withLock({ $0 }) else { return }
        print(String(format: "      [%7.1f ms] ", Date().timeIntervalSince(start) * 1000) + text)
    }

    func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {
        request.setValue("Bearer tour-token", forHTTPHeaderField: "Authorization")
        log("will send \(request.httpMethod ?? "") \(request.url?.path ?? "")")
    }

    func requestQueue(_ queue: RequestQueue, didSend request: URLRequest) {
        log("did send \(request.url?.path ?? "")")
    }

    func requestQueue(_ queue: RequestQueue, didReceive head: ResponseHead) {
        log("did receive \(head.status) for \(head.url.path)")
    }

    func requestQueue(_ queue: RequestQueue, didFailWith request: URLRequest?, error: RequestError) {
        log("did fail \(request?.url?.path ?? "(before sending)"): \(error)")
    }

    func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics) {
        log("finished \(metrics.id) in \(String(format: "%.1f", metrics.totalDuration * 1000)) ms, "
            + "\(metrics.bytesSent) B sent, \(metrics.bytesReceived) B received"
            + (metrics.source.map { ", \(origin(of: $0))" } ?? ""))
    }
}

/// Owns a type observer for as long as it lives, like a view controller would.
final class NotesScreen {}

// MARK: - The tour

@main
struct CourierExample {
    static func main() async {
        let arguments = CommandLine.arguments
        var baseURL = URL(string: "https://fixtures.courier.local")!
        var eventsURL: String? = ""      // offline: the fixtures answer relative paths
        var configuration = RequestQueueConfiguration.default     // callbacks on .main, as in an app
        configuration.maxConcurrentRequests = 4
        if let index = arguments.firstIndex(of: "--base-url") {
            guard index + 1 < arguments.count, let url = URL(string: arguments[index + 1]), url.host != nil else {
                print("usage: swift run CourierExample [--base-url http://127.0.0.1:PORT]")
                exit(64)
            }
            baseURL = url
            eventsURL = nil
            if let index = arguments.firstIndex(of: "--events-url"), index + 1 < arguments.count {
                eventsURL = arguments[index + 1]
            }
            print("Courier tour against \(url.absoluteString)\n")
        } else {
            do {
                let fixtures = try FixtureTransport(directory: fixturesFolder())
                fixtures.latency = 0.02          // feel the network a little
                fixtures.bytesPerSecond = 8_000_000
                configuration.transport = .fixtures(fixtures)
                print("Courier tour, offline: answers come from \(fixturesFolder().path)")
                print("(run with --base-url http://127.0.0.1:PORT to talk to a real httpbin)\n")
            } catch {
                print("Cannot load the tour's fixtures: \(error)")
                exit(1)
            }
        }
        do {
            try await tour(configuration: configuration, baseURL: baseURL, eventsURL: eventsURL,
                           offline: !arguments.contains("--base-url"))
            print("\nDone.")
        } catch {
            print("\nThe tour failed: \(error)")
            exit(1)
        }
    }

    static func fixturesFolder() -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    }

    static func tour(configuration: RequestQueueConfiguration, baseURL: URL, eventsURL: String?, offline: Bool) async throws {
        let logger = StepLogger(offline: offline)
        let queue = RequestQueue(configuration: configuration, delegate: logger, baseURL: baseURL)

        step(1, "The shared queue, and requests as curl commands (nothing is sent)")
        let health = HealthRequest(url: baseURL.absoluteString + "/status/204")
        print("    RequestQueue.shared needs no set-up; with no base URL it takes absolute URLs:")
        print("    " + (try RequestQueue.shared.curlCommand(for: health)))
        let search = SearchRequest(parameters: Search(query: "swift & linux", page: 2, tags: ["server", "ios"]))
        print("    our own queue resolves paths against its base URL and encodes the parameters:")
        print("    " + (try queue.curlCommand(for: search)))

        step(2, "A GET with a query string, observed by request ID")
        let searchID = queue.add(search)
        let found: Result<Echo, RequestError> = await observe(searchID, on: queue)
        let args = try found.get().args ?? [:]
        print("    the server parsed: " + args.keys.sorted().map { "\($0) = \(args[$0]!)" }.joined(separator: "; "))

        step(3, "A URL-encoded POST, with async/await")
        let login = try await queue.send(LogInRequest(parameters: LogIn(userName: "ada", password: "p@ss word")))
        print("    the server parsed the form: \(login.form ?? [:])")

        step(4, "Any Decodable is a response: a JSON array, with its status and header fields")
        // httpbin's /base64 sends back the bytes it is given: here a JSON array of two posts.
        let page = try await queue.reply(to: .get("/base64/\(Post.pageOfTwo)", as: [Post].self))
        print("    \(page.value.count) posts: " + page.value.map { "#\($0.id) \"\($0.title)\"" }.joined(separator: ", ")
              + "; status \(page.status), \(logger.origin(of: page.source))")
        print("    header fields, in the order the server sent them: " + page.headerFields.map(\.name).joined(separator: ", "))

        step(5, "A JSON POST, observed by response type while its owner lives")
        var screen: NotesScreen? = NotesScreen()
        let (heard, hear) = AsyncStream.makeStream(of: String.self)
        queue.addObserver(ownedBy: screen!) { (result: Result<Echo, RequestError>) in
            hear.yield((try? result.get().json?.title) ?? "(not a note)")
        }
        let note = Note(title: "Groceries", body: "Milk, \"good\" bread", tags: ["home"], pinned: true)
        let echoed = try await queue.send(NoteRequest(parameters: note))
        print("    send returned the note \"\(echoed.json?.title ?? "?")\"")
        for await title in heard {
            print("    …and the type observer heard \"\(title)\" too")
            break
        }
        screen = nil
        _ = try await queue.send(NoteRequest(parameters: note))
        print("    its owner released, the observer stayed silent for the next note")

        step(6, "A multipart upload with a progress bar (the file streams from disk)")
        let photo = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tour-photo.jpg")
        try Data(repeating: 0xFF, count: 2 * 1024 * 1024).write(to: photo)
        defer { try? FileManager.default.removeItem(at: photo) }
        let form = MultipartFormData()
        form.append(fileURL: photo, withName: "photo", fileName: "holiday.jpg", mimeType: "image/jpeg")
        form.append(value: "Holiday", withName: "title")
        logger.quiet.withLock { $0 = true }
        let uploadID = queue.add(UploadRequest(parameters: form))
        queue.addProgressObserver(for: uploadID, interval: 0.05) { progress in
            let fraction = progress.fractionSent ?? 0
            let bar = String(repeating: "#", count: Int(fraction * 30)).padding(toLength: 30, withPad: ".", startingAt: 0)
            print("\r    [\(bar)] \(Int(fraction * 100)) %", terminator: fraction >= 1 ? "\n" : "")
            fflush(nil)
        }
        let uploaded: Result<Echo, RequestError> = await observe(uploadID, on: queue)
        logger.quiet.withLock { $0 = false }
        print("    the server got files \(try uploaded.get().files?.keys.sorted() ?? []) and form \(try uploaded.get().form ?? [:])")

        step(7, "An error status is a typed validation failure")
        let missing: Result<EmptyResponse, RequestError> = await observe(queue.add(MissingRequest()), on: queue)
        if case .failure(let error) = missing { print("    \(error)") }

        step(8, "Cancelling a request in flight")
        let slowID = queue.add(DelayRequest(seconds: 3))
        try await Task.sleep(for: .milliseconds(200))
        queue.cancel(slowID)
        let slow: Result<EmptyResponse, RequestError> = await observe(slowID, on: queue)
        if case .failure(let error) = slow { print("    \(error) isFinished: \(queue.isFinished(slowID))") }

        step(9, "A concurrency limit in action: 6 one-second requests, 2 at a time")
        var limited = configuration
        limited.maxConcurrentRequests = 2
        let narrow = RequestQueue(configuration: limited, delegate: logger, baseURL: baseURL)
        let started = Date()
        let ids = (1...6).map { _ in narrow.add(DelayRequest(seconds: 1)) }
        for id in ids {
            let _: Result<EmptyResponse, RequestError> = await observe(id, on: narrow)
        }
        print(String(format: "    6 requests took %.1f s: three waves of two", Date().timeIntervalSince(started)))

        step(10, "The HTTP cache: a fresh response from memory, and a stored one shown first, then confirmed")
        _ = try await queue.send(CacheDemoRequest(path: "/cache/60"))
        _ = try await queue.send(CacheDemoRequest(path: "/cache/60"))      // nothing sent: fresh for 60 s
        _ = try await queue.send(CacheDemoRequest(path: "/cache"))
        let (updates, update) = AsyncStream.makeStream(of: ResponseUpdate<EmptyResponse>.self)
        queue.load(CacheDemoRequest(path: "/cache")) { update.yield($0) }   // stale at once: shown, then validated
        for await next in updates {
            print("    load: \(next.isFinal ? "then" : "at once"), \(logger.origin(of: next.source))")
            if next.isFinal { break }
        }

        step(11, "An observable resource: what a screen would show, then made stale and loaded again")
        let changes = DispatchQueue(label: "tour.resource")
        let resource = queue.resource(CacheDemoRequest(path: "/cache/60"), options: ResourceOptions(updatesOn: .queue(changes)))
        @Sendable func show() {
            // Observation tells of the next change before it happens: read it once the change is over.
            let line = withObservationTracking { describe(resource) } onChange: { changes.async(execute: show) }
            print("    \(line)")
        }
        changes.sync(execute: show)
        _ = try await resource.fetch()                 // the stored response of step 10: fresh, nothing sent
        resource.invalidate()                          // as a write to its URL would
        _ = try await resource.fetch()                 // stale: loaded from the origin
        changes.sync {}

        step(12, "A durable note: on disk before addDurably returns, held while the app pauses, sent after the app's end")
        let journal = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tour-journal-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: journal) }
        var durable = configuration
        durable.durability = Durability(folder: journal, responseTypes: [Echo.self])
        var app: RequestQueue? = try RequestQueue.open(configuration: durable, delegate: logger, baseURL: baseURL)
        app!.pause()                                   // the user's "sync paused"
        let noteID = try app!.addDurably(NoteRequest(parameters: note), key: "tour-note-1")
        print("    added \(noteID) under its key while \(app!.networkStatus): nothing sent; then the app ends")
        app = nil
        let relaunched = try RequestQueue.open(configuration: durable, delegate: logger, baseURL: baseURL)
        let again = try relaunched.addDurably(NoteRequest(parameters: note), key: "tour-note-1")
        print("    relaunched (\(relaunched.networkStatus)); adding it again under its key gives \(again == noteID ? "the same ID" : "a new ID!")")
        let kept: Result<Echo, RequestError> = await observe(noteID, on: relaunched)
        print("    its ID got the result of the one write: \"\(try kept.get().json?.title ?? "?")\"")

        step(13, "Server-sent events as they arrive, reconnecting with Last-Event-ID until a 204")
        guard let eventsURL else {
            return print("    skipped: pass --events-url with the URL of Scripts/sse_server.py")
        }
        let events = queue.events(EventsRequest(url: eventsURL))
        for try await event in events {
            print("    id \(event.lastEventID): \"\(event.data)\" (connection \(events.connectionCount))")
        }
        print("    the server ended the stream with 204 after \(events.connectionCount) connections")
    }

    /// A resource in one line, as a screen would show it.
    static func describe<R: Request>(_ resource: Resource<R>) -> String {
        let phase = switch resource.phase {
        case .idle: "nothing yet"
        case .loading: "loading"
        case .loaded: "loaded from \(resource.source.map { "\($0)" } ?? "?")"
        case .failed(let error): "failed: \(error)"
        }
        return phase + (resource.isStale ? ", stale" : "") + (resource.isLoading && resource.value != nil ? ", reloading" : "")
    }

    static func step(_ number: Int, _ title: String) {
        print("\n\(number). \(title)")
    }

    /// Waits for one request's result through an ID observer (called on the main queue).
    static func observe<R: Sendable>(_ id: RequestID, on queue: RequestQueue) async -> Result<R, RequestError> {
        await withCheckedContinuation { continuation in
            queue.addObserver(for: id) { (result: Result<R, RequestError>) in continuation.resume(returning: result) }
        }
    }
}
