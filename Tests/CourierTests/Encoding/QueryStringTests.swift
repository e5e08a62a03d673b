import Foundation
import XCTest
@testable import Courier

private struct AB: DefaultQueryString { let a: String; let b: String }
private struct Name: DefaultQueryString { let name: String }
private struct Flag: DefaultQueryString { let flag: Bool; let n: Int? }
private struct Tags: DefaultQueryString { let tags: [String] }
private struct Address: Sendable { let city: String }
private struct User: Sendable { let name: String; let address: Address }
private struct Nested: DefaultQueryString { let user: User }

private struct Search: DefaultQueryString {
    static let encodingOptions = ParameterEncodingOptions(arrayStyle: .repeatedKey, boolStyle: .numeric)
    let tags: [String]
    let exact: Bool
}

private struct LogIn: URLEncodedBodyData { let username: String; let password: String }

private struct PlusForm: URLEncodedBodyData {
    static let encodingOptions = ParameterEncodingOptions(spaceStyle: .plus)
    let q: String
    let p: String
}

class QueryStringTests: XCTestCase {
    func testRequiredExamples() throws {
        // Given the examples of the specification
        // When encoded as query strings
        // Then the output is exactly as specified
        XCTAssertEqual(try AB(a: "x y", b: "&=?").encode(), "a=x%20y&b=%26%3D%3F")
        XCTAssertEqual(try Name(name: "中文").encode(), "name=%E4%B8%AD%E6%96%87")
        XCTAssertEqual(try Flag(flag: true, n: nil).encode(), "flag=true")
    }

    func testEveryReservedCharacterIsEscapedAndUnreservedAreKept() throws {
        // Given a value holding every reserved character, `%`, a space and the unreserved set
        let value = AB(a: ":#[]@!$&'()*+,;=/?% ", b: "AZaz09-._~")

        // When encoded
        let encoded = try value.encode()

        // Then every reserved character is %XX and the unreserved ones are untouched
        XCTAssertEqual(encoded, "a=%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D%2F%3F%25%20&b=AZaz09-._~")
    }

    func testKeysAreEscapedToo() throws {
        // Given a dictionary whose keys hold reserved characters and non-ASCII
        let value = ["a b": "1", "é&=": "2"]

        // When encoded
        // Then keys are percent-encoded like values, sorted by key
        XCTAssertEqual(try query(value), "a%20b=1&%C3%A9%26%3D=2")
    }

    func testNonASCIIIsUTF8PercentEncoded() throws {
        // Given an emoji and an accented letter
        // When encoded
        // Then each UTF-8 byte is escaped
        XCTAssertEqual(try Name(name: "é😀").encode(), "name=%C3%A9%F0%9F%98%80")
    }

    func testNestedValuesUseEscapedBrackets() throws {
        // Given a nested struct
        let value = Nested(user: User(name: "Ada", address: Address(city: "Paris")))

        // When encoded
        // Then the key path is written user[address][city] with escaped brackets
        XCTAssertEqual(try value.encode(), "user%5Bname%5D=Ada&user%5Baddress%5D%5Bcity%5D=Paris")
    }

    func testArrayStyles() throws {
        // Given an array of two values
        let value = Tags(tags: ["a", "b"])

        // When encoded with each array style
        // Then each writes its documented form
        XCTAssertEqual(try value.encode(), "tags%5B%5D=a&tags%5B%5D=b")
        XCTAssertEqual(try query(value, .init(arrayStyle: .brackets)), "tags%5B%5D=a&tags%5B%5D=b")
        XCTAssertEqual(try query(value, .init(arrayStyle: .repeatedKey)), "tags=a&tags=b")
        XCTAssertEqual(try query(value, .init(arrayStyle: .indexed)), "tags%5B0%5D=a&tags%5B1%5D=b")
        XCTAssertEqual(try query(value, .init(arrayStyle: .commaSeparated)), "tags=a,b")
    }

    func testCommaSeparatedEscapesCommasInValues() throws {
        // Given values that contain commas
        // When comma-separated
        // Then the separators are literal and the values' commas escaped
        XCTAssertEqual(try query(Tags(tags: ["a,b", "c"]), .init(arrayStyle: .commaSeparated)), "tags=a%2Cb,c")
    }

