import Foundation
import XCTest
@testable import Courier

/// The freshness basis a memory store keeps with a stored response: read on its first use, kept
/// while the response is stored, forgotten when what it was read from changes, and never part of
/// the response's equality. (That it gives the freshness the fields give: every case of
/// `FreshnessTests` checks both.)
final class FreshnessBasisTests: XCTestCase {
    private let now = CacheRuleFixtures.now
    private let date = CacheRuleFixtures.date

    private func stored(_ headers: [String: String], url: String = "https://example.com/a") -> StoredResponse {
        var response = CacheRuleFixtures.stored(headers: headers, receivedAgo: 100, delay: 2)
        response.url = url
        return response
    }

    func testTheBasisHoldsTheAgeWhenReceivedTheLifetimeAndTheDirectives() {
        // Given a response dated 10 s before it was received after a 2 s round trip, with an Age of 30
        let response = stored(["Date": date(-110), "Age": "30", "Cache-Control": "max-age=600, must-revalidate"])
        // When its basis is read
        let basis = FreshnessBasis(of: response, now: now)
        // Then it holds the corrected initial age (Age plus the delay beats the apparent 10 s), the
        // explicit lifetime and the parsed directives
        XCTAssertEqual(basis.correctedInitialAge, 32)
        XCTAssertEqual(basis.lifetime, .explicit(600))
        XCTAssertEqual(basis.directives, CacheControl("max-age=600, must-revalidate"))
        // And a heuristic lifetime is kept before the cache's cap, which applies when it is used
        let heuristic = FreshnessBasis(of: stored(["Date": date(-100), "Last-Modified": date(-1_000_100)]), now: now)
        XCTAssertEqual(heuristic.lifetime, .heuristic(100_000))
        XCTAssertEqual(Freshness(heuristic, responseTime: now - 100, now: now, heuristicLimit: 3600),
                       Freshness(age: 102, lifetime: 3600, isHeuristic: true))
        XCTAssertEqual(FreshnessBasis(of: stored(["Date": date(-100)]), now: now).lifetime, .none)
    }

    func testAMemoryStoreKeepsTheBasisFromTheFirstUse() {
        // Given a stored response
        let store = MemoryStore(capacity: 1 << 20)
        let response = stored(["Date": date(-100), "Cache-Control": "max-age=60"])
        store.store(response)
        // Then storing it and reading it without a clock read nothing
        XCTAssertNil(store.responses(for: response.url).first?.freshnessBasis)
        // When it is used
        let first = store.responses(for: response.url, hash: GroupIndex.hash(response.url), rememberingParsedFieldsAt: now)
        // Then it comes back with its basis, still equal to what was stored
        XCTAssertEqual(first, [response])
        XCTAssertEqual(first.first?.freshnessBasis, FreshnessBasis(of: response, now: now))
        // And the store keeps it: a read without a clock gets it too
        XCTAssertEqual(store.responses(for: response.url).first?.freshnessBasis, FreshnessBasis(of: response, now: now))
    }

    func testTheBasisIsKeptNotReadAgainOnLaterUses() {
        // Given a response whose `Expires` has a two-digit year, which the clock settles: 2075
        // read in 2026 (less than 50 years ahead), 1975 read in 2020
        let inTwentyTwenty = 1_577_836_800.0
        let response = stored(["Expires": "Sunday, 01-Jan-75 00:00:00 GMT"])
        XCTAssertEqual(FreshnessBasis(of: response, now: inTwentyTwenty).lifetime, .explicit(0))
        guard case .explicit(let lifetime) = FreshnessBasis(of: response, now: now).lifetime else {
            return XCTFail("an explicit lifetime")
        }
        XCTAssertGreaterThan(lifetime, 0)
        // When a store reads it first with the later clock, then with the earlier one
        let store = MemoryStore(capacity: 1 << 20)
        store.store(response)
        _ = store.responses(for: response.url, hash: GroupIndex.hash(response.url), rememberingParsedFieldsAt: now)
        let again = store.responses(for: response.url, hash: GroupIndex.hash(response.url), rememberingParsedFieldsAt: inTwentyTwenty)
        // Then the second use has the basis of the first
        XCTAssertEqual(again.first?.freshnessBasis?.lifetime, .explicit(lifetime))
    }

    func testChangingWhatTheBasisIsReadFromForgetsIt() {
        var base = stored(["Date": date(-100), "Cache-Control": "max-age=60"])
        base.rememberParsedFields(now: now)
        let changes: [(String, (inout StoredResponse) -> Void)] = [
            ("headers", { $0.headers["Cache-Control"] = "max-age=0" }),
            ("status", { $0.statusCode = 404 }),
            ("request time", { $0.requestTime -= 1 }),
            ("response time", { $0.responseTime += 1 }),
        ]
        for (name, change) in changes {
            var changed = base
            change(&changed)
            XCTAssertNil(changed.freshnessBasis, name)
            XCTAssertNotNil(base.freshnessBasis, name)
        }
        // The Vary kept with it is read again too
        var varied = base
        XCTAssertEqual(varied.vary, .fields([]))
        varied.headers["Vary"] = "Accept"
        XCTAssertEqual(varied.vary, .fields(["accept"]))
        // What it does not depend on keeps it
        var renamed = base
        renamed.url = "https://example.com/b"
        renamed.body = Data("other".utf8)
        renamed.secondaryKey = ["gzip"]
        renamed.credentialKey = "a1:0000000000000001"
        XCTAssertNotNil(renamed.freshnessBasis)
    }

    func testEqualityAndHashingIgnoreTheBasis() {
        let plain = stored(["Date": date(-100), "Cache-Control": "max-age=60"])
        var remembered = plain
        remembered.rememberParsedFields(now: now)
        XCTAssertEqual(plain, remembered)
        XCTAssertEqual(plain.hashValue, remembered.hashValue)
        XCTAssertEqual(Set([plain, remembered]).count, 1)
    }
}
