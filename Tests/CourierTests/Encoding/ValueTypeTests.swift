import Foundation
import XCTest
@testable import Courier

private enum Color: String { case red, darkBlue = "dark-blue" }
private enum Level: Int { case low = 1, high = 3 }

private enum Filter: ParameterConvertible {
    case all
    case tag(String)
    var parameterValue: any Sendable {
        switch self {
        case .all: "all"
        case .tag(let name): ["tag": name]
        }
    }
}

private struct Celsius: ParameterConvertible {
    let degrees: Double
    var parameterValue: any Sendable { "\(Int(degrees))C" }
}

class ValueTypeTests: XCTestCase {
    private let date = Date(timeIntervalSince1970: 1_795_341_600)

    func testDateStyles() throws {
        // Given a date on the hour, one with milliseconds and one before 1970
        struct Value { let at: Date }
        // When encoded with each date style
        // Then ISO 8601 has a fraction only when there is one, and epochs are numbers
        XCTAssertEqual(try json(Value(at: date)), #"{"at":"2026-11-22T10:00:00Z"}"#)
        XCTAssertEqual(try json(Value(at: date + 0.25)), #"{"at":"2026-11-22T10:00:00.250Z"}"#)
        XCTAssertEqual(try json(Value(at: Date(timeIntervalSince1970: -14_182_940))), #"{"at":"1969-07-20T20:17:40Z"}"#)
        XCTAssertEqual(try json(Value(at: Date(timeIntervalSince1970: 0))), #"{"at":"1970-01-01T00:00:00Z"}"#)
        XCTAssertEqual(try json(Value(at: date), .init(dateStyle: .secondsSince1970)), #"{"at":1795341600}"#)
        XCTAssertEqual(try json(Value(at: date + 0.5), .init(dateStyle: .secondsSince1970)), #"{"at":1795341600.5}"#)
        XCTAssertEqual(try json(Value(at: date + 0.25), .init(dateStyle: .millisecondsSince1970)), #"{"at":1795341600250}"#)
        XCTAssertEqual(try query(Value(at: date)), "at=2026-11-22T10%3A00%3A00Z")
    }

    func testDateMatchesISO8601DateFormatterOverManyDays() throws {
        // Given dates spread over four centuries since 1600 (before the Gregorian reform of 1582
        // Foundation switches to the Julian calendar, whereas ISO 8601 stays proleptic Gregorian)
        let formatter = ISO8601DateFormatter()
        for day in stride(from: -135_000, to: 150_000, by: 997) {
            let date = Date(timeIntervalSince1970: Double(day) * 86_400 + 3_723)
            // When formatted
            // Then it matches Foundation's formatter
            XCTAssertEqual(iso8601Text(date), formatter.string(from: date))
        }
    }

    func testFoundationValues() throws {
        // Given a URL, a UUID, a Decimal and Data
        struct Value { let url: URL; let id: UUID; let price: Decimal; let blob: Data }
        let value = Value(url: URL(string: "https://example.com/a?b=c")!, id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
                          price: Decimal(string: "12.345")!, blob: Data([0, 1, 2, 255]))

        // When encoded as JSON and as a query
        // Then the URL is its absolute string, the UUID its string, the Decimal a number and Data base64
        XCTAssertEqual(try json(value), #"{"url":"https://example.com/a?b=c","id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","price":12.345,"blob":"AAEC/w=="}"#)
        XCTAssertEqual(try query(value), "url=https%3A%2F%2Fexample.com%2Fa%3Fb%3Dc&id=E621E1F8-C36C-495A-93FC-0C247A3E6E5F&price=12.345&blob=AAEC%2Fw%3D%3D")
    }

    func testEnumsWithRawValues() throws {
        // Given enums with String and Int raw values, alone, optional and in arrays
        struct Value { let color: Color; let level: Level; let maybe: Color?; let colors: [Color] }
        let value = Value(color: .darkBlue, level: .high, maybe: .red, colors: [.red, .darkBlue])

        // When encoded
        // Then their raw values are written
        XCTAssertEqual(try json(value), #"{"color":"dark-blue","level":3,"maybe":"red","colors":["red","dark-blue"]}"#)
        XCTAssertEqual(try query(value), "color=dark-blue&level=3&maybe=red&colors%5B%5D=red&colors%5B%5D=dark-blue")
    }

    func testParameterConvertible() throws {
        // Given values that convert themselves
        struct Value { let filter: Filter; let other: Filter; let temperature: Celsius }
        let value = Value(filter: .all, other: .tag("swift"), temperature: Celsius(degrees: 21))

        // When encoded
        // Then their converted values are written
        XCTAssertEqual(try json(value), #"{"filter":"all","other":{"tag":"swift"},"temperature":"21C"}"#)
        XCTAssertEqual(try query(value), "filter=all&other%5Btag%5D=swift&temperature=21C")
    }

    func testOptionalsOfEveryFastType() throws {
        // Given optional properties of the types read straight from memory, set and nil
        struct Value { let s: String?; let i: Int?; let b: Bool?; let d: Double?; let u: URL? }
        let set = Value(s: "x", i: -1, b: false, d: 0.5, u: URL(string: "a:b"))
        let unset = Value(s: nil, i: nil, b: nil, d: nil, u: nil)

        // When encoded
        // Then set values are written and nil ones left out or null
        XCTAssertEqual(try json(set), #"{"s":"x","i":-1,"b":false,"d":0.5,"u":"a:b"}"#)
        XCTAssertEqual(try json(unset), "{}")
        XCTAssertEqual(try json(unset, .init(nilStyle: .null)), #"{"s":null,"i":null,"b":null,"d":null,"u":null}"#)
    }

    func testNestedOptionalsAndAnyProperties() throws {
        // Given a double optional and a property typed Any
        struct Value { let nested: String??; let any: Any; let anyNil: Any }
        let value = Value(nested: .some(nil), any: 5, anyNil: String?.none as Any)

        // When encoded
        // Then nil inside nil is nil, and Any is encoded by its dynamic type: nil in an Any is a nil property
        XCTAssertEqual(try json(value), #"{"any":5}"#)
        XCTAssertEqual(try json(value, .init(nilStyle: .null)), #"{"nested":null,"any":5,"any_nil":null}"#)
        XCTAssertEqual(try query(value), "any=5")
    }

    func testSubstringCharacterAndCustomCollections() throws {
        // Given a Substring, a Character, an ArraySlice and a ContiguousArray
        struct Value { let sub: Substring; let char: Character; let slice: ArraySlice<Int>; let contiguous: ContiguousArray<String> }
        let value = Value(sub: "hello"[...].dropFirst(), char: "é", slice: [1, 2, 3][1...], contiguous: ["a"])

        // When encoded
        // Then they are strings and arrays
        XCTAssertEqual(try json(value), #"{"sub":"ello","char":"é","slice":[2,3],"contiguous":["a"]}"#)
    }
}
