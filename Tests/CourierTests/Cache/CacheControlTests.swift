import XCTest
@testable import Courier

/// `Cache-Control` as RFC 9111 §5.2 (with §1.2.2 and §4.2.1) and RFC 5861 describe it.
final class CacheControlTests: XCTestCase {
    // MARK: Directives

    func testEveryResponseDirectiveIsRead() {
        // Given a response field value with every response directive
        let value = "max-age=60, s-maxage=120, no-cache, no-store, no-transform, must-revalidate, proxy-revalidate, "
            + "must-understand, private, public, immutable, stale-while-revalidate=30, stale-if-error=86400"
        // When it is parsed
        let directives = CacheControl(value)
        // Then each is there with its value
        XCTAssertEqual(directives.maxAge, 60)
        XCTAssertEqual(directives.sharedMaxAge, 120)
        XCTAssertEqual(directives.noCache, .all)
        XCTAssertTrue(directives.noStore)
        XCTAssertTrue(directives.noTransform)
        XCTAssertTrue(directives.mustRevalidate)
        XCTAssertTrue(directives.proxyRevalidate)
        XCTAssertTrue(directives.mustUnderstand)
        XCTAssertEqual(directives.privateScope, .all)
        XCTAssertTrue(directives.isPublic)
        XCTAssertTrue(directives.immutable)
        XCTAssertEqual(directives.staleWhileRevalidate, 30)
        XCTAssertEqual(directives.staleIfError, 86400)
        XCTAssertFalse(directives.hasInvalidFreshness)
        XCTAssertNil(directives.maxStale)
        XCTAssertNil(directives.minFresh)
        XCTAssertFalse(directives.onlyIfCached)
    }

    func testEveryRequestDirectiveIsRead() {
        // Given a request field value with every request directive
        let directives = CacheControl("max-age=0, max-stale=5, min-fresh=10, no-cache, no-store, no-transform, only-if-cached")
        // Then each is there
        XCTAssertEqual(directives.maxAge, 0)
        XCTAssertEqual(directives.maxStale, .seconds(5))
        XCTAssertEqual(directives.minFresh, 10)
        XCTAssertEqual(directives.noCache, .all)
        XCTAssertTrue(directives.noStore)
        XCTAssertTrue(directives.noTransform)
        XCTAssertTrue(directives.onlyIfCached)
    }

    func testAnEmptyValueHasNoDirectives() {
        XCTAssertEqual(CacheControl(""), CacheControl())
        XCTAssertEqual(CacheControl(fieldValues: []), CacheControl())
        XCTAssertEqual(CacheControl(" ,, ,\t,"), CacheControl())
        XCTAssertEqual(CacheControl().fieldValue, "")
    }

    func testTheRFCExamples() {
        // RFC 9111 §5.2.2.1, §5.2.2.4 and §5.2.3 examples; RFC 5861 §3 and §4 examples.
        XCTAssertTrue(CacheControl("must-revalidate").mustRevalidate)
        XCTAssertTrue(CacheControl("max-age=31536000, immutable").immutable)
        XCTAssertEqual(CacheControl("max-age=600, stale-while-revalidate=30").staleWhileRevalidate, 30)
        let errorExample = CacheControl("max-age=600, stale-if-error=1200")
        XCTAssertEqual(errorExample.maxAge, 600)
        XCTAssertEqual(errorExample.staleIfError, 1200)
        XCTAssertTrue(CacheControl("must-understand, no-store").mustUnderstand)
    }

    func testUnknownDirectivesAreIgnored() {
        let directives = CacheControl("community=\"UCI\", max-age=5, x-custom, foo=bar, stale-while-revalidate-extra=9")
        var expected = CacheControl()
        expected.maxAgeDirective = .seconds(5)
        XCTAssertEqual(directives, expected)
    }

    // MARK: Syntax

    func testDirectiveNamesAreCaseInsensitive() {
        let directives = CacheControl("MAX-AGE=7, No-Store, PRIVATE=\"X-Foo\", Stale-If-Error=3")
        XCTAssertEqual(directives.maxAge, 7)
        XCTAssertTrue(directives.noStore)
        XCTAssertEqual(directives.privateScope, .fields(["x-foo"]))
        XCTAssertEqual(directives.staleIfError, 3)
    }