    func testEmptyArrayWritesNothing() throws {
        // Given an empty array
        // When encoded
        // Then nothing is written
        XCTAssertEqual(try Tags(tags: []).encode(), "")
    }

    func testArraysOfStructsAndNestedArrays() throws {
        // Given an array of structs and an array of arrays
        struct Item { let id: Int }
        struct Value { let items: [Item]; let grid: [[Int]] }
        let value = Value(items: [Item(id: 1), Item(id: 2)], grid: [[1], [2, 3]])

        // When encoded with brackets and indexes
        // Then each level adds its brackets
        XCTAssertEqual(try query(value), "items%5B%5D%5Bid%5D=1&items%5B%5D%5Bid%5D=2&grid%5B%5D%5B%5D=1&grid%5B%5D%5B%5D=2&grid%5B%5D%5B%5D=3")
        XCTAssertEqual(try query(value, .init(arrayStyle: .indexed)), "items%5B0%5D%5Bid%5D=1&items%5B1%5D%5Bid%5D=2&grid%5B0%5D%5B0%5D=1&grid%5B1%5D%5B0%5D=2&grid%5B1%5D%5B1%5D=3")
    }

    func testBoolStyles() throws {
        // Given true and false
        struct Value { let on: Bool; let off: Bool }
        let value = Value(on: true, off: false)

        // When encoded with each bool style
        // Then they are words or digits
        XCTAssertEqual(try query(value), "on=true&off=false")
        XCTAssertEqual(try query(value, .init(boolStyle: .numeric)), "on=1&off=0")
    }

    func testPerTypeOptions() throws {
        // Given a type with its own encoding options
        // When encoded
        // Then its options apply
        XCTAssertEqual(try Search(tags: ["a", "b"], exact: true).encode(), "tags=a&tags=b&exact=1")
    }

    func testNilIsLeftOutEvenWhenJSONWouldWriteNull() throws {
        // Given nil properties, at the top level, nested and in a dictionary
        struct Inner { let x: String? }
        struct Value { let a: String?; let inner: Inner; let b: Int; let extra: [String: String?] }
        let value = Value(a: nil, inner: Inner(x: nil), b: 1, extra: ["k": nil])

        // When encoded, with nil as null as well
        // Then nothing is written for them
        XCTAssertEqual(try query(value), "b=1")
        XCTAssertEqual(try query(value, .init(nilStyle: .null)), "b=1")
    }

    func testFormBodyAndContentType() throws {
        // Given log-in parameters
        let value = LogIn(username: "ada", password: "p@ss word")

        // When encoded as a form body
        let body = try value.encode()

        // Then the body is the percent-encoded form and the content type says so
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "username=ada&password=p%40ss%20word")
        XCTAssertEqual(value.contentType, "application/x-www-form-urlencoded; charset=utf-8")
    }

    func testPlusForSpaceEscapesLiteralPlus() throws {
        // Given a form that writes spaces as +
        let value = PlusForm(q: "a b", p: "1+1")

        // When encoded
        // Then a space is + and a literal + is %2B
        XCTAssertEqual(String(decoding: try value.encode(), as: UTF8.self), "q=a+b&p=1%2B1")
    }

    func testTopLevelDictionaryIsSortedAndDeterministic() throws {
        // Given a dictionary with many keys
        let value = Dictionary(uniqueKeysWithValues: (0..<50).map { ("k\($0)", $0) })

        // When encoded twice
        let first = try query(value)
        let second = try query(value)

        // Then the keys are sorted and the output identical
        XCTAssertEqual(first, second)
        XCTAssertTrue(first.hasPrefix("k0=0&k1=1&k10=10&k11=11"))
    }

    func testTopLevelScalarThrows() {
        // Given a value with no name
        // When encoded as a query
        // Then it throws, as a query needs keys
        assertInvalidParameters(try query("loose"), keyPath: "", reasonContains: "top-level")
        assertInvalidParameters(try query([1, 2]), keyPath: "[0]", reasonContains: "top-level")
    }

    func testDoublesInForms() throws {
        // Given doubles, including ones printed with an exponent
        struct Value { let a: Double; let b: Double; let c: Double; let d: Double }
        // When encoded
        // Then integral values have no fraction and + in exponents is escaped
        XCTAssertEqual(try query(Value(a: 2, b: 0.5, c: 1e16, d: .infinity)), "a=2&b=0.5&c=1e%2B16&d=inf")
    }
}
