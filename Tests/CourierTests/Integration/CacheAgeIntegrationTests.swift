import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// `Age` on answers from Courier's cache (RFC 9111 §4.2.3, §5.1) against a real origin that sends
/// its own (Scripts/sse_server.py's /aged: `Cache-Control: max-age=60`, `Age: 5`, an ETag and
/// 304s), through the run's network transport. The cache's clock is the test's and does not move
/// while a request is in flight, so every age is exact: the origin's plus the seconds advanced.
final class CacheAgeIntegrationTests: XCTestCase {
    /// Behind real time, so that the origin's `Date` (uvicorn's, refreshed once a second, up to two
    /// seconds old) is never earlier than the cache's clock: no apparent age, so every age is exact.
    private let clock = TestClock(Date().timeIntervalSince1970 - 30)

    private func queue() throws -> RequestQueue {
        try HTTPBin.queue { [clock] configuration in
            configuration.cache = ResponseCache(memory: MemoryStore(capacity: 1 << 20), disk: nil, directory: nil,
                                                heuristicFreshnessLimit: 86_400, clock: { clock.now })
        }
    }

    /// /aged on the origin, counted under a key of its own, with these extra query items.
    private func aged(_ query: String = "") throws -> (url: String, key: String, server: URL) {
        let server = try HTTPBin.sseServer()
        let key = UUID().uuidString
        return (server.absoluteString + "/aged?key=\(key)" + query, key, server)
    }

    private func get(_ url: String, on queue: RequestQueue) async throws -> Reply<String> {
        try await queue.reply(to: PathRequest<String>(url))
    }

    func testACachedAnswerCarriesItsCurrentAgeInPlaceOfTheOrigins() async throws {
        // Given a response the origin sent with `Age: 5` and max-age=60
        let (url, key, server) = try aged()
        let queue = try queue()
        let first = try await get(url, on: queue)
        // When it is asked for again 10 and then 50 seconds later
        clock.advance(10)
        let second = try await get(url, on: queue)
        clock.advance(40)
        let third = try await get(url, on: queue)
        // Then the origin's own answer keeps its Age; each stored answer carries one Age, its
        // current age (5 + 10, then 5 + 50), never less than the origin's
        XCTAssertEqual(first.source, .network)
        XCTAssertEqual(first.headerFields["Age"], "5")
        XCTAssertEqual(second.source, .cache(.fresh))
        XCTAssertEqual(second.headerFields.values(for: "Age"), ["15"])
        XCTAssertEqual(third.source, .cache(.fresh))
        XCTAssertEqual(third.headerFields.values(for: "Age"), ["55"])
        XCTAssertEqual(third.value, "aged \(key)\n")
        XCTAssertEqual(try HTTPBin.arrivals(key, at: server), 1)
    }

    /// The answers to /aged with `query`, stored stale on arrival: the origin's, the one validated
    /// at once, and the stored one `seconds` later; and the requests that reached the origin.
    private func validated(_ query: String, askedAgainAfter seconds: Double) async throws
        -> (first: Reply<String>, validated: Reply<String>, after: Reply<String>, arrivals: Int) {
        let (url, key, server) = try aged(query)
        let queue = try queue()
        let first = try await get(url, on: queue)
        let validated = try await get(url, on: queue)
        clock.advance(seconds)
        let after = try await get(url, on: queue)
        XCTAssertEqual(after.value, "aged \(key)\n")
        return (first, validated, after, try HTTPBin.arrivals(key, at: server))
    }

    func testAValidatedResponsesAgeRestartsFromThe304s() async throws {
        // Given a stored response already stale when it arrived (`Age: 70`, max-age=60), whose
        // origin confirms it with a 304 carrying `Age: 2` (stale by its own Age, not by advancing
        // the clock: the 304's Date is the origin's real time, which a clock moved ahead of it
        // would make look old)
        // When it is asked for again, then 3 seconds later
        let answers = try await validated("&age=70&revalidated_age=2", askedAgainAfter: 3)
        // Then its age restarts from the 304's (§4.3.4: the 304's Age replaces the stored one,
        // and the exchange's times are the validation's): 2, then 2 + 3
        XCTAssertEqual(answers.first.source, .network)
        XCTAssertEqual(answers.first.headerFields["Age"], "70")
        XCTAssertEqual(answers.validated.source, .cache(.revalidated))
        XCTAssertEqual(answers.validated.headerFields.values(for: "Age"), ["2"])
        XCTAssertEqual(answers.after.source, .cache(.fresh))
        XCTAssertEqual(answers.after.headerFields.values(for: "Age"), ["5"])
        XCTAssertEqual(answers.arrivals, 2)
    }

    func testA304WithoutAgeRestartsTheAgeFromZero() async throws {
        // Given a stored response that arrived stale (`Age: 70`), whose origin's 304 carries no Age
        // When it is validated, then asked for 4 seconds later
        let answers = try await validated("&age=70", askedAgainAfter: 4)
        // Then the origin's old Age no longer counts: 0, then 4
        XCTAssertEqual(answers.validated.source, .cache(.revalidated))
        XCTAssertEqual(answers.validated.headerFields.values(for: "Age"), ["0"])
        XCTAssertEqual(answers.after.source, .cache(.fresh))
        XCTAssertEqual(answers.after.headerFields.values(for: "Age"), ["4"])
        XCTAssertEqual(answers.arrivals, 2)
    }
}
