import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// A clock the cache tests set: seconds since 1970.
final class TestClock: Sendable {
    private let value: Locked<Double>
    init(_ start: Double = CacheRuleFixtures.now) { value = Locked(start) }
    var now: Double { value.withLock { $0 } }
    func advance(_ seconds: Double) { value.withLock { $0 += seconds } }
}

/// Keeps the metrics of every request that ended.
final class MetricsRecorder: RequestQueueDelegate {
    private let all = Locked<[RequestID: RequestMetrics]>([:])
    func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics) {
        all.withLock { $0[metrics.id] = metrics }
    }
    subscript(id: RequestID) -> RequestMetrics? { all.withLock { $0[id] } }
}

/// A GET (or any method) with headers and a cache policy of its own, answered with its body as text.
struct CachedRequest: Request {
    typealias ResponseType = Text
    var path: String
    var method: HTTPMethod = .get
    var headers: [String: String] = [:]
    var cachePolicy: CachePolicy = .useProtocol
    var sharesIdenticalRequests = true
}

/// A body as text, for exact expected values.
struct Text: Response, Equatable {
    let text: String
    init(text: String) { self.text = text }
    init(body: ResponseData, head: ResponseHead) throws { text = body.string ?? "" }
}

extension XCTestCase {
    /// A queue whose cache runs on `clock`, in memory, sending through `transport`.
    func cachedQueue(_ transport: any Transport, clock: TestClock, metrics: MetricsRecorder? = nil,
                     heuristicLimit: Double = 86_400, connectivity: Connectivity = Connectivity()) -> (RequestQueue, ResponseCache) {
        let cache = ResponseCache(memory: MemoryStore(capacity: 1 << 20), disk: nil, directory: nil,
                                  heuristicFreshnessLimit: heuristicLimit, clock: { clock.now })
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.cache = cache
        let queue = RequestQueue(configuration: configuration, delegate: metrics,
                                 baseURL: URL(string: "https://api.example.com"), transport: transport,
                                 connectivity: connectivity)
        return (queue, cache)
    }

    /// Sends a request through `queue` and waits for its result.
    func fetch(_ request: CachedRequest, on queue: RequestQueue, file: StaticString = #filePath, line: UInt = #line)
        -> (RequestID, Result<Text, RequestError>?) {
        let id = queue.add(request)
        return (id, result(of: id, on: queue, as: Text.self, file: file, line: line))
    }
}
