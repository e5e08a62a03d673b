import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Durable requests against Scripts/json_api.py's recording endpoint, through the run's
/// transport: the server sees one Idempotency-Key per request, on every attempt, and the same
/// key again when a reopened queue sends a request the released one had in flight.
final class DurableIntegrationTests: JournalTestCase {
    private struct Write: Request {
        typealias ResponseType = DurableMessage
        var tag: String
        var name: String
        var parameters: DurableDraft { DurableDraft(text: name) }
        var path: String { "/durable/\(tag)/\(name)" }
        var method: HTTPMethod { .post }
    }

    private let callbacks = DispatchQueue(label: "DurableIntegrationTests.callbacks")

    private func open() throws -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = callbacks
        configuration.transport = HTTPBin.transport
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, baseDelay: 0.01, jitter: 0)
        configuration.durability = Durability(folder: folder, responseTypes: [DurableMessage.self])
        return try RequestQueue.open(configuration: configuration, baseURL: try HTTPBin.jsonAPI())
    }

    /// The [name, key] pairs the server recorded under `tag`, once at least `count` arrived.
    private func serverLog(_ tag: String, count: Int) throws -> [[String]] {
        let url = try HTTPBin.jsonAPI().appendingPathComponent("durable/\(tag)/log")
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "count", value: "\(count)")]
        return try JSONDecoder().decode([[String]].self, from: Data(contentsOf: components.url!))
    }

    func testTheServerSeesOneKeyPerRequestOnEveryAttemptAndAgainAfterAReopen() throws {
        let tag = UUID().uuidString.lowercased()
        // Given a durable queue, and a write the server refuses with a 503 the first time
        var queue: RequestQueue? = try open()
        let retried = try queue!.addDurably(Write(tag: tag, name: "fail-first"))
        // When it is retried, then it ends with the server's 201, the second request it recorded
        XCTAssertEqual(try result(of: retried, on: queue!, as: DurableMessage.self)?.get(), DurableMessage(id: 2, text: "fail-first"))
        // When a write the server holds is in flight as the queue is released
        let held = try queue!.addDurably(Write(tag: tag, name: "hold-first"))
        _ = try serverLog(tag, count: 3)
        queue = nil
        // And a queue is opened on the same folder
        queue = try open()
        // Then the write is sent again and its result observed under its ID
        XCTAssertEqual(try result(of: held, on: queue!, as: DurableMessage.self)?.get(), DurableMessage(id: 4, text: "hold-first"))
        // And the server saw each write's key on each of its attempts: one key per write
        let log = try serverLog(tag, count: 4)
        guard log.count == 4 else { return XCTFail("the server recorded \(log)") }
        XCTAssertEqual(log.map { $0[0] }, ["fail-first", "fail-first", "hold-first", "hold-first"])
        XCTAssertEqual(log[0][1], log[1][1])
        XCTAssertEqual(log[2][1], log[3][1])
        XCTAssertNotEqual(log[0][1], log[2][1])
        XCTAssertEqual(log.map { $0[1].count }, [36, 36, 36, 36])
    }
}
