import XCTest
@testable import Courier

// Every encoder test class again, on the Mirror path: each subclass runs all the tests it
// inherits with `TypeLayout.forcesMirror` set, so the fast path and the reference path answer
// the same questions and cannot disagree unnoticed.

/// Runs `body` with every struct and class read through `Mirror`.
func onMirrorPath<Result>(_ body: () throws -> Result) rethrows -> Result {
    try TypeLayout.$forcesMirror.withValue(true, operation: body)
}

/// The switch itself: it must really take the Mirror path, and only where it is set.
final class EncodingPathTests: XCTestCase {
    func testStructsAreReadFromMemoryByDefault() throws {
        // Given a struct type never encoded before
        struct Fresh { let name: String; let count: Int? }

        // When encoded without the switch
        XCTAssertEqual(try json(Fresh(name: "a", count: 1)), #"{"name":"a","count":1}"#)

        // Then its layout reads it from memory
        let layout = try XCTUnwrap(TypeLayout.cached(Fresh.self, keyStyle: .snakeCase, forcesMirror: false))
        XCTAssertFalse(layout.readsThroughMirror)
    }

    func testTheSwitchReadsStructsThroughMirror() throws {
        // Given a struct type never encoded before, one the memory path can read
        struct Fresh { let name: String; let count: Int? }

        // When encoded with the switch set
        try onMirrorPath {
            XCTAssertEqual(try json(Fresh(name: "a", count: nil)), #"{"name":"a"}"#)
        }

        // Then the layout it used reads through Mirror, and no memory layout was built
        let layout = try XCTUnwrap(TypeLayout.cached(Fresh.self, keyStyle: .snakeCase, forcesMirror: true))
        XCTAssertTrue(layout.readsThroughMirror)
        XCTAssertNil(TypeLayout.cached(Fresh.self, keyStyle: .snakeCase, forcesMirror: false))
    }

    func testTheSwitchHoldsOnlyForItsOwnTask() async throws {
        // Given two struct types never encoded before
        struct Forced { let a: Int }
        struct Unforced { let b: Int }

        // When one task encodes the first with the switch set while another encodes the second without it
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                TypeLayout.$forcesMirror.withValue(true) {
                    for index in 0..<200 { _ = try? json(Forced(a: index)) }
                }
            }
            group.addTask {
                for index in 0..<200 { _ = try? json(Unforced(b: index)) }
            }
        }

        // Then each was laid out only for its own path
        XCTAssertEqual(TypeLayout.cached(Forced.self, keyStyle: .snakeCase, forcesMirror: true)?.readsThroughMirror, true)
        XCTAssertNil(TypeLayout.cached(Forced.self, keyStyle: .snakeCase, forcesMirror: false))
        XCTAssertEqual(TypeLayout.cached(Unforced.self, keyStyle: .snakeCase, forcesMirror: false)?.readsThroughMirror, false)
        XCTAssertNil(TypeLayout.cached(Unforced.self, keyStyle: .snakeCase, forcesMirror: true))
    }
}

final class EncodingErrorMirrorTests: EncodingErrorTests {
    override func invokeTest() { onMirrorPath { super.invokeTest() } }
    func testRunsOnTheMirrorPath() { XCTAssertTrue(TypeLayout.forcesMirror) }
}

final class EncodingRegressionMirrorTests: EncodingRegressionTests {
    override func invokeTest() { onMirrorPath { super.invokeTest() } }
    func testRunsOnTheMirrorPath() { XCTAssertTrue(TypeLayout.forcesMirror) }
}

final class JSONEncodingMirrorTests: JSONEncodingTests {
    override func invokeTest() { onMirrorPath { super.invokeTest() } }
    func testRunsOnTheMirrorPath() { XCTAssertTrue(TypeLayout.forcesMirror) }
}

final class KeyStyleMirrorTests: KeyStyleTests {
    override func invokeTest() { onMirrorPath { super.invokeTest() } }
    func testRunsOnTheMirrorPath() { XCTAssertTrue(TypeLayout.forcesMirror) }
}

final class MultipartFormDataMirrorTests: MultipartFormDataTests {
    override func invokeTest() { onMirrorPath { super.invokeTest() } }
    func testRunsOnTheMirrorPath() { XCTAssertTrue(TypeLayout.forcesMirror) }
}

final class QueryStringMirrorTests: QueryStringTests {
    override func invokeTest() { onMirrorPath { super.invokeTest() } }
    func testRunsOnTheMirrorPath() { XCTAssertTrue(TypeLayout.forcesMirror) }
}

final class ReflectionMirrorTests: ReflectionTests {
    override func invokeTest() { onMirrorPath { super.invokeTest() } }
    func testRunsOnTheMirrorPath() { XCTAssertTrue(TypeLayout.forcesMirror) }
}

final class ValueTypeMirrorTests: ValueTypeTests {
    override func invokeTest() { onMirrorPath { super.invokeTest() } }
    func testRunsOnTheMirrorPath() { XCTAssertTrue(TypeLayout.forcesMirror) }
}