    func testAQuotedNumberIsAccepted() {
        // §5.2: recipients ought to accept both the token and the quoted-string form.
        XCTAssertEqual(CacheControl("max-age=\"60\"").maxAge, 60)
        XCTAssertEqual(CacheControl("s-maxage=\"0\"").sharedMaxAge, 0)
        XCTAssertEqual(CacheControl("min-fresh=\"9\"").minFresh, 9)
        XCTAssertEqual(CacheControl("max-stale=\"4\"").maxStale, .seconds(4))
    }

    func testAQuotedNumberWithSpacesOrEscapesIsJudgedOnItsContent() {
        XCTAssertTrue(CacheControl("max-age=\" 60\"").hasInvalidFreshness)
        XCTAssertEqual(CacheControl("max-age=\"6\\0\"").maxAge, 60)
    }

    func testWhitespaceIsTolerated() {
        let directives = CacheControl("\t max-age = 5 ,\tno-store\t,  private = \"a\" ")
        XCTAssertEqual(directives.maxAge, 5)
        XCTAssertTrue(directives.noStore)
        XCTAssertEqual(directives.privateScope, .fields(["a"]))
    }

    func testEmptyListMembersAreSkipped() {
        let directives = CacheControl(",,max-age=5,,,no-store,")
        XCTAssertEqual(directives.maxAge, 5)
        XCTAssertTrue(directives.noStore)
    }

    func testSeveralFieldValuesFormOneList() {
        let directives = CacheControl(fieldValues: ["max-age=5", "no-store", "private=\"a\"", "private=\"b\""])
        XCTAssertEqual(directives.maxAge, 5)
        XCTAssertTrue(directives.noStore)
        XCTAssertEqual(directives.privateScope, .fields(["a", "b"]))
    }

    func testACommaInsideAQuotedStringDoesNotSplit() {
        let directives = CacheControl("no-cache=\"Set-Cookie, X-Token\", max-age=3")
        XCTAssertEqual(directives.noCache, .fields(["set-cookie", "x-token"]))
        XCTAssertEqual(directives.maxAge, 3)
        // In an unknown directive too.
        XCTAssertEqual(CacheControl("ext=\"a, no-store, b\", max-age=4"), CacheControl("max-age=4"))
    }

    func testAnUnterminatedQuoteSwallowsTheRestOfItsFieldValueOnly() {
        // Given a quoted string that never ends in the first field value
        let directives = CacheControl(fieldValues: ["no-cache=\"a, no-store", "max-age=8"])
        // Then the rest of that value is its content, malformed, so no-cache covers everything,
        // and the next field value is read normally
        XCTAssertEqual(directives.noCache, .all)
        XCTAssertFalse(directives.noStore)
        XCTAssertEqual(directives.maxAge, 8)
        XCTAssertTrue(CacheControl("max-age=\"60").hasInvalidFreshness)
        XCTAssertTrue(CacheControl("max-age=\"60\\").hasInvalidFreshness)
        XCTAssertEqual(CacheControl("x=\"unterminated, no-store"), CacheControl())
    }

    func testJunkAfterAnArgumentMakesItMalformed() {
        XCTAssertTrue(CacheControl("max-age=5 6, no-store").hasInvalidFreshness)
        XCTAssertTrue(CacheControl("max-age=\"5\"x, no-store").noStore)
        XCTAssertTrue(CacheControl("max-age 5").hasInvalidFreshness)
        XCTAssertNil(CacheControl("max-age=5 6").maxAge)
    }

    func testMembersThatAreNotDirectivesAreSkipped() {
        let directives = CacheControl("=5, \"quoted, no-store\", @, max-age=1, ;")
        XCTAssertEqual(directives, CacheControl("max-age=1"))
    }

    func testDirectivesWithoutArgumentsIgnoreOne() {
        let directives = CacheControl("no-store=1, public=\"yes\", immutable=, must-revalidate=\"unterminated")
        XCTAssertTrue(directives.noStore)
        XCTAssertTrue(directives.isPublic)
        XCTAssertTrue(directives.immutable)
        XCTAssertTrue(directives.mustRevalidate)
    }

