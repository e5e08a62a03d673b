import Foundation
import XCTest
@testable import Courier

private final class Person {
    let name: String
    var friends: [Person] = []
    var pet: Pet?
    init(name: String) { self.name = name }
}

private final class Pet {
    weak var weakOwner: Person?
    var owner: Person?
}

private final class Node {
    var child: Node?
}

private enum Mode { case fast, slow }

private struct Misnamed: ParameterKeyMapping {
    let name: String
    static var parameterKeys: [String: ParameterKey] { ["nmae": "n"] }
}

class EncodingErrorTests: XCTestCase {
    func testClosureThrowsWithItsKeyPath() {
        // Given a struct holding a closure
        struct Value { let name = "x"; let callback: () -> Void }
        let value = Value(callback: {})

        // When encoded in any format
        // Then it throws naming the property
        assertInvalidParameters(try json(value), keyPath: "callback", reasonContains: "cannot be encoded")
        assertInvalidParameters(try query(value), keyPath: "callback", reasonContains: "cannot be encoded")
    }

    func testReferenceCycleThrowsWithTheFullKeyPath() {
        // Given a person whose third friend's pet owns the person again
        struct Root { let user: Person }
        let user = Person(name: "Ada")
        user.friends = [Person(name: "a"), Person(name: "b"), Person(name: "c")]
        let pet = Pet()
        pet.owner = user
        user.friends[2].pet = pet

        // When encoded
        // Then the cycle is reported where it closes, not as a stack overflow
        assertInvalidParameters(try json(Root(user: user)), keyPath: "user.friends[2].pet.owner", reasonContains: "reference cycle")
        assertInvalidParameters(try query(Root(user: user)), keyPath: "user.friends[2].pet.owner", reasonContains: "reference cycle")
        pet.owner = nil
    }

    func testSharedReferenceThatIsNotACycleIsEncodedTwice() throws {
        // Given the same object twice, side by side
        struct Value { let a: Node; let b: Node }
        let node = Node()

        // When encoded
        // Then both copies are written
        XCTAssertEqual(try json(Value(a: node, b: node)), #"{"a":{},"b":{}}"#)
    }

    func testNaNAndInfinityThrowInJSON() {
        // Given NaN and infinity, as properties and array elements
        struct Value { let score: Double }
        struct Values { let values: [Double]; let f: Float }

        // When encoded as JSON
        // Then it throws naming the place
        assertInvalidParameters(try json(Value(score: .nan)), keyPath: "score", reasonContains: "NaN")
        assertInvalidParameters(try json(Values(values: [1, -.infinity], f: 0)), keyPath: "values[1]", reasonContains: "JSON")
        assertInvalidParameters(try json(Values(values: [], f: .nan)), keyPath: "f", reasonContains: "JSON")
    }

    func testNestingDeeperThanTheLimitThrows() {
        // Given a chain of 100 objects and an array nested 100 deep
        let root = Node()
        var last = root
        for _ in 0..<99 { let next = Node(); last.child = next; last = next }
        var array: Any = 1
        for _ in 0..<100 { array = [array] }

        // When encoded
        // Then it throws at the limit instead of overflowing the stack
        let expectedPath = Array(repeating: "child", count: 64).joined(separator: ".")
        assertInvalidParameters(try json(root), keyPath: expectedPath, reasonContains: "deeper than 64")
        assertInvalidParameters(try json(["a": array]), keyPath: #"["a"]"# + String(repeating: "[0]", count: 63), reasonContains: "deeper than 64")
    }

    func testNestingAtTheLimitIsFine() throws {
        // Given exactly 64 nested containers
        var array: Any = 1
        for _ in 0..<63 { array = [array] }

        // When encoded with the dictionary around them
        // Then it succeeds
        XCTAssertEqual(try json(["a": array]), #"{"a":"# + String(repeating: "[", count: 63) + "1" + String(repeating: "]", count: 63) + "}")
    }

    func testNonStringDictionaryKeysThrow() {
        // Given a dictionary keyed by Int
        struct Value { let lookup: [Int: String] }
        // When encoded
        // Then it throws
        assertInvalidParameters(try json(Value(lookup: [1: "a"])), keyPath: "lookup", reasonContains: "keys must be String")
    }

    func testEnumWithoutRawValueSetAndTupleThrow() {
        // Given an enum without raw value, a set and a tuple
        struct Value { let mode: Mode }
        struct Sets { let ids: Set<Int> }
        struct Tuples { let point: (Int, Int) }
        // When encoded
        // Then each throws with advice
        assertInvalidParameters(try json(Value(mode: .fast)), keyPath: "mode", reasonContains: "ParameterConvertible")
        assertInvalidParameters(try json(Sets(ids: [1])), keyPath: "ids", reasonContains: "sorted array")
        assertInvalidParameters(try json(Tuples(point: (1, 2))), keyPath: "point", reasonContains: "tuple")
    }

    func testErrorInsideADictionaryNamesTheKey() {
        // Given a dictionary holding a closure
        struct Value { let extras: [String: Any] }
        // When encoded
        // Then the dictionary key is part of the path
        assertInvalidParameters(try json(Value(extras: ["ok": 1, "bad": { () in }])), keyPath: #"extras["bad"]"#, reasonContains: "cannot be encoded")
    }

    func testKeyMappingNamingAMissingPropertyThrows() {
        // Given a mapping with a typo
        // When encoded
        // Then it throws rather than silently encoding the wrong key
        assertInvalidParameters(try json(Misnamed(name: "x")), keyPath: "", reasonContains: "`nmae`, which is not a stored property")
    }

    func testTwoPropertiesWithTheSameKeyThrow() {
        // Given two properties that both become user_id
        struct Value { let userID: Int; let user_id: Int }
        // When encoded
        // Then it throws instead of writing a duplicate key
        assertInvalidParameters(try json(Value(userID: 1, user_id: 2)), keyPath: "user_id", reasonContains: "both encoded as \"user_id\"")
    }

    func testThrowingConverterReportsItsError() {
        // Given a converter that throws
        struct Failing: ParameterConvertible {
            struct Oops: Error {}
            var parameterValue: any Sendable { get throws { throw Oops() } }
        }
        struct Value { let x: Failing }
        // When encoded
        // Then its error becomes the reason
        assertInvalidParameters(try json(Value(x: Failing())), keyPath: "x", reasonContains: "Oops")
    }

    func testDateOutOfRangeThrows() {
        // Given a date far beyond the year 9999
        struct Value { let at: Date }
        // When written as ISO 8601
        // Then it throws
        assertInvalidParameters(try json(Value(at: Date(timeIntervalSince1970: 1e15))), keyPath: "at", reasonContains: "ISO 8601")
    }

    func testCommaSeparatedArrayOfStructsThrows() {
        // Given an array of structs and the comma-separated style
        struct Item { let id: Int }
        struct Value { let items: [Item] }
        // When encoded
        // Then it throws, as commas cannot hold structure
        assertInvalidParameters(try query(Value(items: [Item(id: 1)]), .init(arrayStyle: .commaSeparated)), keyPath: "items[0]", reasonContains: "single values")
    }
}
