import XCTest
@testable import Courier

/// Which stored response answers a request, and how: RFC 9111 §4 and RFC 5861 §3.
final class CacheLookupTests: XCTestCase {
    private let now = CacheRuleFixtures.now
    private let date = CacheRuleFixtures.date
    private let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"

    private func request(_ headers: [String: String] = [:], method: String = "GET") -> CacheRequest {
        CacheRequest(method: method, url: CacheRuleFixtures.url, headers: headers)
    }

    private func decide(_ stored: [StoredResponse], _ request: CacheRequest? = nil,
                        policy: CachePolicy = .useProtocol) -> CacheDecision {
        CacheLookup.decide(stored: stored, request: request ?? self.request(), policy: policy, now: now, heuristicLimit: 86_400)
    }

    /// A response fresh for 600 s, 100 s old, with an ETag.
    private func fresh(_ directives: String = "", headers: [String: String] = [:]) -> StoredResponse {
        var fields = ["Cache-Control": "max-age=600" + (directives.isEmpty ? "" : ", " + directives), "ETag": "\"v1\""]
        fields.merge(headers) { $1 }
        return CacheRuleFixtures.stored(headers: fields, receivedAgo: 100)
    }

    /// A response fresh for 60 s, `staleBy` seconds past that, with an ETag unless `etag` is false.
    private func stale(_ directives: String = "", staleBy: Double = 30, etag: Bool = true) -> StoredResponse {
        var fields = ["Cache-Control": "max-age=60" + (directives.isEmpty ? "" : ", " + directives)]
        if etag { fields["ETag"] = "\"v1\"" }
        return CacheRuleFixtures.stored(headers: fields, receivedAgo: 60 + staleBy)
    }

    private let validators = ["If-None-Match": "\"v1\""]

    // MARK: Best match (§4.1)

    func testTheFieldsVaryNamesMustMatch() {
        // Given a response stored for Accept-Language: en
        let stored = CacheRuleFixtures.stored(headers: ["Vary": "Accept-Language"], secondaryKey: ["en"])
        // Then it answers requests for en only
        XCTAssertEqual(CacheLookup.bestMatch(in: [stored], for: request(["accept-language": "en"])), stored)
        XCTAssertNil(CacheLookup.bestMatch(in: [stored], for: request(["Accept-Language": "fr"])))
        XCTAssertNil(CacheLookup.bestMatch(in: [stored], for: request()))
    }

    func testAnAbsentFieldIsNotAnEmptyOne() {
        // Given a response stored for a request without X-A
        let stored = CacheRuleFixtures.stored(headers: ["Vary": "X-A"], secondaryKey: [nil])
        XCTAssertEqual(CacheLookup.bestMatch(in: [stored], for: request(["X-B": "1"])), stored)
        XCTAssertNil(CacheLookup.bestMatch(in: [stored], for: request(["X-A": ""])))
    }

    func testVaryStarMatchesNothing() {
        let stored = CacheRuleFixtures.stored(headers: ["Vary": "*"], secondaryKey: [])
        XCTAssertNil(CacheLookup.bestMatch(in: [stored], for: request()))
    }

    func testABoundResponseAnswersOnlyTheSameCredentials() {
        // Given a response stored for Bearer a
        let key = Storability.credentialKey(requestHeaders: ["Authorization": "Bearer a"])
        let stored = CacheRuleFixtures.stored(credentialKey: key)
        // Then only Bearer a gets it
        XCTAssertEqual(CacheLookup.bestMatch(in: [stored], for: request(["authorization": "Bearer a"])), stored)
        XCTAssertNil(CacheLookup.bestMatch(in: [stored], for: request(["Authorization": "Bearer b"])))
        XCTAssertNil(CacheLookup.bestMatch(in: [stored], for: request()))
        XCTAssertEqual(decide([fresh().with(credentialKey: key)], request(["Authorization": "Bearer b"])), .load)
    }

    func testAnUnboundResponseAnswersAnyCredentials() {
        let stored = CacheRuleFixtures.stored()
        XCTAssertEqual(CacheLookup.bestMatch(in: [stored], for: request(["Authorization": "Bearer b"])), stored)
    }

    func testAnotherURLNeverMatches() {
        let stored = CacheRuleFixtures.stored(url: "https://example.com/b")
        XCTAssertNil(CacheLookup.bestMatch(in: [stored], for: request()))
    }