    // MARK: Delta-seconds

    func testAHugeNumberIsTwoToTheThirtyFirst() {
        // RFC 9111 §1.2.2
        XCTAssertEqual(CacheControl("max-age=2147483647").maxAge, 2_147_483_647)
        XCTAssertEqual(CacheControl("max-age=2147483648").maxAge, 2_147_483_648)
        XCTAssertEqual(CacheControl("max-age=2147483649").maxAge, 2_147_483_648)
        XCTAssertEqual(CacheControl("max-age=99999999999999999999999999999999999999").maxAge, 2_147_483_648)
        XCTAssertEqual(CacheControl("stale-if-error=" + String(repeating: "9", count: 100_000)).staleIfError, 2_147_483_648)
    }

    func testLeadingZerosAreDigits() {
        XCTAssertEqual(CacheControl("max-age=000000000000000000000000042").maxAge, 42)
    }

    func testAnInvalidLifetimeMakesTheResponseStale() {
        // §4.2.1: caches are encouraged to consider invalid freshness information stale.
        for value in ["max-age=-1", "max-age=abc", "max-age=1.5", "max-age=+5", "max-age=", "max-age", "max-age=\"\"",
                      "max-age=0x10", "max-age=5s", "s-maxage=-0", "s-maxage"] {
            let directives = CacheControl(value)
            XCTAssertTrue(directives.hasInvalidFreshness, value)
            XCTAssertNil(directives.maxAge, value)
            XCTAssertNil(directives.sharedMaxAge, value)
        }
    }

    func testConflictingLifetimesAreInvalidButRepeatsAreNot() {
        // §4.2.1: with several values, use the first or consider the response stale; this takes stale.
        XCTAssertTrue(CacheControl("max-age=60, max-age=3600").hasInvalidFreshness)
        XCTAssertTrue(CacheControl(fieldValues: ["s-maxage=1", "s-maxage=2"]).hasInvalidFreshness)
        XCTAssertTrue(CacheControl("max-age=abc, max-age=5").hasInvalidFreshness)
        XCTAssertTrue(CacheControl("max-age=5, max-age=abc").hasInvalidFreshness)
        let repeated = CacheControl("max-age=60, max-age=\"60\", max-age=060")
        XCTAssertEqual(repeated.maxAge, 60)
        XCTAssertFalse(repeated.hasInvalidFreshness)
        // One invalid lifetime does not hide the other.
        let mixed = CacheControl("max-age=x, s-maxage=5")
        XCTAssertEqual(mixed.sharedMaxAge, 5)
        XCTAssertTrue(mixed.hasInvalidFreshness)
    }

    func testOtherDeltaDirectivesIgnoreInvalidValuesAndKeepTheMostRestrictive() {
        XCTAssertNil(CacheControl("stale-while-revalidate=x").staleWhileRevalidate)
        XCTAssertNil(CacheControl("stale-if-error").staleIfError)
        XCTAssertNil(CacheControl("min-fresh=-3").minFresh)
        XCTAssertFalse(CacheControl("stale-if-error=x, min-fresh=-1").hasInvalidFreshness)
        XCTAssertEqual(CacheControl("stale-while-revalidate=30, stale-while-revalidate=10").staleWhileRevalidate, 10)
        XCTAssertEqual(CacheControl("stale-if-error=5, stale-if-error=x, stale-if-error=9").staleIfError, 5)
        XCTAssertEqual(CacheControl("min-fresh=5, min-fresh=20").minFresh, 20)
    }

    func testMaxStale() {
        XCTAssertEqual(CacheControl("max-stale").maxStale, .any)
        XCTAssertEqual(CacheControl("max-stale=0").maxStale, .seconds(0))
        XCTAssertNil(CacheControl("max-stale=x").maxStale)
        XCTAssertNil(CacheControl("max-stale=").maxStale)
        XCTAssertEqual(CacheControl("max-stale, max-stale=7").maxStale, .seconds(7))
        XCTAssertEqual(CacheControl("max-stale=7, max-stale").maxStale, .seconds(7))
        XCTAssertEqual(CacheControl("max-stale=7, max-stale=3").maxStale, .seconds(3))
        XCTAssertEqual(CacheControl("max-stale=99999999999").maxStale, .seconds(2_147_483_648))
    }

