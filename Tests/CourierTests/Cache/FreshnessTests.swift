import Foundation
import XCTest
@testable import Courier

/// Ages and freshness lifetimes of stored responses: RFC 9111 §4.2 for a private cache.
final class FreshnessTests: XCTestCase {
    private let now = CacheRuleFixtures.now
    private let date = CacheRuleFixtures.date

    /// The freshness `offset` seconds after the fixtures' "now"; every case also checks that the
    /// basis a memory store keeps (read at the fixtures' "now", as a first use would) gives the
    /// same freshness as reading the fields again.
    private func freshness(_ stored: StoredResponse, at offset: Double = 0, limit: Double = 86_400,
                           file: StaticString = #filePath, line: UInt = #line) -> Freshness {
        let fromFields = Freshness(of: stored, now: now + offset, heuristicLimit: limit)
        var remembered = stored
        remembered.rememberParsedFields(now: now)
        XCTAssertNotNil(remembered.freshnessBasis, file: file, line: line)
        XCTAssertEqual(Freshness(of: remembered, now: now + offset, heuristicLimit: limit), fromFields,
                       "from the remembered basis", file: file, line: line)
        return fromFields
    }

    // MARK: Age (§4.2.3)

    func testAgeAddsTheResidentTimeToTheApparentAge() {
        // Given a response dated 10 s before it was received, 100 s ago
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(-110), "Cache-Control": "max-age=600"], receivedAgo: 100)
        // When its freshness is computed now
        let result = freshness(stored)
        // Then its age is the apparent age plus the resident time
        XCTAssertEqual(result, Freshness(age: 110, lifetime: 600, isHeuristic: false))
        XCTAssertTrue(result.isFresh)
        XCTAssertEqual(result.staleness, 0)
    }

    func testWithoutDateTheResponseIsDatedWhenReceived() {
        // Given a response without Date, received 100 s ago after a 2 s round trip
        let stored = CacheRuleFixtures.stored(headers: ["Cache-Control": "max-age=600"], receivedAgo: 100, delay: 2)
        // Then date_value is the response time: the apparent age is 0 and the delay counts
        XCTAssertEqual(freshness(stored).age, 102)
    }

    func testAnInvalidDateIsLikeNone() {
        for value in ["yesterday", "0", "Sun, 06 Nov 1994 08:49:37 PST", ""] {
            let stored = CacheRuleFixtures.stored(headers: ["Date": value], receivedAgo: 100, delay: 2)
            XCTAssertEqual(freshness(stored).age, 102, value)
        }
    }

    func testAnAgeLargerThanTheApparentAgeWins() {
        // Given a response dated 10 s before it arrived, with Age: 100, after a 1 s round trip
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(-10), "Age": "100"], delay: 1)
        // When it is 5 s later
        // Then corrected_age_value (100 + 1) beats the apparent age (10), plus the resident time
        XCTAssertEqual(freshness(stored, at: 5).age, 106)
    }

    func testAnApparentAgeLargerThanAgeWins() {
        // Given a response dated 300 s before it arrived with Age: 5
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(-300), "Age": "5"], delay: 1)
        // Then the apparent age (300) beats corrected_age_value (6)
        XCTAssertEqual(freshness(stored).age, 300)
    }

    func testTheResponseDelayCountsWithoutAge() {
        // Given a response dated when it was received, whose request took 4 s
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(0)], delay: 4)
        // Then corrected_age_value is the delay: it may have been generated as early as the request
        XCTAssertEqual(freshness(stored).age, 4)
    }

    func testFractionsOfSecondsAreKept() {
        let stored = CacheRuleFixtures.stored(receivedAgo: 1.5, delay: 0.5)
        XCTAssertEqual(freshness(stored).age, 2.0)
    }

    func testADateInTheFutureGivesNoApparentAge() {
        // Given an origin clock 50 s ahead
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(50)])
        // Then apparent_age is 0, not negative
        XCTAssertEqual(freshness(stored, at: 10).age, 10)
    }

    func testAClockSetBackDoesNotMakeAResponseYounger() {
        // Given a response with an apparent age of 10 s, and a device clock then set back 50 s
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(-10)])
        // Then the resident time is 0, not -50
        XCTAssertEqual(freshness(stored, at: -50).age, 10)
    }

    func testTheAgeFieldIsANonNegativeIntegerOrIgnored() {
        // §5.1: the first member of a list; anything but a non-negative integer is ignored
        XCTAssertEqual(Freshness.ageValue(nil), 0)
        XCTAssertEqual(Freshness.ageValue("30"), 30)
        XCTAssertEqual(Freshness.ageValue("30, 50"), 30)
        XCTAssertEqual(Freshness.ageValue(" 7\t"), 7)
        XCTAssertEqual(Freshness.ageValue("007"), 7)
        for invalid in ["-5", "abc", "1.5", "", "+5", ",5", "5 s", "5e2"] {
            XCTAssertEqual(Freshness.ageValue(invalid), 0, invalid)
        }
        // §1.2.2: too large is 2^31
        XCTAssertEqual(Freshness.ageValue("99999999999999999999"), 2_147_483_648)
    }

    func testAnInvalidAgeIsIgnoredInTheAge() {
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(-10), "Age": "ten"], receivedAgo: 0)
        XCTAssertEqual(freshness(stored).age, 10)
    }

    func testHeaderNamesAreCaseInsensitive() {
        let stored = CacheRuleFixtures.stored(headers: ["date": date(-10), "AGE": "20", "cache-control": "max-age=60"])
        XCTAssertEqual(freshness(stored), Freshness(age: 20, lifetime: 60, isHeuristic: false))
    }

    // MARK: Explicit lifetime (§4.2.1)

    func testMaxAgeIsTheLifetime() {
        let stored = CacheRuleFixtures.stored(headers: ["Cache-Control": "max-age=600", "Date": date(-100)], receivedAgo: 100)
        XCTAssertEqual(freshness(stored), Freshness(age: 100, lifetime: 600, isHeuristic: false))
    }

    func testMaxAgeBeatsExpires() {
        // Given max-age=60 and an Expires an hour away
        let stored = CacheRuleFixtures.stored(headers: ["Cache-Control": "max-age=60", "Expires": date(3600), "Date": date(0)])
        // Then Expires is ignored (§5.3)
        XCTAssertEqual(freshness(stored).lifetime, 60)
    }

    func testExpiresMinusDateIsTheLifetime() {
        // Given a response dated 100 s ago (apparent age 100) that expires in 500 s
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(-100), "Expires": date(500)])
        // Then its lifetime is Expires - Date, on the origin's clock
        XCTAssertEqual(freshness(stored), Freshness(age: 100, lifetime: 600, isHeuristic: false))
    }

    func testExpiresWithoutDateCountsFromTheResponseTime() {
        let stored = CacheRuleFixtures.stored(headers: ["Expires": date(400)], receivedAgo: 100)
        XCTAssertEqual(freshness(stored), Freshness(age: 100, lifetime: 500, isHeuristic: false))
    }

    func testAnInvalidExpiresIsInThePastAndForbidsTheHeuristic() {
        // §5.3: an invalid date, especially "0", is already expired; it is still an explicit expiry
        for value in ["0", "-1", "never", "Thu, 01 Dec 1994 16:00:00 PST"] {
            let stored = CacheRuleFixtures.stored(headers: ["Expires": value, "Date": date(0), "Last-Modified": date(-10_000)])
            let result = freshness(stored)
            XCTAssertEqual(result, Freshness(age: 0, lifetime: 0, isHeuristic: false), value)
            XCTAssertFalse(result.isFresh, value)
        }
    }

    func testSeveralExpiresAreInThePast() {
        // Given two Expires lines, combined into one value
        let stored = CacheRuleFixtures.stored(headers: ["Expires": "\(date(100)), \(date(200))", "Date": date(0)])
        // Then the value is not one date: expired
        XCTAssertEqual(freshness(stored).lifetime, 0)
    }

    func testAnExpiresBeforeDateIsAZeroLifetime() {
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(0), "Expires": date(-60)])
        let result = freshness(stored, at: 30)
        XCTAssertEqual(result, Freshness(age: 30, lifetime: 0, isHeuristic: false))
        XCTAssertEqual(result.staleness, 30)
    }

    func testAnInvalidMaxAgeMakesTheResponseStaleDespiteExpires() {
        for value in ["max-age=abc", "max-age=60, max-age=120", "max-age"] {
            let stored = CacheRuleFixtures.stored(headers: ["Cache-Control": value, "Expires": date(3600), "Date": date(0)])
            XCTAssertEqual(freshness(stored), Freshness(age: 0, lifetime: 0, isHeuristic: false), value)
        }
    }

    func testSharedMaxAgeIsIgnoredByThisPrivateCache() {
        // Given s-maxage, valid or not, beside max-age
        let valid = CacheRuleFixtures.stored(headers: ["Cache-Control": "s-maxage=1000, max-age=10"])
        let invalid = CacheRuleFixtures.stored(headers: ["Cache-Control": "s-maxage=abc, max-age=10"])
        // Then max-age decides
        XCTAssertEqual(freshness(valid).lifetime, 10)
        XCTAssertEqual(freshness(invalid).lifetime, 10)
        // And s-maxage alone is no explicit expiration: the heuristic applies
        let alone = CacheRuleFixtures.stored(headers: ["Cache-Control": "s-maxage=1000", "Date": date(0),
                                                       "Last-Modified": date(-1000)])
        XCTAssertEqual(freshness(alone), Freshness(age: 0, lifetime: 100, isHeuristic: true))
    }

    func testFreshnessEndsWhenTheAgeReachesTheLifetime() {
        // §4.2: fresh while freshness_lifetime > current_age
        let headers = ["Cache-Control": "max-age=60"]
        XCTAssertTrue(freshness(CacheRuleFixtures.stored(headers: headers, receivedAgo: 59)).isFresh)
        let atLimit = freshness(CacheRuleFixtures.stored(headers: headers, receivedAgo: 60))
        XCTAssertFalse(atLimit.isFresh)
        XCTAssertEqual(atLimit.staleness, 0)
        XCTAssertEqual(freshness(CacheRuleFixtures.stored(headers: headers, receivedAgo: 61)).staleness, 1)
    }

    // MARK: Heuristic lifetime (§4.2.2)

    func testTheHeuristicIsATenthOfTheTimeSinceLastModified() {
        // Given a 200 modified 1000 s before its Date, without explicit expiry
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(0), "Last-Modified": date(-1000)])
        // Then it is fresh for 100 s
        XCTAssertEqual(freshness(stored, at: 50), Freshness(age: 50, lifetime: 100, isHeuristic: true))
        XCTAssertTrue(freshness(stored, at: 99).isFresh)
        XCTAssertFalse(freshness(stored, at: 100).isFresh)
        XCTAssertEqual(freshness(stored, at: 130).staleness, 30)
    }

    func testTheHeuristicIsCapped() {
        // Given a resource last modified 10^7 s before its Date (a heuristic of 10^6 s)
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(0), "Last-Modified": date(-10_000_000)])
        // Then the lifetime is the cap
        XCTAssertEqual(freshness(stored, limit: 86_400).lifetime, 86_400)
        XCTAssertEqual(freshness(stored, limit: 3600).lifetime, 3600)
        XCTAssertEqual(freshness(stored, limit: 0), Freshness(age: 0, lifetime: 0, isHeuristic: true))
        XCTAssertEqual(freshness(stored, limit: -5).lifetime, 0)
        XCTAssertEqual(freshness(stored, limit: 2_000_000).lifetime, 1_000_000)
    }

    func testTheHeuristicIsForbiddenWithAnExplicitExpiration() {
        // §4.2.2: MUST NOT use heuristics when an explicit expiration time is present
        let cases: [([String: String], Double)] = [
            (["Cache-Control": "max-age=0"], 0), (["Expires": date(-10)], 0), (["Expires": date(5)], 5),
        ]
        for (headers, lifetime) in cases {
            var fields = headers
            fields["Date"] = date(0)
            fields["Last-Modified"] = date(-1_000_000)
            XCTAssertEqual(freshness(CacheRuleFixtures.stored(headers: fields)),
                           Freshness(age: 0, lifetime: lifetime, isHeuristic: false), "\(headers)")
        }
    }

    func testTheHeuristicAppliesOnlyToHeuristicallyCacheableStatuses() {
        let headers = ["Date": date(0), "Last-Modified": date(-1000)]
        for status in [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501] {
            XCTAssertEqual(freshness(CacheRuleFixtures.stored(status: status, headers: headers)),
                           Freshness(age: 0, lifetime: 100, isHeuristic: true), "\(status)")
        }
        for status in [201, 202, 302, 303, 307, 400, 403, 451, 500, 503] {
            XCTAssertEqual(freshness(CacheRuleFixtures.stored(status: status, headers: headers)),
                           Freshness(age: 0, lifetime: 0, isHeuristic: false), "\(status)")
        }
    }

    func testPublicOrPrivateAllowTheHeuristicForAnyStatus() {
        // §4.2.2: explicitly cacheable responses; §5.2.2.7: private, for a private cache
        let publicRedirect = CacheRuleFixtures.stored(status: 302, headers: ["Cache-Control": "public", "Date": date(0),
                                                                             "Last-Modified": date(-1000)])
        let privateError = CacheRuleFixtures.stored(status: 500, headers: ["Cache-Control": "private", "Date": date(0),
                                                                           "Last-Modified": date(-2000)])
        XCTAssertEqual(freshness(publicRedirect).lifetime, 100)
        XCTAssertEqual(freshness(privateError).lifetime, 200)
    }

    func testTheHeuristicNeedsAValidLastModifiedBeforeDate() {
        for lastModified in [date(10), date(0), "last week", nil] {
            var headers = ["Date": date(0)]
            headers["Last-Modified"] = lastModified
            XCTAssertEqual(freshness(CacheRuleFixtures.stored(headers: headers)),
                           Freshness(age: 0, lifetime: 0, isHeuristic: false), lastModified ?? "none")
        }
    }

    func testTheHeuristicWithoutDateCountsFromTheResponseTime() {
        let stored = CacheRuleFixtures.stored(headers: ["Last-Modified": date(-1100)], receivedAgo: 100)
        XCTAssertEqual(freshness(stored), Freshness(age: 100, lifetime: 100, isHeuristic: true))
    }
}
