import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// `Vary` (RFC 9110 §12.5.5) and the secondary keys of RFC 9111 §4.1.
final class VaryTests: XCTestCase {
    // MARK: Parsing

    func testNamesAreLowercasedDeduplicatedAndSorted() {
        // Given field names in mixed case, repeated, over two field values
        let vary = Vary(fieldValues: ["Accept-Encoding, User-Agent", "accept-encoding,Accept-Language"])
        // Then they are one sorted list of lowercased names
        XCTAssertEqual(vary, .fields(["accept-encoding", "accept-language", "user-agent"]))
        XCTAssertEqual(vary.fieldValue, "accept-encoding, accept-language, user-agent")
    }

    func testAStarAnywhereIsEverything() {
        XCTAssertEqual(Vary("*"), .everything)
        XCTAssertEqual(Vary(" * "), .everything)
        XCTAssertEqual(Vary("Accept, *"), .everything)
        XCTAssertEqual(Vary(fieldValues: ["Accept", "*"]), .everything)
        XCTAssertEqual(Vary.everything.fieldValue, "*")
    }

    func testEmptyMembersAndValuesAreNothing() {
        XCTAssertEqual(Vary(""), .fields([]))
        XCTAssertEqual(Vary(fieldValues: []), .fields([]))
        XCTAssertEqual(Vary(" ,, \t, "), .fields([]))
        XCTAssertEqual(Vary(",Accept,,"), .fields(["accept"]))
    }

    func testAMemberThatIsNotAFieldNameIsEverything() {
        XCTAssertEqual(Vary("Accept Encoding"), .everything)
        XCTAssertEqual(Vary("\"Accept\""), .everything)
        XCTAssertEqual(Vary("Accept;q=1"), .everything)
        XCTAssertEqual(Vary("Accépt"), .everything)
        XCTAssertEqual(Vary("**"), .fields(["**"]))  // a token, though no field has that name
    }

    // MARK: Secondary keys

    func testTheKeyHoldsEachNamedFieldInOrder() {
        // Given a response that varies on two fields and a request with other fields too
        let vary = Vary("Accept-Language, Accept-Encoding")
        let headers = ["Accept-Encoding": "gzip", "accept-language": "en", "Authorization": "secret"]
        // Then the key is their values, in the sorted order of the names
        XCTAssertEqual(vary.secondaryKey(for: headers), ["gzip", "en"])
    }

    func testAbsentAndEmptyDiffer() {
        let vary = Vary("X-A")
        XCTAssertEqual(vary.secondaryKey(for: [:]), [nil])
        XCTAssertEqual(vary.secondaryKey(for: ["X-A": ""]), [""])
        XCTAssertEqual(vary.secondaryKey(for: ["X-A": "  "]), [""])
        XCTAssertFalse(vary.matches([nil], headers: ["X-A": ""]))
        XCTAssertTrue(vary.matches([nil], headers: ["X-B": "1"]))
    }

    func testEverythingHasNoKeyAndMatchesNothing() {
        XCTAssertNil(Vary.everything.secondaryKey(for: [:]))
        XCTAssertFalse(Vary.everything.matches([], headers: [:]))
    }

    func testNoNamesMatchesEveryRequest() {
        XCTAssertEqual(Vary("").secondaryKey(for: ["Accept": "x"]), [])
        XCTAssertTrue(Vary("").matches([], headers: ["Accept": "y"]))
    }

    func testWhitespaceAtTheEndsAndAroundCommasIsIgnored() {
        // §4.1: adding or removing whitespace where the syntax allows it
        let vary = Vary("Accept-Encoding")
        let stored = vary.secondaryKey(for: ["Accept-Encoding": "gzip, br"])!
        XCTAssertEqual(stored, ["gzip,br"])
        for value in ["gzip,br", " gzip ,\tbr\t", "gzip ,br", "gzip,  br  "] {
            XCTAssertTrue(vary.matches(stored, headers: ["accept-encoding": value]), value)
        }
        for value in ["br, gzip", "gzip br", "GZIP, br", "gzip, br,", "gzip"] {
            XCTAssertFalse(vary.matches(stored, headers: ["accept-encoding": value]), value)
        }
    }

    func testWhitespaceInsideValuesAndQuotedStringsIsKept() {
        XCTAssertEqual(Vary.normalized("Mozilla/5.0  (X11)"), "Mozilla/5.0  (X11)")
        XCTAssertEqual(Vary.normalized("a; q=\" x , y \" , b"), "a; q=\" x , y \",b")
        XCTAssertEqual(Vary.normalized("\"unterminated ,  x"), "\"unterminated ,  x")
        XCTAssertEqual(Vary.normalized("\"a\\\" , b\" , c"), "\"a\\\" , b\",c")
        XCTAssertEqual(Vary.normalized(" \t "), "")
        XCTAssertEqual(Vary.normalized(",, ,"), ",,,")
    }

    func testNormalisingTwiceChangesNothing() {
        for value in ["a , b", " \"x , y\" ,z ", "a  b ,  c", "\"", "\\\", x"] {
            let once = Vary.normalized(value)
            XCTAssertEqual(Vary.normalized(once), once, value)
        }
    }

    func testNamesDifferingInCaseAreCombined() {
        // Given a dictionary whose keys differ only in case (two header lines)
        let headers = ["Accept": "text/html", "accept": "application/json"]
        // Then their values are combined with ", " in the byte order of the names
        XCTAssertEqual(Vary("Accept").secondaryKey(for: headers), ["text/html,application/json"])
    }

    func testAURLRequestsHeadersGiveItsKey() {
        // Given a URLRequest with a header added twice and one set in another case
        var request = URLRequest(url: URL(string: "https://example.com/")!)
        request.addValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        request.addValue("br", forHTTPHeaderField: "accept-encoding")
        request.setValue("en", forHTTPHeaderField: "ACCEPT-LANGUAGE")
        // When its key is computed from allHTTPHeaderFields
        let key = Vary("Accept-Encoding, Accept-Language, Cookie").secondaryKey(for: request.allHTTPHeaderFields ?? [:])
        // Then Foundation's combined lines and the other names are found, and Cookie is absent
        XCTAssertEqual(key, ["gzip,br", "en", nil])
    }
}