    // MARK: Field lists

    func testNoCacheAndPrivateWithAList() {
        let directives = CacheControl("no-cache=\"Set-Cookie,  ,X-A\", private=Authorization")
        XCTAssertEqual(directives.noCache, .fields(["set-cookie", "x-a"]))
        XCTAssertEqual(directives.privateScope, .fields(["authorization"]))
        XCTAssertEqual(CacheControl("no-cache=\"\"").noCache, .fields([]))
    }

    func testABareOccurrenceOrAMalformedListCoversTheWholeResponse() {
        XCTAssertEqual(CacheControl("no-cache=\"a\", no-cache").noCache, .all)
        XCTAssertEqual(CacheControl("private, private=\"a\"").privateScope, .all)
        XCTAssertEqual(CacheControl("no-cache=\"a b\"").noCache, .all)
        XCTAssertEqual(CacheControl("no-cache=\"a;b\"").noCache, .all)
        XCTAssertEqual(CacheControl("no-cache=").noCache, .all)
        XCTAssertEqual(CacheControl("private=\"a").privateScope, .all)
        XCTAssertEqual(CacheControl("no-cache=\"a\", no-cache=\"B\"").noCache, .fields(["a", "b"]))
    }

    // MARK: Writing back

    func testTheFieldValueParsesBackToTheSameDirectives() {
        let values = ["max-age=60, s-maxage=x, no-cache=\"B, a\", private, max-stale, min-fresh=3, only-if-cached",
                      "max-age=1, max-age=2, no-cache=\"\", stale-while-revalidate=9, stale-if-error=0, max-stale=4",
                      "no-store, no-transform, must-revalidate, proxy-revalidate, must-understand, public, immutable"]
        for value in values {
            let directives = CacheControl(value)
            XCTAssertEqual(CacheControl(directives.fieldValue), directives, value)
        }
        XCTAssertEqual(CacheControl("Max-Age=60, No-Cache=\"B, a\"").fieldValue, "max-age=60, no-cache=\"a, b\"")
        XCTAssertEqual(CacheControl("max-age=1, max-age=2").fieldValue, "max-age=invalid")
    }

    // MARK: Bounds

    func testAHugeFieldValueIsParsedInLinearTime() {
        // Given a few megabytes of directives, commas, quotes and unterminated quotes
        let pieces = [String](repeating: "max-age=5, no-cache=\"a, b\", x=\"y\\\"z\", ,,, ", count: 40_000).joined()
        let unterminated = "private=\"" + String(repeating: "a,", count: 500_000)
        // When they are parsed
        let start = ContinuousClock.now
        let directives = CacheControl(fieldValues: [pieces, unterminated, "no-store"])
        let elapsed = ContinuousClock.now - start
        // Then the result is right and quick
        XCTAssertEqual(directives.maxAge, 5)
        XCTAssertEqual(directives.noCache, .fields(["a", "b"]))
        XCTAssertEqual(directives.privateScope, .all)
        XCTAssertTrue(directives.noStore)
        // The bound separates linear from quadratic, not fast from slow machines: linearly this
        // takes about 0.6 s in a debug build (100 times less than the bound; ThreadSanitizer and a
        // busy core make it 1.3–3 times slower), quadratically these megabytes would take hours.
        XCTAssertLessThan(elapsed, .seconds(60))
    }

    func testBytesThatAreNotUTF8OrASCIIDoNotBreakIt() {
        // A member that starts with a byte outside tchar is skipped; junk after a name is a malformed argument.
        XCTAssertEqual(CacheControl("max-age=5, é=1, no-store\u{0}, \u{1F600}, máx-age=1"), CacheControl("max-age=5, no-store"))
        XCTAssertTrue(CacheControl("max-age=5\u{0}").hasInvalidFreshness)
    }
}
