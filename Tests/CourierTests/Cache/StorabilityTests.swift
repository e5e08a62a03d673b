import XCTest
@testable import Courier

/// Whether a response is stored, and for whom: RFC 9111 §3 for a private cache.
final class StorabilityTests: XCTestCase {
    private func decide(method: String = "GET", request: [String: String] = [:], status: Int = 200,
                        response: HTTPFields = [:]) -> StoreDecision {
        Storability.decide(request: CacheRequest(method: method, url: CacheRuleFixtures.url, headers: request),
                           statusCode: status, responseHeaders: response)
    }

    // MARK: Stored

    func testAPlainOKToGETIsStoredForEveryone() {
        // Given a 200 to a GET without credentials or directives
        // Then it is stored, heuristically cacheable, bound to nobody
        XCTAssertEqual(decide(), .store(bindsCredentials: false))
    }

    func testEveryHeuristicallyCacheableStatusIsStoredWithoutDirectives() {
        for status in [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501] {
            XCTAssertEqual(decide(status: status), .store(bindsCredentials: false), "\(status)")
        }
    }

    func testOtherStatusesNeedExplicitPermission() {
        // §3: Expires (even invalid), max-age (even invalid), public or private make them storable
        let permissions: [HTTPFields] = [
            ["Cache-Control": "max-age=60"], ["Cache-Control": "max-age=oops"], ["Expires": "0"],
            ["Expires": "Thu, 01 Dec 2044 16:00:00 GMT"], ["Cache-Control": "public"], ["Cache-Control": "private"],
            ["cache-control": "Private=\"Set-Cookie\""],
        ]
        for status in [201, 302, 307, 403, 500, 503] {
            XCTAssertEqual(decide(status: status), .doNotStore(.notCacheableStatus), "\(status)")
            for headers in permissions {
                XCTAssertEqual(decide(status: status, response: headers), .store(bindsCredentials: false), "\(status) \(headers)")
            }
        }
    }

    func testSharedMaxAgeGivesThisPrivateCacheNoPermission() {
        XCTAssertEqual(decide(status: 302, response: ["Cache-Control": "s-maxage=60"]), .doNotStore(.notCacheableStatus))
    }

    func testPrivateAndNoCacheDoNotStopStoring() {
        // §5.2.2.7: private is for shared caches; no-cache asks for validation, not for no storage
        XCTAssertEqual(decide(response: ["Cache-Control": "private, max-age=60"]), .store(bindsCredentials: false))
        XCTAssertEqual(decide(response: ["Cache-Control": "no-cache"]), .store(bindsCredentials: false))
    }

    func testVaryOnFieldsIsStored() {
        XCTAssertEqual(decide(response: ["Vary": "Accept-Encoding"]), .store(bindsCredentials: false))
    }

    // MARK: Not stored

    func testOnlyGETIsStored() {
        for method in ["POST", "HEAD", "PUT", "DELETE", "OPTIONS", "get", "Get"] {
            XCTAssertEqual(decide(method: method, response: ["Cache-Control": "max-age=60"]),
                           .doNotStore(.methodNotCacheable), method)
        }
    }

    func testInformationalResponsesAreNotFinal() {
        for status in [100, 101, 103, 199] {
            XCTAssertEqual(decide(status: status, response: ["Cache-Control": "max-age=60"]), .doNotStore(.statusNotFinal), "\(status)")
        }
    }

    func testPartialContentIsNotStored() {
        // Given a 206, or any response to a request with Range
        XCTAssertEqual(decide(status: 206, response: ["Cache-Control": "max-age=60"]), .doNotStore(.partialContent))
        XCTAssertEqual(decide(request: ["Range": "bytes=0-9"]), .doNotStore(.partialContent))
        XCTAssertEqual(decide(request: ["range": "bytes=0-9"], response: ["Cache-Control": "public"]), .doNotStore(.partialContent))
    }

