import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// Load generation: the raw URLSession baseline, the Courier clients (through either transport),
// and one runner that keeps N requests outstanding (or adds them in batches) for any of them.

// MARK: - What is requested

/// The ~200-byte JSON file that Scripts/bench.sh serves at /small.json.
struct Item: Response, Decodable, Equatable {
    struct Owner: Decodable, Equatable, Sendable {
        let id: Int
        let login: String
    }

    let id: Int
    let name: String
    let price: Double
    let inStock: Bool
    let tags: [String]
    let owner: Owner
    let createdAt: String
    let score: Double
}

/// A response that keeps only the size of its body (for the 1 MiB figure).
struct Blob: Response {
    let count: Int
    init(body: ResponseData, head: ResponseHead) {
        count = body.data.count
    }
}

struct SmallEmptyRequest: Request {
    typealias ResponseType = EmptyResponse
    var path: String { "/small.json" }
    var method: HTTPMethod { .get }
}

/// The small JSON at a URL of its own each time (nginx ignores the query), so that a cache
/// misses every one: what the cache adds to a request it cannot answer.
struct NumberedSmallRequest: Request {
    typealias ResponseType = EmptyResponse
    let number: Int
    var path: String { "/small.json?n=\(number)" }
    var method: HTTPMethod { .get }

    private static let last = Atomic<Int>(0)

    /// The next number's request (each number once per process).
    static func next() -> NumberedSmallRequest {
        NumberedSmallRequest(number: last.wrappingAdd(1, ordering: .relaxed).newValue)
    }
}

struct SmallItemRequest: Request {
    typealias ResponseType = Item
    var path: String { "/small.json" }
    var method: HTTPMethod { .get }
}

struct LargeRequest: Request {
    typealias ResponseType = Blob
    var path: String { "/large.bin" }
    var method: HTTPMethod { .get }
}

// MARK: - Clients

/// The Courier transports the network figures compare.
enum CourierTransport: CaseIterable, Sendable {
    /// Courier's libcurl transport, the default network transport on Linux.
    case curl
    /// Courier over URLSession.
    case urlSession

    var setting: RequestTransport {
        switch self {
        case .curl: .curl
        case .urlSession: .urlSession
        }
    }

    /// The contender's name in logs and notes.
    var name: String {
        switch self {
        case .curl: "Courier curl"
        case .urlSession: "Courier URLSession"
        }
    }

    /// A queue configuration with this transport, a private serial callback queue and the limit;
    /// without the cache and shared transfers, so that every request is a transfer (the network
    /// figures repeat one URL). The `cache` figure measures those.
    func configuration(label: String, maxConcurrentRequests: Int) -> RequestQueueConfiguration {
        var configuration = RequestQueueConfiguration.withoutCaching
        configuration.transport = setting
        configuration.callbackQueue = DispatchQueue(label: label)
        configuration.maxConcurrentRequests = maxConcurrentRequests
        return configuration
    }
}

/// How one request ended.
enum Outcome: Sendable {
    case success(bytes: Int)
    case failure(String)
}

/// Something that sends one request at a time on request.
protocol LoadClient: Sendable {
    /// Starts one request; calls `done` exactly once, on any thread.
    func start(_ done: @escaping @Sendable (Outcome) -> Void)
    /// Whether the runner must start the next request from its own serial queue. True for raw
    /// URLSession, whose completion handlers run on the session's queue (starting from there
    /// churns connections, see PLATFORM.md); false for Courier, whose observers already run on
    /// the benchmark's private serial callback queue.
    var hopsToStart: Bool { get }
    /// Releases the session; called once the client is no longer used.
    func close()
}

/// The baseline: one `URLSession(configuration: .default)`, completion-handler data tasks.
final class RawSessionClient: LoadClient {
    private let session: URLSession
    private let url: URL
    private let decodeItem: Bool

    /// - Parameters:
    ///   - maxConnections: `httpMaximumConnectionsPerHost` is raised to at least this.
    ///   - decodeItem: Decode the body as `Item` with a `JSONDecoder`, as Courier does for Decodable.
    init(url: URL, maxConnections: Int, decodeItem: Bool = false) {
        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = max(configuration.httpMaximumConnectionsPerHost, maxConnections)
        session = URLSession(configuration: configuration)
        self.url = url
        self.decodeItem = decodeItem
    }

    var hopsToStart: Bool { true }

