import Foundation
import XCTest
@testable import Courier

private struct Address: Sendable { let city: String; let zip: String? }
private struct ProfileUpdate: JSONBodyData {
    let displayName: String
    let avatar: URL?
    let address: Address
}

private struct NullProfile: JSONBodyData {
    static let encodingOptions = ParameterEncodingOptions(nilStyle: .null)
    let displayName: String
    let avatar: URL?
}

private struct QueryAndBody: DefaultQueryString, JSONBodyData {
    let pageSize: Int
}

private final class ClassBody: JSONBodyData {
    let title: String
    init(title: String) { self.title = title }
}

class JSONEncodingTests: XCTestCase {
    func testOneTypeCanBeBothAQueryAndAJSONBody() throws {
        // Given a type adopting both protocols
        let value = QueryAndBody(pageSize: 20)

        // When encoded as each
        let queryText: String = try value.encode()
        let body: Data = try value.encode()

        // Then each protocol gets its own encoding
        XCTAssertEqual(queryText, "page_size=20")
        XCTAssertEqual(String(decoding: body, as: UTF8.self), #"{"page_size":20}"#)
    }

    func testFinalClassAsParameters() throws {
        // Given parameters that are a final class
        // When encoded
        // Then its properties are an object
        XCTAssertEqual(String(decoding: try ClassBody(title: "t").encode(), as: UTF8.self), #"{"title":"t"}"#)
    }

    func testNestedStructIsAnObjectAndNilIsLeftOut() throws {
        // Given a profile update without avatar
        let value = ProfileUpdate(displayName: "Ada", avatar: nil, address: Address(city: "Paris", zip: nil))

        // When encoded as JSON
        let body = try value.encode()

        // Then nested structs are objects and nil properties are left out
        XCTAssertEqual(String(decoding: body, as: UTF8.self), #"{"display_name":"Ada","address":{"city":"Paris"}}"#)
        XCTAssertEqual(value.contentType, "application/json")
    }

    func testNilAsNull() throws {
        // Given options that ask for null
        // When a nil property is encoded
        // Then it is written null
        XCTAssertEqual(String(decoding: try NullProfile(displayName: "Ada", avatar: nil).encode(), as: UTF8.self), #"{"display_name":"Ada","avatar":null}"#)
    }

    func testNilElementsOfArraysAreAlwaysNull() throws {
        // Given an array with a nil element
        // When encoded
        // Then the element is null so that positions are kept
        XCTAssertEqual(try json(["a": [1, nil, 3] as [Int?]]), #"{"a":[1,null,3]}"#)
    }

    func testStringEscaping() throws {
        // Given a string with quotes, backslashes, every kind of control character, slash and non-ASCII
        let text = "q\"b\\n\nr\rt\tb\u{08}f\u{0C}z\u{00}o\u{01}u\u{1F}/é😀"

        // When encoded
        // Then specials use short escapes, other controls \u00XX, and the rest stays UTF-8
        XCTAssertEqual(try json(["s": text]), #"{"s":"q\"b\\n\nr\rt\tb\bf\fz\u0000o\u0001u\u001f/é😀"}"#)
        XCTAssertEqual((try jsonObject(["s": text]) as? [String: String])?["s"], text)
    }

    func testEveryControlCharacterRoundTrips() throws {
        // Given all of U+0000–U+001F and DEL
        let text = String(String.UnicodeScalarView((0...0x1F).compactMap(Unicode.Scalar.init) + ["\u{7F}"]))

        // When encoded and parsed back
        let parsed = try jsonObject(["s": text]) as? [String: String]

        // Then the string is unchanged
        XCTAssertEqual(parsed?["s"], text)
    }

    func testControlCharactersAreEscapedWithLowercaseHex() throws {
        // Given the controls whose escapes hold hex letters, and DEL, which JSON does not escape
        let text = "\u{0B}\u{0E}\u{1A}\u{1B}\u{1C}\u{1D}\u{1E}\u{1F}\u{7F}"

        // When encoded
        // Then each control is \u00XX with lowercase hex digits and DEL stays as it is
        XCTAssertEqual(try json(["s": text]), "{\"s\":\"\\u000b\\u000e\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\u{7F}\"}")
    }

    func testIntegerExtremes() throws {
        // Given the extremes of every integer width
        struct Value {
            let int64Min: Int64, int64Max: Int64, uint64Max: UInt64
            let int8: Int8, int16: Int16, int32: Int32, uint8: UInt8, uint16: UInt16, uint32: UInt32, uint: UInt, int: Int
        }
        let value = Value(int64Min: .min, int64Max: .max, uint64Max: .max, int8: .min, int16: .min, int32: .min,
                          uint8: .max, uint16: .max, uint32: .max, uint: .max, int: .min)

        // When encoded
        // Then every digit is exact
        XCTAssertEqual(try json(value, .init(keyStyle: .unchanged)),
                       #"{"int64Min":-9223372036854775808,"int64Max":9223372036854775807,"uint64Max":18446744073709551615,"# +
                       #""int8":-128,"int16":-32768,"int32":-2147483648,"uint8":255,"uint16":65535,"uint32":4294967295,"# +
                       #""uint":18446744073709551615,"int":-9223372036854775808}"#)
    }

    func testDoublesAreShortestAndRoundTrip() throws {
        // Given doubles that are integral, fractional, tiny, huge and negative zero
        let doubles: [Double] = [1, 0.1, -2.5, 1e16, 1.5e-7, .pi, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -0.0, 123456789.123]

        // When encoded
        let text = try json(["d": doubles])

        // Then each is the shortest text and reads back to the same number
        XCTAssertEqual(text, #"{"d":[1,0.1,-2.5,1e+16,1.5e-07,3.141592653589793,1.7976931348623157e+308,5e-324,-0,123456789.123]}"#)
        let parsed = try XCTUnwrap((try jsonObject(["d": doubles]) as? [String: [NSNumber]])?["d"])
        XCTAssertEqual(parsed.map(\.doubleValue), doubles)
    }

    func testFloatIsShortestForItsPrecision() throws {
        // Given Float values
        // When encoded
        // Then they are written with Float's shortest digits, not Double's
        XCTAssertEqual(try json(["f": [Float(0.1), 3, 1e10] as [Float]]), #"{"f":[0.1,3,1e+10]}"#)
    }

    func testRoundTripThroughJSONSerialization() throws {
        // Given a value with every JSON shape
        struct Child { let name: String; let age: Int }
        struct Value { let title: String; let count: Int; let ratio: Double; let ok: Bool; let children: [Child]; let meta: [String: [Int]] }
        let value = Value(title: "Ünïcødé \"q\"", count: -3, ratio: 0.25, ok: false,
                          children: [Child(name: "a", age: 1), Child(name: "b", age: 2)], meta: ["x": [1, 2], "a": []])

        // When encoded and parsed back
        let parsed = try XCTUnwrap(try jsonObject(value) as? NSDictionary)

        // Then it equals the expected object
        let expected: NSDictionary = [
            "title": "Ünïcødé \"q\"", "count": -3, "ratio": 0.25, "ok": false,
            "children": [["name": "a", "age": 1], ["name": "b", "age": 2]], "meta": ["x": [1, 2], "a": [Int]()],
        ]
        XCTAssertEqual(parsed, expected)
    }

    func testEmptyContainers() throws {
        // Given an empty struct, array and dictionary
        struct Empty {}
        struct Value { let e: Empty; let a: [Int]; let d: [String: Int] }
        // When encoded
        // Then they are {} and []
        XCTAssertEqual(try json(Value(e: Empty(), a: [], d: [:])), #"{"e":{},"a":[],"d":{}}"#)
    }
}
