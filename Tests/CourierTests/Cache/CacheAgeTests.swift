import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// RFC 9111 §5.1: every response the cache answers with carries an `Age` field with its current
/// age (§4.2.3), in place of the origin's; a validated response's age starts again (§4.3.4).
final class CacheAgeTests: XCTestCase {
    private let clock = TestClock()

    private func reply(_ path: String, on queue: RequestQueue) throws -> Reply<Text> {
        try XCTUnwrap(result(of: queue.add(CachedRequest(path: path)), on: queue, as: Reply<Text>.self)).get()
    }

    func testAStoredResponseIsAnsweredWithItsCurrentAgeInPlaceOfTheOrigins() throws {
        // Given an origin's response that was already 100 s old in an upstream cache (Age: 100),
        // fresh for 10 minutes
        let transport = StubTransport { _ in
            .status(200, headers: ["Cache-Control": "max-age=600", "Age": "100", "Date": CacheRuleFixtures.date(0)],
                    body: Data("v1".utf8))
        }
        let (queue, _) = cachedQueue(transport, clock: clock)
        let first = try reply("/a", on: queue)

        // When the cache answers 30.9 s later
        clock.advance(30.9)
        let second = try reply("/a", on: queue)

        // Then the network's answer kept the origin's Age; the cache's says 130, in whole seconds,
        // and there is one Age field
        XCTAssertEqual(first.source, .network)
        XCTAssertEqual(first.headerFields["Age"], "100")
        XCTAssertEqual(second.source, .cache(.fresh))
        XCTAssertEqual(second.headerFields.values(for: "age"), ["130"])
        XCTAssertEqual(second.value.text, "v1")
    }

    func testAStoredResponseKeepsItsFieldsInOrderWithRepeatedNames() throws {
        // Given an origin's response with two Link lines (a comma may stand inside one) and two
        // Set-Cookie lines, which must never be joined
        let fields: HTTPFields = [
            HTTPField(name: "Cache-Control", value: "max-age=600"), HTTPField(name: "Link", value: "</a,1>; rel=\"next\""),
            HTTPField(name: "Set-Cookie", value: "a=1; Path=/"), HTTPField(name: "link", value: "</b>; rel=\"last\""),
            HTTPField(name: "Set-Cookie", value: "b=2"), HTTPField(name: "Date", value: CacheRuleFixtures.date(0)),
        ]
        let transport = StubTransport { _ in .fields(200, fields, body: Data("v1".utf8)) }
        let (queue, _) = cachedQueue(transport, clock: clock)
        _ = try reply("/a", on: queue)

        // When the cache answers 5 s later
        clock.advance(5)
        let second = try reply("/a", on: queue)

        // Then its head has the origin's fields in their order, each line apart, and its Age at the end
        XCTAssertEqual(second.source, .cache(.fresh))
        XCTAssertEqual(second.headerFields, HTTPFields(Array(fields) + [HTTPField(name: "Age", value: "5")]))
        XCTAssertEqual(second.headerFields.values(for: "link"), ["</a,1>; rel=\"next\"", "</b>; rel=\"last\""])
    }

    func testAResponseWithoutAnAgeGetsOneCountedFromItsDate() throws {
        // Given a response dated 5 s before it arrived (its apparent age), without Age
        let transport = StubTransport { _ in
            .status(200, headers: ["Cache-Control": "max-age=600", "Date": CacheRuleFixtures.date(-5)], body: Data("v1".utf8))
        }
        let (queue, _) = cachedQueue(transport, clock: clock)
        _ = try reply("/a", on: queue)
        clock.advance(2)
        XCTAssertEqual(try reply("/a", on: queue).headerFields["Age"], "7")
    }

    func testAValidatedResponsesAgeStartsAgain() throws {
        // Given a stored response with a validator, stale after 60 s, and an origin that confirms it
        let transport = StubTransport { request in
            if request.value(forHTTPHeaderField: "If-None-Match") != nil {
                return .status(304, headers: ["Date": CacheRuleFixtures.date(90)])
            }
            return .status(200, headers: ["Cache-Control": "max-age=60", "ETag": "\"e1\"", "Date": CacheRuleFixtures.date(0)],
                           body: Data("v1".utf8))
        }
        let (queue, _) = cachedQueue(transport, clock: clock)
        _ = try reply("/a", on: queue)

        // When it is asked 90 s later (validated), and again 10 s after that (fresh)
        clock.advance(90)
        let validated = try reply("/a", on: queue)
        clock.advance(10)
        let fresh = try reply("/a", on: queue)

        // Then the validated answer is 0 s old, and the next one 10 s
        XCTAssertEqual(validated.source, .cache(.revalidated))
        XCTAssertEqual(validated.headerFields["Age"], "0")
        XCTAssertEqual(fresh.source, .cache(.fresh))
        XCTAssertEqual(fresh.headerFields["Age"], "10")
    }
}