    func testTheMostRecentByDateWins() {
        // Given an older response received last and a newer one (by Date) received first
        let older = CacheRuleFixtures.stored(headers: ["Date": date(-100), "X": "older"], receivedAgo: 5)
        let newer = CacheRuleFixtures.stored(headers: ["Date": date(-50), "X": "newer"], receivedAgo: 50)
        // Then Date decides, whatever the order
        XCTAssertEqual(CacheLookup.bestMatch(in: [older, newer], for: request()), newer)
        XCTAssertEqual(CacheLookup.bestMatch(in: [newer, older], for: request()), newer)
    }

    func testAtEqualDatesTheLastReceivedWins() {
        let first = CacheRuleFixtures.stored(headers: ["Date": date(-100), "X": "first"], receivedAgo: 90)
        let last = CacheRuleFixtures.stored(headers: ["Date": date(-100), "X": "last"], receivedAgo: 80)
        XCTAssertEqual(CacheLookup.bestMatch(in: [first, last], for: request()), last)
        XCTAssertEqual(CacheLookup.bestMatch(in: [last, first], for: request()), last)
    }

    func testAResponseWithoutDateIsDatedWhenReceived() {
        let undated = CacheRuleFixtures.stored(headers: ["X": "undated"], receivedAgo: 10)
        let dated = CacheRuleFixtures.stored(headers: ["Date": date(-20), "X": "dated"], receivedAgo: 5)
        XCTAssertEqual(CacheLookup.bestMatch(in: [dated, undated], for: request()), undated)
    }

    func testANewerResponseThatDoesNotMatchIsSkipped() {
        let matching = CacheRuleFixtures.stored(headers: ["Vary": "Accept", "Date": date(-100)], secondaryKey: ["a"])
        let newer = CacheRuleFixtures.stored(headers: ["Vary": "Accept", "Date": date(-1)], secondaryKey: ["b"])
        XCTAssertEqual(CacheLookup.bestMatch(in: [newer, matching], for: request(["Accept": "a"])), matching)
    }

    // MARK: Requests the cache does not answer

    func testOnlyGETUsesStoredResponses() {
        for method in ["HEAD", "POST", "get"] {
            XCTAssertEqual(decide([fresh()], request(method: method)), .load, method)
            XCTAssertEqual(decide([fresh()], request(method: method), policy: .onlyCached), .unavailable, method)
            XCTAssertEqual(decide([fresh()], request(method: method), policy: .returnCachedElseLoad), .load, method)
        }
    }

    func testPreconditionsOnlyTheOriginEvaluatesAndRangeRequestsBypassTheCache() {
        for field in ["If-Match", "If-Unmodified-Since", "If-Range", "if-range", "Range", "range"] {
            let own = request([field: "\"v1\""])
            XCTAssertEqual(decide([fresh()], own), .load, field)
            XCTAssertEqual(decide([fresh()], own, policy: .returnCachedElseLoad), .load, field)
            XCTAssertEqual(decide([fresh()], own, policy: .onlyCached), .unavailable, field)
        }
    }

    // MARK: The app's own conditional requests (§4.3.2)

    func testAnAppsIfNoneMatchIsAnsweredNotModifiedWhenATagMatchesWeakly() {
        // Given a fresh stored response tagged "v1"
        for list in [#""v1""#, #"W/"v1""#, #""v0", "v1""#, #"W/"a,b", "v1""#, "*", #" "v1" "#] {
            // Then a list naming it (weakly), or *, is answered 304 from the cache
            XCTAssertEqual(decide([fresh()], request(["If-None-Match": list])), .notModified(fresh(), .fresh), list)
        }
        // And a list naming only others gets the stored response whole
        for list in [#""v2""#, #"W/"v2", "v11""#, "v1", ""] {
            XCTAssertEqual(decide([fresh()], request(["If-None-Match": list])), .fresh(fresh()), list)
        }
    }

