import Foundation
import XCTest
@testable import Courier

@propertyWrapper
private struct Clamped: Sendable {
    var wrappedValue: Int
}

@propertyWrapper
private struct Box<Value: Sendable>: Sendable {
    var wrappedValue: Value
}

@propertyWrapper
private final class Reference: Sendable {
    let wrappedValue: String
    init(wrappedValue: String) { self.wrappedValue = wrappedValue }
}

@propertyWrapper
private struct Redacted: ParameterConvertible, Sendable {
    private var storage: String
    var wrappedValue: String {
        get { storage }
        set { storage = newValue }
    }
    init(wrappedValue: String) { storage = wrappedValue }
    var parameterValue: any Sendable { "***" }
}

/// A converting wrapper that stores its wrappedValue: its parameterValue must win, or the secret leaks.
@propertyWrapper
private struct StoredRedacted: ParameterConvertible, Sendable {
    var wrappedValue: String
    var parameterValue: any Sendable { "***" }
}

private struct Credentials {
    let user: String
    @StoredRedacted var password: String
}

private struct Wrapped {
    @Clamped var level: Int
    @Box var nickname: String?
    @Box var displayName: String
    @Reference var token: String
    @Redacted var password: String
}

private struct WithLazy {
    let name: String
    lazy var cached: Int = 5
}

private class Animal {
    let name: String
    let legs: Int
    init(name: String, legs: Int) { self.name = name; self.legs = legs }
}

private class Dog: Animal {
    let breed: String
    init(name: String, breed: String) { self.breed = breed; super.init(name: name, legs: 4) }
}

private final class Puppy: Dog {
    let ageInWeeks: Int
    init(name: String) { ageInWeeks = 8; super.init(name: name, breed: "lab") }
}

private final class Target {
    let id = 7
}

private struct WeakHolder {
    let name: String
    weak var weakTarget: Target?
    unowned let unownedTarget: Target
    let strongTarget: Target
}

private struct Account: JSONBodyData, ParameterKeyMapping {
    let id: Int
    let displayName: String
    let passwordHash: String
    static var parameterKeys: [String: ParameterKey] { ["displayName": "Name", "passwordHash": .excluded] }
}

private struct Owner: ParameterKeyMapping {
    let fullName: String
    let secret: String
    static var parameterKeys: [String: ParameterKey] { ["secret": .excluded] }
}

private struct Team: DefaultQueryString { let teamName: String; let owner: Owner }

class ReflectionTests: XCTestCase {
    func testPropertyWrappersEncodeTheirWrappedValueUnderTheirOwnName() throws {
        // Given wrapped properties: stored struct, generic optional, class and a converting wrapper
        let value = Wrapped(level: 3, nickname: nil, displayName: "Ada", token: "t", password: "hunter2")

        // When encoded
        // Then each is written as its wrapped value under the property's name; nil is left out
        XCTAssertEqual(try json(value), #"{"level":3,"display_name":"Ada","token":"t","password":"***"}"#)
    }

    func testAConvertingWrapperThatStoresItsValueIsEncodedAsItsParameterValue() throws {
        // Given a wrapper that stores wrappedValue and adopts ParameterConvertible to redact it
        let value = Credentials(user: "ada", password: "hunter2")

        // When encoded
        // Then its parameterValue is sent, never the stored secret
        XCTAssertEqual(try json(value), #"{"user":"ada","password":"***"}"#)
    }

    func testWeakAndUnownedReferencesAreReadSafely() throws {
        // Given a struct with weak, unowned and strong references to a live object, and a nil weak one
        let target = Target()
        let value = WeakHolder(name: "w", weakTarget: target, unownedTarget: target, strongTarget: target)
        let empty = WeakHolder(name: "e", weakTarget: nil, unownedTarget: target, strongTarget: target)

        // When encoded
        // Then each reference is encoded as its object and the nil one is left out
        XCTAssertEqual(try json(value), #"{"name":"w","weak_target":{"id":7},"unowned_target":{"id":7},"strong_target":{"id":7}}"#)
        XCTAssertEqual(try json(empty), #"{"name":"e","unowned_target":{"id":7},"strong_target":{"id":7}}"#)
        withExtendedLifetime(target) {}
    }

    func testLazyStorageIsSkipped() throws {
        // Given a struct with a lazy property, before and after it is computed
        var value = WithLazy(name: "x")
        let before = try json(value)
        _ = value.cached

        // When encoded
        // Then the lazy storage never appears
        XCTAssertEqual(before, #"{"name":"x"}"#)
        XCTAssertEqual(try json(value), #"{"name":"x"}"#)
    }

    func testClassesEncodeSuperclassPropertiesFirst() throws {
        // Given a three-level class hierarchy
        let puppy = Puppy(name: "Rex")

        // When encoded
        // Then properties come base class first, each in declaration order
        XCTAssertEqual(try json(puppy), #"{"name":"Rex","legs":4,"breed":"lab","age_in_weeks":8}"#)
        XCTAssertEqual(try query(puppy), "name=Rex&legs=4&breed=lab&age_in_weeks=8")
    }

    func testKeyMappingRenamesAndExcludes() throws {
        // Given a type that renames one property and excludes another
        let value = Account(id: 1, displayName: "Ada", passwordHash: "x")

        // When encoded
        // Then the renamed key is used as given and the excluded one is gone
        XCTAssertEqual(String(decoding: try value.encode(), as: UTF8.self), #"{"id":1,"Name":"Ada"}"#)
    }

    func testKeyMappingOfANestedType() throws {
        // Given a nested type with its own mapping
        // When encoded
        // Then the mapping applies inside
        XCTAssertEqual(try Team(teamName: "A", owner: Owner(fullName: "Ada", secret: "s")).encode(), "team_name=A&owner%5Bfull_name%5D=Ada")
    }

    func testOutputIsDeterministicAndLayoutsAreCachedPerKeyStyle() throws {
        // Given the same type encoded many times with two key styles
        struct Value { let firstName: String; let tags: [String: Int] }
        let value = Value(firstName: "Ada", tags: ["z": 1, "a": 2, "m": 3])

        // When encoded repeatedly, alternating styles
        var outputs = Set<String>()
        for index in 0..<20 {
            outputs.insert(try json(value, .init(keyStyle: index.isMultiple(of: 2) ? .snakeCase : .unchanged)))
        }

        // Then each style always gives the same bytes, dictionary keys sorted
        XCTAssertEqual(outputs, [#"{"first_name":"Ada","tags":{"a":2,"m":3,"z":1}}"#, #"{"firstName":"Ada","tags":{"a":2,"m":3,"z":1}}"#])
    }

    func testConcurrentEncodingIsSafe() throws {
        // Given many threads encoding values of fresh types at once
        struct One { let a: Int }
        struct Two { let b: String }
        let results = Results()

        // When encoded concurrently (on the path this test runs on: task-locals stay on their thread)
        let forcesMirror = TypeLayout.forcesMirror
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            TypeLayout.$forcesMirror.withValue(forcesMirror) {
                let text = index.isMultiple(of: 2) ? try? json(One(a: index)) : try? json(Two(b: "\(index)"))
                results.append(text ?? "failed")
            }
        }

        // Then every encoding succeeded
        XCTAssertEqual(results.count, 200)
        XCTAssertFalse(results.contains("failed"))
    }
}

private final class Results: Sendable {
    private let values = Locked<[String]>([])
    func append(_ value: String) { values.withLock { $0.append(value) } }
    var count: Int { values.withLock { $0.count } }
    func contains(_ value: String) -> Bool { values.withLock { $0.contains(value) } }
}
