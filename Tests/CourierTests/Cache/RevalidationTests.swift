import Foundation
import XCTest
@testable import Courier

/// Validation with the origin (RFC 9111 §4.3) and stale responses on errors (RFC 5861 §4).
final class RevalidationTests: XCTestCase {
    private let now = CacheRuleFixtures.now
    private let date = CacheRuleFixtures.date
    private let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"

    // MARK: Conditional fields (§4.3.1)

    func testAnETagIsSentInIfNoneMatch() {
        let stored = CacheRuleFixtures.stored(headers: ["ETag": "\"v1\""])
        XCTAssertEqual(Revalidation.conditionalHeaders(for: stored, now: now), ["If-None-Match": "\"v1\""])
    }

    func testAWeakETagIsSentAsStored() {
        let stored = CacheRuleFixtures.stored(headers: ["etag": "W/\"v1\""])
        XCTAssertEqual(Revalidation.conditionalHeaders(for: stored, now: now), ["If-None-Match": "W/\"v1\""])
    }

    func testALastModifiedIsSentInIfModifiedSince() {
        let stored = CacheRuleFixtures.stored(headers: ["last-modified": lastModified])
        XCTAssertEqual(Revalidation.conditionalHeaders(for: stored, now: now), ["If-Modified-Since": lastModified])
    }

    func testBothValidatorsAreSent() {
        let stored = CacheRuleFixtures.stored(headers: ["ETag": "\"v1\"", "Last-Modified": lastModified])
        XCTAssertEqual(Revalidation.conditionalHeaders(for: stored, now: now),
                       ["If-None-Match": "\"v1\"", "If-Modified-Since": lastModified])
    }

    func testUnusableValidatorsAreNotSent() {
        // Given a Last-Modified that is not a date and a blank ETag
        let stored = CacheRuleFixtures.stored(headers: ["ETag": " ", "Last-Modified": "yesterday"])
        // Then there is nothing to validate with
        XCTAssertEqual(Revalidation.conditionalHeaders(for: stored, now: now), [:])
        XCTAssertEqual(Revalidation.conditionalHeaders(for: CacheRuleFixtures.stored(), now: now), [:])
    }

    // MARK: Freshening with a 304 (§4.3.4, §3.2)

    private func storedWithTag(_ tag: String?, lastModified: String? = nil, extra: [String: String] = [:]) -> StoredResponse {
        var headers = ["Cache-Control": "max-age=60", "Date": date(-1000), "Content-Type": "text/plain"]
        headers["ETag"] = tag
        headers["Last-Modified"] = lastModified
        headers.merge(extra) { $1 }
        return CacheRuleFixtures.stored(headers: headers, receivedAgo: 1000)
    }

    private func freshen(_ stored: StoredResponse, _ headers: HTTPFields) -> StoredResponse? {
        Revalidation.freshened(stored, with: headers, requestTime: now - 1, responseTime: now)
    }

    func testA304WithTheSameStrongETagFreshensTheStoredResponse() {
        // Given a stale stored response and a 304 with its ETag, a new lifetime, a new field and a Content-Length
        let stored = storedWithTag("\"v1\"", extra: ["Content-Length": "4", "X-Old": "1"])
        let notModified: HTTPFields = ["ETag": "\"v1\"", "Cache-Control": "max-age=120", "Date": date(0), "Content-Length": "0",
                                       "X-New": "2"]
        // When it freshens the stored response
        let freshened = freshen(stored, notModified)
        // Then the 304's fields replace or join the stored ones, except Content-Length, and the times are the 304's:
        // the stored fields it keeps in their order, then the 304's in theirs
        var expected = stored
        expected.headers = ["Content-Length": "4", "Content-Type": "text/plain", "X-Old": "1",
                            "ETag": "\"v1\"", "Cache-Control": "max-age=120", "Date": date(0), "X-New": "2"]
        expected.requestTime = now - 1
        expected.responseTime = now
        XCTAssertEqual(freshened, expected)
        // And it is fresh again: 1 s of round trip plus 10 s resident
        XCTAssertEqual(Freshness(of: freshened!, now: now + 10, heuristicLimit: 0), Freshness(age: 11, lifetime: 120, isHeuristic: false))
    }

    func testContentLengthIsNeverTakenFromThe304() {
        let freshened = freshen(storedWithTag("\"v1\""), ["ETag": "\"v1\"", "content-length": "0", "Date": date(0)])
        XCTAssertNil(freshened.flatMap { $0.headers["Content-Length"] })
    }

    func testA304WithADifferentStrongETagSelectsNothing() {
        XCTAssertNil(freshen(storedWithTag("\"v1\""), ["ETag": "\"v2\"", "Date": date(0)]))
        // Whatever Last-Modified says
        XCTAssertNil(freshen(storedWithTag("\"v1\"", lastModified: lastModified),
                             ["ETag": "\"v2\"", "Last-Modified": lastModified, "Date": date(0)]))
    }