    func testAnAppsIfModifiedSinceComparesWithLastModifiedThenDate() {
        // Given responses modified at lastModified, and one with only a Date 100 s ago
        let modified = fresh(headers: ["Last-Modified": lastModified])
        let dated = fresh(headers: ["Date": date(-100)])
        // Then a date at or after the modification is not modified; before, the stored response answers
        XCTAssertEqual(decide([modified], request(["If-Modified-Since": lastModified])), .notModified(modified, .fresh))
        XCTAssertEqual(decide([modified], request(["If-Modified-Since": "Sun, 06 Nov 1994 08:49:36 GMT"])), .fresh(modified))
        XCTAssertEqual(decide([dated], request(["If-Modified-Since": date(-100)])), .notModified(dated, .fresh))
        XCTAssertEqual(decide([dated], request(["If-Modified-Since": date(-101)])), .fresh(dated))
        // And one that is no date is ignored; If-None-Match, when present, decides alone
        XCTAssertEqual(decide([modified], request(["If-Modified-Since": "yesterday"])), .fresh(modified))
        XCTAssertEqual(decide([modified], request(["If-Modified-Since": lastModified, "If-None-Match": #""v2""#])), .fresh(modified))
    }

    func testAnAppsConditionalGoesToTheOriginAsItIsWhenTheStoredResponseCannotAnswer() {
        let conditional = request(["If-None-Match": #""v1""#])
        // A stale response that must be validated: the app's validators go as they are, none added
        XCTAssertEqual(decide([stale()], conditional), .load)
        XCTAssertEqual(decide([stale("stale-while-revalidate=60")], conditional), .load)
        // Nothing stored, or only-cached with nothing stored
        XCTAssertEqual(decide([], conditional), .load)
        XCTAssertEqual(decide([], conditional, policy: .onlyCached), .unavailable)
        // A stale response a policy accepts answers, 304 when it matches
        XCTAssertEqual(decide([stale()], conditional, policy: .returnCachedElseLoad), .notModified(stale(), .stale))
        // A stored response other than a 200 answers whole
        let notFound = CacheRuleFixtures.stored(status: 404, headers: ["Cache-Control": "max-age=600", "ETag": #""v1""#])
        XCTAssertEqual(decide([notFound], conditional), .fresh(notFound))
    }

    func testReloadAlwaysLoads() {
        XCTAssertEqual(decide([fresh()], policy: .reload), .load)
        XCTAssertEqual(decide([], policy: .reload), .load)
    }

    // MARK: Policies that prefer stored responses

    func testReturnCachedElseLoadTakesAnyAge() {
        let old = stale("must-revalidate, no-cache", staleBy: 100_000)
        XCTAssertEqual(decide([fresh()], policy: .returnCachedElseLoad), .fresh(fresh()))
        XCTAssertEqual(decide([old], policy: .returnCachedElseLoad), .stale(old))
        XCTAssertEqual(decide([], policy: .returnCachedElseLoad), .load)
    }

    func testOnlyCachedTakesAnyAgeButNeverLoads() {
        let old = stale("must-revalidate", staleBy: 100_000, etag: false)
        XCTAssertEqual(decide([fresh()], policy: .onlyCached), .fresh(fresh()))
        XCTAssertEqual(decide([old], policy: .onlyCached), .stale(old))
        XCTAssertEqual(decide([], policy: .onlyCached), .unavailable)
        let other = CacheRuleFixtures.stored(headers: ["Vary": "Accept"], secondaryKey: ["a"])
        XCTAssertEqual(decide([other], policy: .onlyCached), .unavailable)
    }

    // MARK: The protocol: fresh, stale, validation

    func testAFreshResponseAnswers() {
        XCTAssertEqual(decide([fresh()]), .fresh(fresh()))
        XCTAssertEqual(decide([fresh("immutable")]), .fresh(fresh("immutable")))
    }

    func testNothingStoredLoads() {
        XCTAssertEqual(decide([]), .load)
        XCTAssertEqual(decide([fresh().with(url: "https://example.com/other")]), .load)
    }

    func testAStaleResponseIsValidatedWithItsETag() {
        XCTAssertEqual(decide([stale()]), .validate(stale(), conditionalHeaders: validators))
        XCTAssertEqual(decide([stale("immutable")]), .validate(stale("immutable"), conditionalHeaders: validators))
    }

    func testAStaleResponseIsValidatedWithItsLastModified() {
        let stored = CacheRuleFixtures.stored(headers: ["Cache-Control": "max-age=0", "Last-Modified": lastModified])
        XCTAssertEqual(decide([stored]), .validate(stored, conditionalHeaders: ["If-Modified-Since": lastModified]))
    }

    func testAStaleResponseWithoutValidatorsIsReplaced() {
        XCTAssertEqual(decide([stale(etag: false)]), .load)
        let undatable = CacheRuleFixtures.stored(headers: ["Cache-Control": "max-age=0", "Last-Modified": "recently"])
        XCTAssertEqual(decide([undatable]), .load)
    }

    func testAHeuristicLifetimeCounts() {
        let stored = CacheRuleFixtures.stored(headers: ["Date": date(-10), "Last-Modified": date(-10_010)], receivedAgo: 0)
        XCTAssertEqual(decide([stored]), .fresh(stored))
    }

    func testAnInvalidMaxAgeIsValidated() {
        let stored = CacheRuleFixtures.stored(headers: ["Cache-Control": "max-age=soon", "ETag": "\"v1\""])
        XCTAssertEqual(decide([stored]), .validate(stored, conditionalHeaders: validators))
    }

    // MARK: Response no-cache and must-revalidate

    func testAResponsesNoCacheAlwaysValidates() {
        // §5.2.2.4; the qualified form is handled as the bare one
        for directives in ["no-cache", "no-cache=\"Set-Cookie\""] {
            XCTAssertEqual(decide([fresh(directives)]), .validate(fresh(directives), conditionalHeaders: validators), directives)
        }
        XCTAssertEqual(decide([fresh("no-cache", headers: ["ETag": " "])]), .load)
    }

    func testMustRevalidateServesFreshButNeverStale() {
        XCTAssertEqual(decide([fresh("must-revalidate")]), .fresh(fresh("must-revalidate")))
        let old = stale("must-revalidate, stale-while-revalidate=600")
        XCTAssertEqual(decide([old], request(["Cache-Control": "max-stale"])), .validate(old, conditionalHeaders: validators))
        XCTAssertEqual(decide([old]), .validate(old, conditionalHeaders: validators))
    }

    // MARK: Request directives (§5.2.1)

    func testTheRequestsNoCacheValidates() {
        XCTAssertEqual(decide([fresh()], request(["Cache-Control": "no-cache"])), .validate(fresh(), conditionalHeaders: validators))
    }

    func testPragmaNoCacheCountsOnlyWithoutCacheControl() {
        // §5.4: Pragma: no-cache is the HTTP/1.0 spelling of no-cache
        XCTAssertEqual(decide([fresh()], request(["Pragma": "no-cache"])), .validate(fresh(), conditionalHeaders: validators))
        XCTAssertEqual(decide([fresh()], request(["pragma": "x, No-Cache"])), .validate(fresh(), conditionalHeaders: validators))
        XCTAssertEqual(decide([fresh()], request(["Pragma": "no-cache-please"])), .fresh(fresh()))
        // A Cache-Control in the request wins
        XCTAssertEqual(decide([fresh()], request(["Pragma": "no-cache", "Cache-Control": "max-age=300"])), .fresh(fresh()))
    }

    func testTheRequestsMaxAgeLimitsTheAge() {
        // Given a fresh response 100 s old
        XCTAssertEqual(decide([fresh()], request(["Cache-Control": "max-age=100"])), .fresh(fresh()))
        XCTAssertEqual(decide([fresh()], request(["Cache-Control": "max-age=99"])), .validate(fresh(), conditionalHeaders: validators))
        XCTAssertEqual(decide([fresh()], request(["Cache-Control": "max-age=0"])), .validate(fresh(), conditionalHeaders: validators))
    }

    func testTheRequestsMinFreshAsksForFreshnessLeft() {
        // Given a response with 500 s of freshness left
        XCTAssertEqual(decide([fresh()], request(["Cache-Control": "min-fresh=500"])), .fresh(fresh()))
        XCTAssertEqual(decide([fresh()], request(["Cache-Control": "min-fresh=501"])), .validate(fresh(), conditionalHeaders: validators))
    }

    func testMaxStaleServesAStaleResponse() {
        // Given a response stale by 30 s
        XCTAssertEqual(decide([stale()], request(["Cache-Control": "max-stale=30"])), .stale(stale()))
        XCTAssertEqual(decide([stale()], request(["Cache-Control": "max-stale"])), .stale(stale()))
        XCTAssertEqual(decide([stale(etag: false)], request(["Cache-Control": "max-stale=30"])), .stale(stale(etag: false)))
        XCTAssertEqual(decide([stale()], request(["Cache-Control": "max-stale=29"])), .validate(stale(), conditionalHeaders: validators))
    }

    func testMaxStaleYieldsToTheResponsesDirectivesAndTheRequestsOtherLimits() {
        let stretched = ["Cache-Control": "max-stale"]
        XCTAssertEqual(decide([stale("must-revalidate")], request(stretched)),
                       .validate(stale("must-revalidate"), conditionalHeaders: validators))
        XCTAssertEqual(decide([stale("no-cache")], request(stretched)), .validate(stale("no-cache"), conditionalHeaders: validators))
        // Given a response 120 s old (stale by 60)
        XCTAssertEqual(decide([stale(staleBy: 60)], request(["Cache-Control": "max-stale, max-age=100"])),
                       .validate(stale(staleBy: 60), conditionalHeaders: validators))
        XCTAssertEqual(decide([stale(staleBy: 60)], request(["Cache-Control": "max-stale, max-age=120"])), .stale(stale(staleBy: 60)))
        XCTAssertEqual(decide([stale()], request(["Cache-Control": "max-stale, min-fresh=0"])),
                       .validate(stale(), conditionalHeaders: validators))
        XCTAssertEqual(decide([stale()], request(["Cache-Control": "max-stale, no-cache"])),
                       .validate(stale(), conditionalHeaders: validators))
    }

    func testOnlyIfCachedNeverGoesToTheNetwork() {
        let offline = request(["Cache-Control": "only-if-cached"])
        XCTAssertEqual(decide([fresh()], offline), .fresh(fresh()))
        XCTAssertEqual(decide([stale()], offline), .unavailable)
        XCTAssertEqual(decide([stale(etag: false)], offline), .unavailable)
        XCTAssertEqual(decide([], offline), .unavailable)
        XCTAssertEqual(decide([stale()], request(["Cache-Control": "only-if-cached, max-stale=60"])), .stale(stale()))
    }

    // MARK: stale-while-revalidate (RFC 5861 §3)

    func testStaleWhileRevalidateServesWithinItsWindow() {
        // Given a response stale by exactly its window
        let stored = stale("stale-while-revalidate=30", staleBy: 30)
        XCTAssertEqual(decide([stored]), .staleWhileRevalidate(stored, conditionalHeaders: validators))
        // One second later it must be validated
        let later = stale("stale-while-revalidate=30", staleBy: 31)
        XCTAssertEqual(decide([later]), .validate(later, conditionalHeaders: validators))
    }

    func testStaleWhileRevalidateWithoutValidatorsReloadsInTheBackground() {
        let stored = stale("stale-while-revalidate=60", staleBy: 10, etag: false)
        XCTAssertEqual(decide([stored]), .staleWhileRevalidate(stored, conditionalHeaders: [:]))
    }

    func testStaleWhileRevalidateYieldsToTheRequest() {
        let stored = stale("stale-while-revalidate=60", staleBy: 10)
        XCTAssertEqual(decide([stored], request(["Cache-Control": "no-cache"])), .validate(stored, conditionalHeaders: validators))
        XCTAssertEqual(decide([stored], request(["Cache-Control": "max-age=60"])), .validate(stored, conditionalHeaders: validators))
        XCTAssertEqual(decide([stored], request(["Cache-Control": "only-if-cached"])), .stale(stored))
        XCTAssertEqual(decide([stale("no-cache, stale-while-revalidate=60")]),
                       .validate(stale("no-cache, stale-while-revalidate=60"), conditionalHeaders: validators))
    }

    func testMaxStaleIsPreferredToStaleWhileRevalidate() {
        let stored = stale("stale-while-revalidate=60", staleBy: 10)
        XCTAssertEqual(decide([stored], request(["Cache-Control": "max-stale=10"])), .stale(stored))
        XCTAssertEqual(decide([stored], request(["Cache-Control": "max-stale=9"])), .staleWhileRevalidate(stored, conditionalHeaders: validators))
    }
}

private extension StoredResponse {
    func with(credentialKey: String?) -> StoredResponse {
        var copy = self
        copy.credentialKey = credentialKey
        return copy
    }

    func with(url: String) -> StoredResponse {
        var copy = self
        copy.url = url
        return copy
    }
}