    func start(_ done: @escaping @Sendable (Outcome) -> Void) {
        let decodeItem = self.decodeItem
        let task = session.dataTask(with: url) { data, response, error in
            if let error { return done(.failure("\(error)")) }
            guard let http = response as? HTTPURLResponse else { return done(.failure("not an HTTP response")) }
            guard (200..<300).contains(http.statusCode) else { return done(.failure("status \(http.statusCode)")) }
            let body = data ?? Data()
            if decodeItem {
                do { _ = try JSONDecoder().decode(Item.self, from: body) } catch { return done(.failure("\(error)")) }
            }
            done(.success(bytes: body.count))
        }
        task.resume()
    }

    func close() {
        session.finishTasksAndInvalidate()
    }
}

/// Courier through `add` and an ID observer, on a private serial callback queue.
final class CourierClient<R: Request>: LoadClient {
    let queue: RequestQueue
    private let makeRequest: @Sendable () -> R
    private let bytes: @Sendable (R.ResponseType) -> Int

    /// - Parameters:
    ///   - sharing: Identical requests in flight share one transfer (the queue's default; off in
    ///     the other figures, so that every request is a transfer).
    ///   - trusting: Extra roots (`trustedCertificates`), for the HTTPS figures' private CA.
    init(_ transport: CourierTransport, baseURL: URL, maxConcurrentRequests: Int, sharing: Bool = false, trusting: [URL] = [],
         request: @escaping @Sendable () -> R, bytes: @escaping @Sendable (R.ResponseType) -> Int = { _ in 0 }) {
        var configuration = transport.configuration(label: "CourierBench.callbacks", maxConcurrentRequests: maxConcurrentRequests)
        configuration.sharesIdenticalRequests = sharing
        configuration.trustedCertificates = trusting
        queue = RequestQueue(configuration: configuration, baseURL: baseURL)
        makeRequest = request
        self.bytes = bytes
    }

    var hopsToStart: Bool { false }

    func start(_ done: @escaping @Sendable (Outcome) -> Void) {
        let bytes = self.bytes
        let id = queue.add(makeRequest())
        queue.addObserver(for: id) { (result: Result<R.ResponseType, RequestError>) in
            switch result {
            case .success(let response): done(.success(bytes: bytes(response)))
            case .failure(let error): done(.failure("\(error)"))
            }
        }
    }

    func close() {}
}

/// Courier through `async` `send`, one Task per request.
final class CourierSendClient<R: Request>: LoadClient {
    let queue: RequestQueue
    private let makeRequest: @Sendable () -> R

    /// - Parameter cache: The queue's cache; none by default, as in the other figures.
    init(_ transport: CourierTransport, baseURL: URL, maxConcurrentRequests: Int, trusting: [URL] = [],
         cache: ResponseCache? = nil, request: @escaping @Sendable () -> R) {
        var configuration = transport.configuration(label: "CourierBench.callbacks", maxConcurrentRequests: maxConcurrentRequests)
        configuration.trustedCertificates = trusting
        configuration.cache = cache
        queue = RequestQueue(configuration: configuration, baseURL: baseURL)
        makeRequest = request
    }

    var hopsToStart: Bool { false }

    /// Started from a `done` of this client's (the runner starts the next request there), the
    /// request is sent next by the same task, as a user's `for` loop of `send`s does; otherwise
    /// (the first requests of a round) by a new task.
    func start(_ done: @escaping @Sendable (Outcome) -> Void) {
        if let next = NextSend.current {
            next.done = done
            return
        }
        let makeRequest = self.makeRequest
        let queue = self.queue
        Task {
            let next = NextSend(done)
            await NextSend.$current.withValue(next) {
                while let done = next.take() {
                    do {
                        _ = try await queue.send(makeRequest())
                        done(.success(bytes: 0))
                    } catch {
                        done(.failure("\(error)"))
                    }
                }
            }
        }
    }


    func close() {}
}

/// The next request of a sending task: its `done`. Only that task touches it.
final class NextSend: @unchecked Sendable {
    // @unchecked: read and written by one task only (through a task-local), never concurrently.
    var done: (@Sendable (Outcome) -> Void)?

    /// The sending task's, inside it.
    @TaskLocal static var current: NextSend?

    init(_ done: @escaping @Sendable (Outcome) -> Void) {
        self.done = done
    }

    func take() -> (@Sendable (Outcome) -> Void)? {
        defer { done = nil }
        return done
    }
}

// MARK: - The runner