    func testEntityTagsAreComparedStronglyOrWeaklyAsThe304Says() {
        // A strong tag selects only the same strong tag
        XCTAssertNil(freshen(storedWithTag("W/\"v1\""), ["ETag": "\"v1\""]))
        XCTAssertNotNil(freshen(storedWithTag("\"v1\""), ["ETag": "\"v1\""]))
        // A weak tag selects the same opaque tag, weak or strong
        XCTAssertNotNil(freshen(storedWithTag("W/\"v1\""), ["ETag": "W/\"v1\""]))
        XCTAssertNotNil(freshen(storedWithTag("\"v1\""), ["ETag": "W/\"v1\""]))
        XCTAssertNil(freshen(storedWithTag("\"v1\""), ["ETag": "W/\"v2\""]))
        // The weakness indicator is case-sensitive: w/ is part of an opaque tag
        XCTAssertNil(freshen(storedWithTag("\"v1\""), ["ETag": "w/\"v1\""]))
    }

    func testA304ETagSelectsNothingWhenNoneIsStored() {
        XCTAssertNil(freshen(storedWithTag(nil, lastModified: lastModified), ["ETag": "\"v1\"", "Last-Modified": lastModified]))
    }

    func testWithoutETagTheLastModifiedDateSelects() {
        let stored = storedWithTag(nil, lastModified: lastModified)
        XCTAssertNotNil(freshen(stored, ["Last-Modified": lastModified]))
        // The same instant in another format is the same validator
        XCTAssertNotNil(freshen(stored, ["Last-Modified": "Sunday, 06-Nov-94 08:49:37 GMT"]))
        XCTAssertNil(freshen(stored, ["Last-Modified": "Sun, 06 Nov 1994 08:49:38 GMT"]))
    }

    func testA304WithoutValidatorsSelectsTheStoredResponseItAnswers() {
        // The answer to a conditional request for this one stored response (httpbin's /cache sends such 304s)
        XCTAssertNotNil(freshen(storedWithTag(nil), ["Cache-Control": "max-age=5"]))
        XCTAssertNotNil(freshen(storedWithTag("\"v1\""), ["Cache-Control": "max-age=5"]))
        XCTAssertNotNil(freshen(storedWithTag(nil, lastModified: lastModified), ["Cache-Control": "max-age=5"]))
        // A Last-Modified that is not a date is no validator
        XCTAssertNotNil(freshen(storedWithTag(nil), ["Last-Modified": "never"]))
    }

    func testAFieldIsReplacedWhateverTheCaseOfItsName() {
        let freshened = freshen(storedWithTag("\"v1\""), ["etag": "\"v1\"", "cache-control": "max-age=5", "date": date(0)])
        XCTAssertEqual(freshened?.headers.dictionary, ["etag": "\"v1\"", "cache-control": "max-age=5", "date": date(0),
                                             "Content-Type": "text/plain"])
    }

    func testHopByHopProxyAndEncodingFieldsAreNotTaken() {
        // Given a 304 with connection-specific fields, proxy fields and fields about its own framing
        let stored = storedWithTag("\"v1\"", extra: ["Content-Encoding": "identity"])
        let notModified = [
            "ETag": "\"v1\"", "Date": date(0), "Connection": "close, X-Hop", "X-Hop": "1", "Keep-Alive": "timeout=5",
            "Transfer-Encoding": "chunked", "TE": "trailers", "Upgrade": "h2c", "Proxy-Connection": "keep-alive",
            "Proxy-Authenticate": "Basic", "Proxy-Authentication-Info": "x", "Proxy-Authorization": "Basic eA==",
            "Content-Encoding": "gzip", "Content-Range": "bytes */4",
        ]
        // Then none of them reaches the stored response
        XCTAssertEqual(freshen(stored, HTTPFields(notModified))?.headers.dictionary,
                       ["ETag": "\"v1\"", "Date": date(0), "Cache-Control": "max-age=60", "Content-Type": "text/plain",
                        "Content-Encoding": "identity"])
    }

    func testAnAgeOfTheOldExchangeIsDropped() {
        // Given a stored response that came through a cache with Age: 500
        let stored = storedWithTag("\"v1\"", extra: ["Age": "500"])
        // When a 304 without Age freshens it, the old Age goes; with one, it is the 304's
        XCTAssertNil(freshen(stored, ["ETag": "\"v1\"", "Date": date(0)]).flatMap { $0.headers["Age"] })
        XCTAssertEqual(freshen(stored, ["ETag": "\"v1\"", "Date": date(0), "age": "3"])?.headers["age"], "3")
        XCTAssertEqual(Freshness(of: freshen(stored, ["ETag": "\"v1\"", "Date": date(0)])!, now: now, heuristicLimit: 0).age, 1)
    }

