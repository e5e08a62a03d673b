import Foundation
import XCTest
@testable import Courier

/// A stored response in one array of bytes, as a memory store keeps it until its first read.
final class PackedResponseTests: XCTestCase {
    private func response(url: String = "https://a.test/items?page=2", headers: HTTPFields, body: Data,
                          secondaryKey: [String?] = [], credentialKey: String? = nil) -> StoredResponse {
        StoredResponse(url: url, statusCode: 200, headers: headers, body: body, requestTime: 1_700_000_000.25,
                       responseTime: 1_700_000_000.5, secondaryKey: secondaryKey, credentialKey: credentialKey)
    }

    func testAResponseUnpacksToTheOnePacked() {
        // Given a response with repeated names kept apart, names as they came, an empty value,
        // text that is not ASCII, a body with zero bytes, a secondary key and a credential
        let original = StoredResponse(
            url: "https://a.test/caf%C3%A9?q=1", statusCode: 203,
            headers: [HTTPField(name: "date", value: "Wed, 25 Nov 2026 10:00:00 GMT"),
                      HTTPField(name: "Set-Cookie", value: "a=1"), HTTPField(name: "Set-Cookie", value: "b=2"),
                      HTTPField(name: "X-Empty", value: ""), HTTPField(name: "Content-Disposition", value: "attachment; filename=\"café 😀.txt\"")],
            body: Data([0, 1, 0, 255, 10]), requestTime: 10.5, responseTime: 11.75,
            secondaryKey: ["gzip", nil, ""], credentialKey: "digest")
        // When it is packed and unpacked
        let unpacked = PackedResponse(original).unpacked
        // Then every part is the same, the fields in the same order with the same spelling
        XCTAssertEqual(unpacked, original)
        XCTAssertEqual(unpacked.headers.map(\.description), [
            "date: Wed, 25 Nov 2026 10:00:00 GMT", "Set-Cookie: a=1", "Set-Cookie: b=2", "X-Empty: ",
            "Content-Disposition: attachment; filename=\"café 😀.txt\"",
        ])
        XCTAssertEqual(unpacked.body, Data([0, 1, 0, 255, 10]))
        XCTAssertEqual(unpacked.statusCode, 203)
        XCTAssertEqual(unpacked.requestTime, 10.5)
        XCTAssertEqual(unpacked.responseTime, 11.75)
        XCTAssertEqual(unpacked.secondaryKey, ["gzip", nil, ""])
        XCTAssertEqual(unpacked.credentialKey, "digest")
    }

    func testLengthsOfEverySizeClassRoundTrip() {
        // Given names and values whose lengths take one, two and three bytes to write, at each
        // edge (127/128, 16383/16384) and beyond
        let lengths = [0, 1, 127, 128, 129, 300, 16_383, 16_384, 70_000]
        let fields = HTTPFields(lengths.map { HTTPField(name: "X-\($0)", value: String(repeating: "v", count: $0)) }
            + [HTTPField(name: String(repeating: "N", count: 200), value: "short")])
        let original = response(headers: fields, body: Data(repeating: 7, count: 1000))
        // When it is packed and unpacked
        let unpacked = PackedResponse(original).unpacked
        // Then each length came back
        XCTAssertEqual(unpacked.headers.map(\.value.utf8.count), lengths + [5])
        XCTAssertEqual(unpacked.headers.last?.name.utf8.count, 200)
        XCTAssertTrue(unpacked == original, "the fields or the body differ")
    }

