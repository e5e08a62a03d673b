import XCTest
@testable import Courier

/// Header fields: order, repeated names, lookup by name in any case.
final class HTTPFieldsTests: XCTestCase {
    func testADictionaryLiteralKeepsItsOrder() {
        // Given fields written as a literal, not in name order
        let fields: HTTPFields = ["X-Zeta": "1", "Accept": "application/json", "X-Alpha": "2"]

        // Then they stay in the literal's order
        XCTAssertEqual(fields.map(\.name), ["X-Zeta", "Accept", "X-Alpha"])
        XCTAssertEqual(fields.description, "[X-Zeta: 1, Accept: application/json, X-Alpha: 2]")
    }

    func testRepeatedNamesAreKeptApartAndJoinedByTheSubscript() {
        // Given two lines of one name, in different cases, around another field
        var fields = HTTPFields()
        fields.append("en", for: "Accept-Language")
        fields.append("1", for: "X-Other")
        fields.append("fr;q=0.5", for: "accept-language")

        // Then values(for:) keeps them apart and the subscript joins them, in order
        XCTAssertEqual(fields.values(for: "ACCEPT-LANGUAGE"), ["en", "fr;q=0.5"])
        XCTAssertEqual(fields["Accept-Language"], "en, fr;q=0.5")
        XCTAssertEqual(fields.count, 3)
        XCTAssertTrue(fields.contains("x-other"))
        XCTAssertFalse(fields.contains("X-Missing"))
        XCTAssertNil(fields["X-Missing"])
        XCTAssertEqual(fields.values(for: "X-Missing"), [])
    }

    func testCookieValuesAreJoinedWithSemicolons() {
        let fields: HTTPFields = [HTTPField(name: "Cookie", value: "a=1"), HTTPField(name: "cookie", value: "b=2")]
        XCTAssertEqual(fields["Cookie"], "a=1; b=2")
    }

    func testSettingAValueReplacesEveryFieldOfThatNameWhereTheFirstStood() {
        // Given a name on two lines with a field between them
        var fields: HTTPFields = [HTTPField(name: "A", value: "1"), HTTPField(name: "B", value: "2"), HTTPField(name: "a", value: "3")]

        // When it is set
        fields["a"] = "9"

        // Then one field of that name is left, where the first stood, spelled as it was
        XCTAssertEqual(fields.map(\.description), ["A: 9", "B: 2"])

        // When a new name is set, it goes at the end; nil removes every field of a name
        fields["C"] = "3"
        fields["b"] = nil
        XCTAssertEqual(fields.map(\.description), ["A: 9", "C: 3"])
        fields.removeAll(named: "c")
        XCTAssertEqual(fields.map(\.description), ["A: 9"])
    }

    func testTheDictionaryJoinsRepeatedNamesUnderTheirFirstSpelling() {
        let fields: HTTPFields = [HTTPField(name: "Link", value: "<a>"), HTTPField(name: "LINK", value: "<b>"),
                                  HTTPField(name: "ETag", value: "\"x\"")]
        XCTAssertEqual(fields.dictionary, ["Link": "<a>, <b>", "ETag": "\"x\""])
        let cookies: HTTPFields = [HTTPField(name: "Cookie", value: "a=1"), HTTPField(name: "cookie", value: "b=2")]
        XCTAssertEqual(cookies.dictionary, ["Cookie": "a=1; b=2"], "cookies join with semicolons")
        XCTAssertEqual(HTTPFields(["b": "2", "a": "1"]).map(\.name), ["a", "b"], "a dictionary has no order: sorted by name")
    }

    func testTheDictionaryOfManyFieldsJoinsAsTheDictionaryOfFew() {
        // Given 100 fields of 40 names, the later ones in upper case, past the point where the
        // dictionary stops comparing fields pairwise and indexes them
        XCTAssertLessThan(HTTPFields.linearScanLimit, 100)
        let fields = HTTPFields((0..<100).map { index in
            let name = "x-name-\(index % 40)"
            return HTTPField(name: index < 40 ? name : name.uppercased(), value: "\(index)")
        })

        // Then each name is there once, under its first spelling, its values joined in order
        let dictionary = fields.dictionary
        XCTAssertEqual(dictionary.count, 40)
        XCTAssertEqual(dictionary["x-name-1"], "1, 41, 81")
        XCTAssertEqual(dictionary["x-name-39"], "39, 79")
        XCTAssertNil(dictionary["X-NAME-1"])
    }

    func testEqualityIsByFieldsInOrder() {
        let one: HTTPFields = ["A": "1", "B": "2"]
        XCTAssertEqual(one, ["A": "1", "B": "2"])
        XCTAssertNotEqual(one, ["B": "2", "A": "1"])
        XCTAssertNotEqual(one, ["a": "1", "B": "2"], "the spelling is part of the value; lookups ignore it")
    }

    func testNamesCompareAsASCIIWithoutCase() {
        XCTAssertTrue(HTTPSyntax.namesEqual("Content-Type", "content-TYPE"))
        XCTAssertFalse(HTTPSyntax.namesEqual("Content-Type", "Content-Typ"))
        XCTAssertFalse(HTTPSyntax.namesEqual("X-É", "x-é"), "only ASCII letters fold, as in field names")
        XCTAssertFalse(HTTPSyntax.namesEqual("Set-Cookie", "Connection"), "the same length")
        XCTAssertTrue(HTTPSyntax.namesEqual("xx-Set-Cookie".dropFirst(3), "SET-COOKIE"), "a substring")
        XCTAssertFalse(HTTPSyntax.namesEqual("Content-Length-Is-A-Long-Name-Not-Small", "content-length-is-a-long-name-not-smalL".dropLast()),
                       "lengths differ")
        XCTAssertTrue(HTTPSyntax.namesEqual("Content-Length-Is-A-Long-Name-Not-Small", "content-length-is-a-long-name-not-smalL"),
                      "native strings, not small ones")
    }

    func testTokenBytesAreExactlyRFC9110sTchar() {
        // Given RFC 9110 §5.6.2's tchar: ALPHA, DIGIT and fifteen punctuation bytes
        let tchar = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

        // When every byte is classified
        let tokens = Set((0...255).map(UInt8.init).filter(HTTPSyntax.isTokenByte))

        // Then exactly those are token bytes
        XCTAssertEqual(tokens.count, 77)
        XCTAssertEqual(tokens, tchar)
    }
}
