// A short tour of Courier against an httpbin server.
//
//     swift run CourierExample --base-url http://127.0.0.1:8080
//
// The README shows how to start a local httpbin for it.

import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: - Requests and responses

/// What httpbin says it received.
struct Echo: Response, Decodable {
    let url: String
    let args: [String: String]
    let headers: [String: String]
    let json: Note?
}

struct Note: Codable, Sendable {
    let title: String
    let body: String
}

/// A query string written by hand (the Mirror-based encoders do this for you; see the README).
struct Search: QueryString {
    let term: String
    func encode() throws -> String {
        "q=" + (term.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
    }
}

/// A JSON body from a Codable value.
struct NoteBody: BodyData {
    let note: Note
    var contentType: String { "application/json" }
    func encode() throws -> Data { try JSONEncoder().encode(note) }
}

struct SearchRequest: Request {
    typealias ResponseType = Echo
    let parameters: Search
    var path: String { "/get" }
    var method: HTTPMethod { .get }
}

struct CreateNoteRequest: Request {
    typealias ResponseType = Echo
    let parameters: NoteBody
    var path: String { "/post" }
    var method: HTTPMethod { .post }
    var headers: [String: String] { ["X-Client": "courier-example"] }
}

struct SlowRequest: Request {
    typealias ResponseType = EmptyResponse
    var path: String { "/delay/5" }
    var method: HTTPMethod { .get }
}

struct MissingRequest: Request {
    typealias ResponseType = EmptyResponse
    var path: String { "/status/404" }
    var method: HTTPMethod { .get }
}

// MARK: - A delegate that logs every step with its timing

final class LoggingDelegate: RequestQueueDelegate {
    private let start = Date()

    private func log(_ text: String) {
        print(String(format: "  [%6.1f ms] ", Date().timeIntervalSince(start) * 1000) + text)
    }

    func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {
        request.setValue("Bearer example-token", forHTTPHeaderField: "Authorization")
        log("will send \(request.httpMethod ?? "") \(request.url?.absoluteString ?? "")")
    }

    func requestQueue(_ queue: RequestQueue, didSend request: URLRequest) {
        log("did send \(request.url?.path ?? "")")
    }

    func requestQueue(_ queue: RequestQueue, didReceive response: HTTPURLResponse) {
        log("did receive \(response.statusCode) from \(response.url?.path ?? "")")
    }

    func requestQueue(_ queue: RequestQueue, didFailWith request: URLRequest?, error: RequestError) {
        log("did fail \(request?.url?.path ?? "(before sending)"): \(error)")
    }
}

/// Owns a type observer for as long as it lives.
final class NotesScreen {}

// MARK: - The tour

@main
struct CourierExample {
    static func main() async {
        guard let baseURL = parseBaseURL() else {
            print("""
                usage: swift run CourierExample --base-url http://127.0.0.1:PORT

                Start a local httpbin first (see the README):
                  python3 -m venv .build/venv && .build/venv/bin/pip install httpbin gunicorn
                  .build/venv/bin/gunicorn -b 127.0.0.1:8080 -k gthread httpbin:app
                """)
            exit(64)
        }
        do {
            try await tour(baseURL: baseURL)
            print("\nDone.")
        } catch {
            print("\nThe tour failed: \(error)")
            exit(1)
        }
    }

    static func tour(baseURL: URL) async throws {
        // Callbacks on the main queue, as in an app: an async `main` keeps it running on Linux.
        var configuration = RequestQueueConfiguration.default
        configuration.maxConcurrentRequests = 4
        let queue = RequestQueue(configuration: configuration, delegate: LoggingDelegate(), baseURL: baseURL)

        print("1. A GET with a query string, observed by request ID")
        let searchID = queue.add(SearchRequest(parameters: Search(term: "swift & linux")))
        let search: Result<Echo, RequestError> = await observe(searchID, on: queue)
        print("   httpbin saw q = \(try search.get().args["q"] ?? "?")")

        print("\n2. A JSON POST, observed by response type while its owner lives")
        var screen: NotesScreen? = NotesScreen()
        let (heard, hear) = AsyncStream.makeStream(of: String.self)
        queue.addObserver(ownedBy: screen!) { (result: Result<Echo, RequestError>) in
            hear.yield((try? result.get().json?.title) ?? "failed")
        }
        let note = Note(title: "Groceries", body: "Milk, \"good\" bread")
        let created = try await queue.send(CreateNoteRequest(parameters: NoteBody(note: note)))
        print("   async send returned: \(created.json?.title ?? "?"), X-Client = \(created.headers["X-Client"] ?? "?")")
        for await title in heard {
            print("   the type observer heard: \(title)")
            break
        }
        screen = nil
        _ = try await queue.send(CreateNoteRequest(parameters: NoteBody(note: note)))
        print("   (the owner is gone, so the type observer stayed silent the second time)")

        print("\n3. An error status becomes a typed validation failure")
        let missing: Result<EmptyResponse, RequestError> = await observe(queue.add(MissingRequest()), on: queue)
        if case .failure(let error) = missing { print("   \(error)") }

        print("\n4. Cancelling a request: cancelled while it waits, it never reaches the network")
        let slowID = queue.add(SlowRequest())
        queue.cancel(slowID)
        let slow: Result<EmptyResponse, RequestError> = await observe(slowID, on: queue)
        if case .failure(let error) = slow { print("   \(error)  isFinished: \(queue.isFinished(slowID))") }
    }

    /// Waits for one request's result through an ID observer.
    static func observe<R: Response>(_ id: RequestID, on queue: RequestQueue) async -> Result<R, RequestError> {
        await withCheckedContinuation { continuation in
            queue.addObserver(for: id) { (result: Result<R, RequestError>) in continuation.resume(returning: result) }
        }
    }

    static func parseBaseURL() -> URL? {
        let arguments = CommandLine.arguments
        guard let index = arguments.firstIndex(of: "--base-url"), index + 1 < arguments.count else { return nil }
        return URL(string: arguments[index + 1])
    }
}
