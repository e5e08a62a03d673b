import Foundation
import XCTest
@testable import Courier

/// HTTP dates as RFC 9110 §5.6.7 defines them.
final class HTTPDateTests: XCTestCase {
    /// 1994-11-06T08:49:37Z, the RFC's example.
    private let example: Int64 = 784_111_777
    /// 2026-06-01T00:00:00Z, a fixed "now" for the two-digit years.
    private let now = Date(timeIntervalSince1970: 1_780_272_000)

    // MARK: The three forms

    func testTheRFCExamplesAreTheSameInstant() {
        // Given the three forms of the RFC's example
        // When they are parsed
        // Then each is 1994-11-06T08:49:37Z
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: now), example)
        XCTAssertEqual(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: now), example)
        XCTAssertEqual(HTTPDate.parse("Sun Nov  6 08:49:37 1994", now: now), example)
        XCTAssertEqual(HTTPDate.date(from: "Sun, 06 Nov 1994 08:49:37 GMT"), Date(timeIntervalSince1970: 784_111_777))
    }

    func testTheEpochAndItsNeighbours() {
        XCTAssertEqual(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT"), 0)
        XCTAssertEqual(HTTPDate.parse("Wed, 31 Dec 1969 23:59:59 GMT"), -1)
        XCTAssertEqual(HTTPDate.parse("Tue, 19 Jan 2038 03:14:08 GMT"), 2_147_483_648)
        XCTAssertEqual(HTTPDate.parse("Fri, 31 Dec 9999 23:59:59 GMT"), 253_402_300_799)
        XCTAssertEqual(HTTPDate.parse("Sat, 01 Jan 0000 00:00:00 GMT"), -62_167_219_200)
    }

    func testAsctimeTakesTwoDigitDaysToo() {
        XCTAssertEqual(HTTPDate.parse("Sun Nov 06 08:49:37 1994"), example)
        XCTAssertEqual(HTTPDate.parse("Thu Jan 29 00:00:00 1970"), 28 * 86_400)
        XCTAssertNil(HTTPDate.parse("Sun Nov 6 08:49:37 1994"))
        XCTAssertNil(HTTPDate.parse("Sun Nov   6 08:49:37 1994"))
    }

    func testNamesAreCaseInsensitiveAndTheWeekdayIsNotChecked() {
        XCTAssertEqual(HTTPDate.parse("sun, 06 nov 1994 08:49:37 gmt"), example)
        XCTAssertEqual(HTTPDate.parse("SUNDAY, 06-NOV-94 08:49:37 GMT", now: now), example)
        XCTAssertEqual(HTTPDate.parse("Mon, 06 Nov 1994 08:49:37 GMT"), example)
    }

    func testWhitespaceAroundTheValueIsIgnored() {
        XCTAssertEqual(HTTPDate.parse(" \tSun, 06 Nov 1994 08:49:37 GMT \t"), example)
    }

    // MARK: Two-digit years

    func testATwoDigitYearIsAtMostFiftyYearsAhead() {
        // Given "now" in 2026
        func year(_ twoDigits: String) -> Int? {
            HTTPDate.parse("Monday, 01-Jan-\(twoDigits) 00:00:00 GMT", now: now).map {
                HTTPDate.civil(daysSince1970: $0 / 86_400).year
            }
        }
        // Then 26…76 are this century and 77…99 the last one
        XCTAssertEqual(year("00"), 2000)
        XCTAssertEqual(year("26"), 2026)
        XCTAssertEqual(year("76"), 2076)
        XCTAssertEqual(year("77"), 1977)
        XCTAssertEqual(year("94"), 1994)
        XCTAssertEqual(year("99"), 1999)
    }

    func testTheCenturyFollowsNow() {
        XCTAssertEqual(HTTPDate.fullYear(1, now: Date(timeIntervalSince1970: 4_070_908_800)), 2101)  // now in 2099
        XCTAssertEqual(HTTPDate.fullYear(60, now: Date(timeIntervalSince1970: 0)), 1960)
        XCTAssertEqual(HTTPDate.fullYear(20, now: Date(timeIntervalSince1970: 0)), 2020)
        XCTAssertEqual(HTTPDate.fullYear(21, now: Date(timeIntervalSince1970: 0)), 1921)
    }

    // MARK: Invalid dates

    func testDaysMustExistInTheirMonth() {
        XCTAssertNotNil(HTTPDate.parse("Thu, 29 Feb 2024 00:00:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Wed, 29 Feb 2023 00:00:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Thu, 29 Feb 1900 00:00:00 GMT"))
        XCTAssertNotNil(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Fri, 31 Apr 2026 00:00:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 00 Nov 1994 08:49:37 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 32 Jan 1994 08:49:37 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun Feb 30 08:49:37 1994"))
        XCTAssertNil(HTTPDate.parse("Sunday, 31-Jun-94 08:49:37 GMT"))
    }

    func testTimesMustBeInRangeAndALeapSecondIsTheNextSecond() {
        XCTAssertNil(HTTPDate.parse("Sun, 06 Nov 1994 24:00:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 06 Nov 1994 08:60:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 06 Nov 1994 08:49:61 GMT"))
        XCTAssertEqual(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT"), HTTPDate.parse("Sun, 01 Jan 2017 00:00:00 GMT"))
    }

    func testMalformedDatesAreNil() {
        let values = [
            "", " ", "GMT", "0", "784111777", "-1",
            "Sun, 6 Nov 1994 08:49:37 GMT",          // one-digit day
            "Sun, 06 Nov 94 08:49:37 GMT",           // two-digit year in IMF-fixdate
            "Sun, 06 Nov 1994 08:49:37 UTC",         // not GMT
            "Sun, 06 Nov 1994 08:49:37 +0000",
            "Sun, 06 Nov 1994 08:49:37",             // no zone
            "Sun, 06 Nov 1994 8:49:37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT x",
            "Sun,  06 Nov 1994 08:49:37 GMT",        // two spaces
            "Sun, 06-Nov-1994 08:49:37 GMT",
            "Sun, 06 November 1994 08:49:37 GMT",
            "Foo, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nox 1994 08:49:37 GMT",
            "Sun 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT",           // RFC 850 needs the long day name
            "Sunday, 06-Nov-94 08:49:37",
            "Sunday, 06-Nov-094 08:49:37 GMT",
            "Sun Nov  6 08:49:37 94",
            "Sun Nov  6 08:49:37 1994 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT\u{0}",
            "Sun, 06 Nov 1994 08:49:37 GMT\n",
            "Sun, ０6 Nov 1994 08:49:37 GMT",          // a fullwidth digit
            "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: " x", count: 100_000),
            String(repeating: "Sun, ", count: 100_000),
        ]
        for value in values {
            XCTAssertNil(HTTPDate.parse(value, now: now), value.prefix(60).debugDescription)
        }
    }

    // MARK: Formatting

    func testFormattingWritesAnIMFFixdate() {
        XCTAssertEqual(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777.999)), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(HTTPDate.format(Date(timeIntervalSince1970: -0.5)), "Wed, 31 Dec 1969 23:59:59 GMT")
        XCTAssertEqual(HTTPDate.format(secondsSince1970: 0), "Thu, 01 Jan 1970 00:00:00 GMT")
        XCTAssertEqual(HTTPDate.format(secondsSince1970: 951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    func testFormattingClampsToFourDigitYears() {
        XCTAssertEqual(HTTPDate.format(.distantFuture), "Mon, 01 Jan 4001 00:00:00 GMT")
        XCTAssertEqual(HTTPDate.format(Date(timeIntervalSince1970: 1e300)), "Fri, 31 Dec 9999 23:59:59 GMT")
        XCTAssertEqual(HTTPDate.format(Date(timeIntervalSince1970: .infinity)), "Fri, 31 Dec 9999 23:59:59 GMT")
        XCTAssertEqual(HTTPDate.format(Date(timeIntervalSince1970: -.infinity)), "Sat, 01 Jan 0000 00:00:00 GMT")
        XCTAssertEqual(HTTPDate.format(Date(timeIntervalSince1970: .nan)), "Thu, 01 Jan 1970 00:00:00 GMT")
        XCTAssertEqual(HTTPDate.format(secondsSince1970: .min), "Sat, 01 Jan 0000 00:00:00 GMT")
        XCTAssertEqual(HTTPDate.format(secondsSince1970: .max), "Fri, 31 Dec 9999 23:59:59 GMT")
    }

    func testFormattedDatesParseBackAndAgreeWithFoundation() {
        // Given seeded random instants over years 0…9999 and around now
        var generator = SplitMix(seed: 0xDA7E)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        for index in 0..<20_000 {
            let seconds = index.isMultiple(of: 2)
                ? Int64(bitPattern: generator.next()) % (HTTPDate.latest + 1)
                : 1_700_000_000 + Int64(generator.next() % 2_000_000_000)
            let clamped = max(seconds, HTTPDate.earliest)
            // When one is formatted and parsed back
            let text = HTTPDate.format(secondsSince1970: clamped)
            // Then it is itself, and Foundation's Gregorian calendar names the same day
            XCTAssertEqual(HTTPDate.parse(text), clamped, text)
            if clamped >= -12_000_000_000 {  // Foundation's Gregorian calendar is Julian before October 1582
                let components = calendar.dateComponents([.year, .month, .day, .weekday],
                                                         from: Date(timeIntervalSince1970: TimeInterval(clamped)))
                let (year, month, day) = HTTPDate.civil(daysSince1970: clamped >= 0 ? clamped / 86_400 : (clamped - 86_399) / 86_400)
                XCTAssertEqual([components.year, components.month, components.day], [year, month, day], text)
                XCTAssertTrue(text.hasPrefix(["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][components.weekday! - 1]), text)
            }
        }
    }
}

/// A small seeded generator, so failures can be replayed.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