/// What one load run did.
struct LoadResult {
    var elapsed: Double
    var succeeded: Int
    var failed: Int
    var bytes: Int
    var firstError: String?
    /// CPU time (user + system) the client's process spent meanwhile, in seconds: the whole
    /// benchmark process for the in-process contenders (nothing else in it runs during a round),
    /// the child for curl's command line (its start-up included).
    var cpuSeconds: Double?

    var requestsPerSecond: Double { Double(succeeded) / elapsed }
    /// Microseconds of CPU per request that succeeded.
    var cpuMicrosecondsPerRequest: Double { (cpuSeconds ?? .nan) * 1e6 / Double(max(1, succeeded)) }
    /// Megabytes (10⁶ bytes) of response bodies per second.
    var megabytesPerSecond: Double { Double(bytes) / 1e6 / elapsed }
}

enum LoadShape {
    /// Keeps this many requests outstanding: a new one starts whenever one ends.
    case keepInFlight(Int)
    /// Starts this many at once and the next batch when the whole batch has ended.
    case batches(Int)
}

/// Sends `total` requests through `client` in the given shape and waits for all of them
/// (at most `timeout` seconds).
func runLoad(_ client: any LoadClient, total: Int, shape: LoadShape, timeout: Double = 120) -> LoadResult {
    let run = LoadRun(client: client, total: total, shape: shape)
    return run.run(timeout: timeout)
}

private final class LoadRun: Sendable {
    private struct State {
        var started = 0
        var finished = 0
        var succeeded = 0
        var failed = 0
        var bytes = 0
        var firstError: String?
        var endTime = 0.0
    }

    private let client: any LoadClient
    private let total: Int
    private let shape: LoadShape
    private let state = Mutex(State())
    private let allDone = DispatchSemaphore(value: 0)
    /// Where the baseline's next request starts (see `LoadClient.hopsToStart`).
    private let startQueue = DispatchQueue(label: "CourierBench.start")

    init(client: any LoadClient, total: Int, shape: LoadShape) {
        self.client = client
        self.total = total
        self.shape = shape
    }

    func run(timeout: Double) -> LoadResult {
        let first = switch shape {
        case .keepInFlight(let count), .batches(let count): min(max(1, count), total)
        }
        let startCPU = processCPUSeconds()
        let startTime = now()
        state.withLock { $0.started = first }
        for _ in 0..<first { startOne() }
        let timedOut = allDone.wait(timeout: .now() + timeout) == .timedOut
        let cpu = processCPUSeconds() - startCPU
        let snapshot = state.withLock { $0 }
        var result = LoadResult(elapsed: (timedOut ? now() : snapshot.endTime) - startTime,
                                succeeded: snapshot.succeeded, failed: snapshot.failed,
                                bytes: snapshot.bytes, firstError: snapshot.firstError, cpuSeconds: cpu)
        if timedOut {
            let missing = total - snapshot.finished
            result.failed += missing
            result.firstError = result.firstError ?? "\(missing) requests unfinished after \(Int(timeout)) s"
        }
        return result
    }

    private func startOne() {
        client.start { [self] outcome in finished(outcome) }
    }

    private func finished(_ outcome: Outcome) {
        let (next, isLast) = state.withLock { state -> (Int, Bool) in
            state.finished += 1
            switch outcome {
            case .success(let bytes):
                state.succeeded += 1
                state.bytes += bytes
            case .failure(let message):
                state.failed += 1
                if state.firstError == nil { state.firstError = message }
            }
            let isLast = state.finished == total
            if isLast { state.endTime = now() }
            var next = 0
            switch shape {
            case .keepInFlight:
                next = state.started < total ? 1 : 0
            case .batches(let size):
                if state.finished == state.started { next = min(size, total - state.started) }
            }
            state.started += next
            return (next, isLast)
        }
        if isLast { allDone.signal() }
        guard next > 0 else { return }
        if client.hopsToStart {
            startQueue.async { [self] in for _ in 0..<next { startOne() } }
        } else {
            for _ in 0..<next { startOne() }
        }
    }
}

extension RequestQueueConfiguration {
    /// The default configuration without the cache and shared transfers.
    static var withoutCaching: RequestQueueConfiguration {
        var configuration = RequestQueueConfiguration.default
        configuration.cache = nil
        configuration.sharesIdenticalRequests = false
        return configuration
    }
}

/// User + system CPU time of this process so far, in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return cpuSeconds(of: usage)
}

func cpuSeconds(of usage: rusage) -> Double {
    Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}