    func testResponsesToTheAppsOwnConditionalRequestsAreNotStored() {
        for field in ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "if-none-match"] {
            XCTAssertEqual(decide(request: [field: "\"x\""], response: ["Cache-Control": "max-age=60"]),
                           .doNotStore(.userConditional), field)
        }
    }

    func testNoStoreInTheRequestOrTheResponse() {
        XCTAssertEqual(decide(request: ["Cache-Control": "no-store"]), .doNotStore(.noStore))
        XCTAssertEqual(decide(response: ["Cache-Control": "max-age=60, no-store"]), .doNotStore(.noStore))
        XCTAssertEqual(decide(response: ["cache-control": "NO-STORE"]), .doNotStore(.noStore))
        // A request's must-understand changes nothing: the directive is a response directive
        XCTAssertEqual(decide(request: ["Cache-Control": "no-store, must-understand"]), .doNotStore(.noStore))
    }

    func testMustUnderstandLiftsNoStoreForAStatusCourierUnderstands() {
        // §5.2.2.3: a cache that understands the status ignores no-store
        for status in [200, 203, 204, 301, 302, 303, 307, 308, 404, 410, 500, 503] {
            XCTAssertEqual(decide(status: status, response: ["Cache-Control": "must-understand, no-store, max-age=60"]),
                           .store(bindsCredentials: false), "\(status)")
        }
    }

    func testMustUnderstandKeepsNoStoreForAStatusCourierDoesNotUnderstand() {
        // Given statuses with no caching rules Courier implements (unknown, unused, 304)
        for status in [299, 418, 306, 599, 304] {
            XCTAssertEqual(decide(status: status, response: ["Cache-Control": "must-understand, no-store, max-age=60"]),
                           .doNotStore(.noStore), "\(status)")
        }
        // And the request's no-store is never lifted
        XCTAssertEqual(decide(request: ["Cache-Control": "no-store"], response: ["Cache-Control": "must-understand, no-store"]),
                       .doNotStore(.noStore))
    }

    func testMustUnderstandWithAnUnknownStatusIsNotStoredEvenWithoutNoStore() {
        // §3: with must-understand, the cache must understand the status
        XCTAssertEqual(decide(status: 299, response: ["Cache-Control": "must-understand, max-age=60"]),
                       .doNotStore(.notCacheableStatus))
        XCTAssertEqual(decide(status: 299, response: ["Cache-Control": "max-age=60"]), .store(bindsCredentials: false))
    }

    func testVaryStarIsNotStored() {
        XCTAssertEqual(decide(response: ["Vary": "*"]), .doNotStore(.varyEverything))
        XCTAssertEqual(decide(response: ["vary": "Accept, *", "Cache-Control": "max-age=60"]), .doNotStore(.varyEverything))
        XCTAssertEqual(decide(response: ["Vary": "Accept Language"]), .doNotStore(.varyEverything))
    }

    func testRepeatedResponseFieldsAreReadAsOneList() {
        // Given a field written on several lines, each line alone allowing the store
        let lines = { (name: String, values: [String]) in HTTPFields(values.map { HTTPField(name: name, value: $0) }) }
        // Then the lines are read together (RFC 9110 §5.3), in any case of the name
        XCTAssertEqual(decide(status: 404, response: lines("Cache-Control", ["public", "no-store"])), .doNotStore(.noStore))
        XCTAssertEqual(decide(response: lines("vary", ["Accept", "*"])), .doNotStore(.varyEverything))
        XCTAssertEqual(decide(response: lines("VARY", ["Accept", "Accept-Language"])), .store(bindsCredentials: false))
        XCTAssertEqual(decide(status: 302, response: lines("expires", ["0", "0"])), .store(bindsCredentials: false))
        XCTAssertEqual(decide(status: 302, response: lines("Expire", ["0"])), .doNotStore(.notCacheableStatus))
    }

    func testA304IsNeverStored() {
        XCTAssertEqual(decide(status: 304), .doNotStore(.notCacheableStatus))
        XCTAssertEqual(decide(status: 304, response: ["Cache-Control": "max-age=60, public"]), .doNotStore(.notCacheableStatus))
    }

    func testTheFirstRefusalGivesTheReason() {
        // Given a HEAD with Range and no-store answered 206 with Vary: *
        XCTAssertEqual(decide(method: "HEAD", request: ["Range": "bytes=0-1"], status: 206, response: ["Vary": "*"]),
                       .doNotStore(.methodNotCacheable))
        XCTAssertEqual(decide(request: ["Range": "bytes=0-1", "If-Range": "\"a\""]), .doNotStore(.partialContent))
        XCTAssertEqual(decide(request: ["If-None-Match": "\"a\"", "Cache-Control": "no-store"]), .doNotStore(.userConditional))
        XCTAssertEqual(decide(status: 302, response: ["Cache-Control": "no-store", "Vary": "*"]), .doNotStore(.noStore))
        XCTAssertEqual(decide(status: 302, response: ["Vary": "*"]), .doNotStore(.varyEverything))
    }

    // MARK: Credentials (§3.5)

    func testAResponseToAnAuthorizedRequestIsBoundToItsCredentials() {
        XCTAssertEqual(decide(request: ["Authorization": "Bearer a"]), .store(bindsCredentials: true))
        XCTAssertEqual(decide(request: ["authorization": "Bearer a"], response: ["Cache-Control": "private, max-age=60"]),
                       .store(bindsCredentials: true))
        XCTAssertEqual(decide(request: ["Authorization": ""]), .store(bindsCredentials: true))
    }

    func testEachRequestFieldIsFoundAmongOthersOfItsLength() {
        // Given request fields whose names have the same length as the ones the rules ask about
        let neighbours = ["Accept-Ranges": "x", "X-Request-Id1": "x", "If-Matches": "x", "Rangy": "x"]
        // Then none of them counts, and each real one still does, in any case, among them
        XCTAssertEqual(decide(request: neighbours), .store(bindsCredentials: false))
        XCTAssertEqual(decide(request: neighbours.merging(["AUTHORIZATION": "Bearer a"]) { $1 }),
                       .store(bindsCredentials: true))
        XCTAssertEqual(decide(request: neighbours.merging(["Authorization": "Bearer a", "cache-control": "no-store"]) { $1 }),
                       .doNotStore(.noStore))
        XCTAssertEqual(decide(request: neighbours.merging(["if-unmodified-since": "x"]) { $1 }),
                       .doNotStore(.userConditional))
        XCTAssertEqual(decide(request: neighbours.merging(["RANGE": "bytes=0-1"]) { $1 }),
                       .doNotStore(.partialContent))
    }

    func testAnExplicitlyShareableResponseIsNotBound() {
        // §3.5: public, must-revalidate and s-maxage allow reuse for other requests
        for directives in ["public", "must-revalidate", "s-maxage=0", "max-age=60, Must-Revalidate", "s-maxage=bad"] {
            XCTAssertEqual(decide(request: ["Authorization": "Bearer a"], response: ["Cache-Control": directives]),
                           .store(bindsCredentials: false), directives)
        }
    }

    func testTheCredentialKeyIsTheFNV1aOfTheAuthorizationValue() {
        // Given the published FNV-1a 64 test vectors
        XCTAssertEqual(Storability.credentialKey(requestHeaders: ["Authorization": ""]), "a1:cbf29ce484222325")
        XCTAssertEqual(Storability.credentialKey(requestHeaders: ["Authorization": "a"]), "a1:af63dc4c8601ec8c")
        XCTAssertEqual(Storability.credentialKey(requestHeaders: ["authorization": "foobar"]), "a1:85944171f73967e8")
        // And tokens that differ by one character
        XCTAssertEqual(Storability.credentialKey(requestHeaders: ["Authorization": "Bearer token-1"]), "a1:1f0b5da59ea4ad6b")
        XCTAssertEqual(Storability.credentialKey(requestHeaders: ["Authorization": "Bearer token-2"]), "a1:1f0b5ea59ea4af1e")
    }

    func testTheCredentialKeyKeepsLeadingZeros() {
        XCTAssertEqual(Storability.credentialKey(requestHeaders: ["Authorization": "Bearer 0"]), "a1:008fa37b99904b40")
    }

    func testThereIsNoCredentialKeyWithoutAuthorization() {
        XCTAssertNil(Storability.credentialKey(requestHeaders: [:]))
        XCTAssertNil(Storability.credentialKey(requestHeaders: ["Proxy-Authorization": "Basic eA=="]))
    }
}