    func testA304WithoutDateIsDatedWhenReceived() {
        // Given a stored response dated 1000 s ago and a 304 without Date
        let freshened = freshen(storedWithTag("\"v1\""), ["ETag": "\"v1\""])
        // Then its Date is the 304's receipt, so it is not 1000 s old at once
        XCTAssertEqual(freshened?.headers["Date"], date(0))
        XCTAssertEqual(Freshness(of: freshened!, now: now, heuristicLimit: 0), Freshness(age: 1, lifetime: 60, isHeuristic: false))
    }

    // MARK: Stale on error (RFC 5861 §4)

    /// A response fresh for 60 s, `staleBy` seconds past that (negative: still fresh).
    private func stored(_ directives: String, staleBy: Double) -> StoredResponse {
        CacheRuleFixtures.stored(headers: ["Cache-Control": "max-age=60, " + directives, "ETag": "\"v1\""], receivedAgo: 60 + staleBy)
    }

    private func serves(_ stored: StoredResponse, _ failure: Revalidation.FailureKind = .network,
                        request: [String: String] = [:], policy: CachePolicy = .useProtocol) -> Bool {
        Revalidation.servesStale(stored, after: failure, requestHeaders: request, policy: policy, now: now, heuristicLimit: 0)
    }

    func testStaleIfErrorServesOnNetworkFailuresAndServerErrors() {
        let response = stored("stale-if-error=300", staleBy: 100)
        for failure in [Revalidation.FailureKind.network, .status(500), .status(502), .status(503), .status(504)] {
            XCTAssertTrue(serves(response, failure), "\(failure)")
        }
    }

    func testOtherStatusesAreNotErrors() {
        let response = stored("stale-if-error=300", staleBy: 100)
        for status in [400, 401, 404, 429, 501, 505, 599, 200, 304] {
            XCTAssertFalse(serves(response, .status(status)), "\(status)")
        }
    }

    func testTheStaleIfErrorWindowIncludesItsLastSecond() {
        XCTAssertTrue(serves(stored("stale-if-error=300", staleBy: 300)))
        XCTAssertFalse(serves(stored("stale-if-error=300", staleBy: 301)))
        XCTAssertFalse(serves(stored("stale-if-error=0", staleBy: 1)))
    }

    func testWithoutStaleIfErrorTheFailureStands() {
        XCTAssertFalse(serves(stored("public", staleBy: 1)))
        XCTAssertFalse(serves(stored("public", staleBy: -30)))
    }

    func testTheRequestsStaleIfErrorDecidesForItsRequest() {
        // Given a response that allows 300 s, and a request that allows only 50
        XCTAssertFalse(serves(stored("stale-if-error=300", staleBy: 100), request: ["Cache-Control": "stale-if-error=50"]))
        // Given a response that says nothing, and a request that allows 500
        XCTAssertTrue(serves(stored("public", staleBy: 400), request: ["cache-control": "stale-if-error=500"]))
    }

    func testMustRevalidateForbidsServingItStale() {
        // §4.2.4 and §5.2.2.2: once stale, never without validation, even disconnected
        XCTAssertFalse(serves(stored("must-revalidate, stale-if-error=300", staleBy: 10)))
        XCTAssertFalse(serves(stored("must-revalidate", staleBy: 10), request: ["Cache-Control": "stale-if-error=300"]))
        // But a fresh one (validated because the request asked) is not stale
        XCTAssertTrue(serves(stored("must-revalidate, stale-if-error=300", staleBy: -10)))
    }

    func testNoCacheForbidsServingItWithoutValidation() {
        XCTAssertFalse(serves(stored("no-cache, stale-if-error=300", staleBy: 10)))
        XCTAssertFalse(serves(stored("no-cache=\"Set-Cookie\", stale-if-error=300", staleBy: -10)))
    }

    func testCachePreferringPoliciesAlwaysServeOnErrors() {
        // Given a response that forbids stale use, long stale
        let response = stored("no-cache, must-revalidate", staleBy: 100_000)
        // Then the app's explicit wish for stored data wins, on errors only
        for policy in [CachePolicy.returnCachedElseLoad, .onlyCached] {
            XCTAssertTrue(serves(response, .network, policy: policy), "\(policy)")
            XCTAssertTrue(serves(response, .status(503), policy: policy), "\(policy)")
            XCTAssertFalse(serves(response, .status(404), policy: policy), "\(policy)")
        }
    }

    func testReloadNeverServesStale() {
        XCTAssertFalse(serves(stored("stale-if-error=300", staleBy: 1), policy: .reload))
    }
}