    func testTextsOfEveryFormAndASlicedBodyRoundTrip() {
        // Given texts stored inline (15 bytes and under) and in storage of their own (16 and
        // over), an empty one, one made from a substring, one bridged from NSString, and a body
        // that is a slice of a larger buffer (not starting at its first byte)
        let line = "X-Line: from a head parser's buffer"
        let fromSubstring = String(line[line.index(line.startIndex, offsetBy: 8)...])
        let bridged = NSString(string: "bridged value, longer than fifteen bytes") as String
        let backing = Data((0..<64).map { UInt8($0) })
        let body = backing[7..<40]
        let fields: HTTPFields = [
            HTTPField(name: "Fifteen-Bytes-X", value: "sixteen bytes!!!"),
            HTTPField(name: "E", value: ""),
            HTTPField(name: "X-Line", value: fromSubstring),
            HTTPField(name: "X-Bridged", value: bridged),
        ]
        let original = response(headers: fields, body: body)
        // When it is packed and unpacked
        let unpacked = PackedResponse(original).unpacked
        // Then each text and the body's bytes came back as they were
        XCTAssertEqual(unpacked.headers.map(\.description), [
            "Fifteen-Bytes-X: sixteen bytes!!!", "E: ", "X-Line: from a head parser's buffer",
            "X-Bridged: bridged value, longer than fifteen bytes",
        ])
        XCTAssertEqual(Array(unpacked.body), Array(7..<40).map { UInt8($0) })
        XCTAssertEqual(unpacked, original)
    }

    func testAResponseWithNothingButItsURLRoundTrips() {
        let original = response(url: "", headers: [], body: Data())
        let packed = PackedResponse(original)
        XCTAssertEqual(packed.unpacked, original)
        XCTAssertTrue(packed.hasURL(""))
        XCTAssertFalse(packed.hasURL("h"))
    }

    func testItHasOnlyTheURLItWasStoredFor() {
        // Given a packed response of a URL
        let packed = PackedResponse(response(url: "https://a.test/items?page=2", headers: ["A": "b"], body: Data("x".utf8)))
        // Then only that URL, byte for byte, is its own
        XCTAssertTrue(packed.hasURL("https://a.test/items?page=2"))
        for other in ["https://a.test/items?page=", "https://a.test/items?page=22", "https://a.test/Items?page=2",
                      "", "https://a.test/items?page=3"] {
            XCTAssertFalse(packed.hasURL(other), other)
        }
        // And a URL made from other storage (a substring, bridged text) compares the same way
        let long = "xx https://a.test/items?page=2"
        XCTAssertTrue(packed.hasURL(String(long.dropFirst(3))))
        XCTAssertTrue(packed.hasURL(NSString(string: "https://a.test/items?page=2") as String))
    }

    func testWhatAStoreReadsOfTheFieldsIsNotPacked() {
        // Given a response whose fields were read
        var original = response(headers: ["Cache-Control": "max-age=60"], body: Data())
        original.rememberParsedFields(now: 1_700_000_001)
        XCTAssertNotNil(original.freshnessBasis)
        // When it is packed and unpacked
        let unpacked = PackedResponse(original).unpacked
        // Then it is equal, without the basis: the store reads it again on the first use
        XCTAssertEqual(unpacked, original)
        XCTAssertNil(unpacked.freshnessBasis)
    }

    func testThePackingCountsTheCostOfTheResponseAsRead() {
        // Given responses with and without fields, long fields, a secondary key and a credential
        let responses = [
            response(url: "", headers: [], body: Data()),
            response(headers: ["Cache-Control": "max-age=60", "ETag": "\"a\""], body: Data(repeating: 1, count: 300)),
            response(headers: [HTTPField(name: "X-Long", value: String(repeating: "é", count: 200))], body: Data("x".utf8),
                     secondaryKey: ["gzip", nil], credentialKey: "a1:0123456789abcdef"),
        ]
        for original in responses {
            // When each is packed
            let packed = PackedResponse(original)
            // Then the cost counted while packing is that of the response (and of it made again)
            XCTAssertEqual(packed.cost, original.cost)
            XCTAssertEqual(packed.cost, packed.unpacked.cost)
        }
        // And the cost is the documented estimate: body, the URL twice, 496, each field's text and 64
        let one = response(url: "https://a.test/", headers: ["Age": "1"], body: Data(count: 10), secondaryKey: ["v"],
                           credentialKey: "k")
        XCTAssertEqual(PackedResponse(one).cost, 10 + 2 * 15 + 496 + (3 + 1 + 64) + (1 + 16) + 1)
    }
}
