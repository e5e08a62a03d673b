import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import XCTest
@testable import Courier

/// A JSON response used throughout the tests.
struct Greeting: Response, Decodable, Equatable {
    let message: String
}

/// A request to any path, for any response type.
struct PathRequest<ResponseType: Response>: Request {
    var path: String
    var method: HTTPMethod = .get
    var headers: [String: String] = [:]
    var timeout: TimeInterval?

    init(_ path: String, method: HTTPMethod = .get, headers: [String: String] = [:],
         timeout: TimeInterval? = nil, as type: ResponseType.Type = ResponseType.self) {
        self.path = path
        self.method = method
        self.headers = headers
        self.timeout = timeout
    }
}

/// A request with a body, for any response type.
struct BodyRequest<ParametersType: Parameters, ResponseType: Response>: Request {
    var parameters: ParametersType
    var path: String
    var method: HTTPMethod = .post
}

/// A plain text body, to test bodies without the encoders.
struct TextBody: BodyData {
    var text: String
    var contentType: String { "text/plain; charset=utf-8" }
    func encode() throws -> Data { Data(text.utf8) }
}

/// A hand-written query string.
struct RawQuery: QueryString {
    var query: String
    func encode() throws -> String { query }
}

/// Thread-safe list of what happened, in order.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}

/// An object whose deallocation fulfils an expectation: proves memory was released.
final class Canary: Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

final class ObserverOwner {}

enum TestQueues {
    /// Observers in tests run on this queue rather than main, as command-line programs do.
    static let callbacks = DispatchQueue(label: "CourierTests.callbacks")
}

func makeQueue(
    transport: StubTransport,
    maxConcurrent: Int = 6,
    delegate: (any RequestQueueDelegate)? = nil,
    baseURL: String? = "https://api.example.com/v1",
    retentionCount: Int = 256,
    sweepInterval: Double = 2
) -> RequestQueue {
    var configuration = RequestQueueConfiguration.default
    configuration.callbackQueue = TestQueues.callbacks
    configuration.maxConcurrentRequests = maxConcurrent
    configuration.resultRetentionCount = retentionCount
    return RequestQueue(configuration: configuration, delegate: delegate,
                        baseURL: baseURL.flatMap(URL.init(string:)), transport: transport,
                        sweepInterval: sweepInterval)
}

extension XCTestCase {
    /// Adds an observer for `id` and waits for its one result.
    func result<R: Sendable>(of id: RequestID, on queue: RequestQueue, as type: R.Type = R.self,
                             timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line)
        -> Result<R, RequestError>? {
        let delivered = expectation(description: "result of \(id)")
        let box = Recorder<Result<R, RequestError>>()
        queue.addObserver(for: id) { (result: Result<R, RequestError>) in
            box.append(result)
            delivered.fulfill()
        }
        wait(for: [delivered], timeout: timeout)
        XCTAssertLessThanOrEqual(box.count, 1, "an observer was called more than once", file: file, line: line)
        return box.all.first
    }
}

/// Polls `condition` until it holds or `timeout` seconds have passed; returns whether it holds.
///
/// For a state the test cannot be told about (no callback or signal reports it: a background
/// store, the sharing table) that stays once reached. Only the bound is timing, and it only runs
/// out when the state never comes, so it is generous: a loaded machine under ThreadSanitizer.
func eventually(timeout: TimeInterval = 30, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + timeout
    while !condition() {
        guard DispatchTime.now() < deadline else { return condition() }
        usleep(1_000)
    }
    return true
}

/// What ``bounded(_:_:)`` throws when its body has not returned in time.
struct TimedOut: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "still waiting after \(seconds) s" }
}

/// Runs `body` (a loop over an async sequence, say), cancelling it and throwing ``TimedOut`` if it
/// has not returned after `seconds`: so that a result that never comes fails the test instead of
/// hanging the suite. Generous by default, as it costs nothing when the body returns.
func bounded<T: Sendable>(_ seconds: Double = 30, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))   // the bound itself, not a hand-off
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TimedOut(seconds: seconds) }
        return value
    }
}
