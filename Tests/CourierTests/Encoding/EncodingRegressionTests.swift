import Foundation
import XCTest
@testable import Courier

/// Bugs the encoder fuzz test, and comparing the memory path with the Mirror path, found; kept as exact examples.
class EncodingRegressionTests: XCTestCase {
    /// Larger than an existential's three-word inline buffer, so it is boxed out of line.
    struct Four: Sendable {
        var a = 1, b = 2, c = 3, d = 4
    }

    func testStructsInsideExistentialContainersAreReadAsThemselves() throws {
        // Given structs held as Any, any Sendable, in arrays, dictionaries and optionals
        let inArray: [Any] = [Four()]
        let inSendableArray: [any Sendable] = [Four(), "x"]
        let inDictionary: [String: Any] = ["k": Four()]
        let inOptional: Any? = Four() as Any

        // Then each encodes its own fields, not the bytes of the box around it
        XCTAssertEqual(String(decoding: try encodeJSON(inArray, options: .default), as: UTF8.self), #"[{"a":1,"b":2,"c":3,"d":4}]"#)
        XCTAssertEqual(String(decoding: try encodeJSON(inSendableArray, options: .default), as: UTF8.self), #"[{"a":1,"b":2,"c":3,"d":4},"x"]"#)
        XCTAssertEqual(try encodeQuery(inDictionary, options: .default), "k%5Ba%5D=1&k%5Bb%5D=2&k%5Bc%5D=3&k%5Bd%5D=4")
        XCTAssertEqual(String(decoding: try encodeJSON(["o": inOptional as Any] as [String: Any], options: .default), as: UTF8.self),
                       #"{"o":{"a":1,"b":2,"c":3,"d":4}}"#)
    }

    func testDictionaryKeysHaveOneOrderWhateverTheHashSeed() throws {
        // String's < leaves these two unordered both ways; UTF-8 bytes order them
        let keys: [String: Int] = ["e\u{301}": 1, "\u{E9}\u{0}": 2]
        XCTAssertEqual(try encodeQuery(keys, options: .default), "e%CC%81=1&%C3%A9%00=2")
    }

    func testNilInAPropertyTypedAnyIsLeftOutWhateverTheFirstValueHeld() throws {
        // Given a struct with an Any property, encoded first holding a value, then holding nil
        // (the memory path wrote nil in an Any as null; the Mirror path decided from the first value)
        struct Holder { let any: Any; let sendable: any Sendable }
        XCTAssertEqual(try json(Holder(any: 5, sendable: "s")), #"{"any":5,"sendable":"s"}"#)

        // When encoded holding nil, also nil inside nil
        let empty = Holder(any: String?.none as Any, sendable: Int??.some(nil))

        // Then it is a nil property: left out, or null when nils are written
        XCTAssertEqual(try json(empty), "{}")
        XCTAssertEqual(try json(empty, .init(nilStyle: .null)), #"{"any":null,"sendable":null}"#)
        XCTAssertEqual(try query(empty), "")
    }

    func testWrappedValueStorageHoldingAWeakReferenceIsReadSafely() throws {
        // Given `_`-prefixed storage whose stored wrappedValue is weak (the memory path read the weak
        // reference's side table as the object and crashed)
        let node = Node()
        let value = WeakStorageHolder(node: node)

        // When encoded
        // Then the wrapped value is read through Mirror, under the name without `_`
        XCTAssertEqual(try json(value), #"{"name":"h","node":{"id":3}}"#)
        XCTAssertEqual(try json(WeakStorageHolder(node: nil)), #"{"name":"h"}"#)
        withExtendedLifetime(node) {}
    }

    func testCustomReflectableValuesAreEncodedAsTheirMirrorShowsThem() throws {
        // Given a struct whose custom mirror hides a property, and Foundation's URLComponents
        // (the memory path read their stored properties and ignored the mirror)
        let components = try XCTUnwrap(URLComponents(string: "https://example.com/a?b=c"))

        // When encoded
        // Then only what the mirror shows is encoded, as it is for classes
        XCTAssertEqual(try json(Masked()), #"{"shown":1}"#)
        XCTAssertEqual(try json(["u": components]),
                       #"{"u":{"scheme":"https","host":"example.com","path":"/a","query_items":[{"name":"b","value":"c"}]}}"#)
    }
}

private final class Node: Sendable {
    let id = 3
}

/// Storage a property wrapper cannot declare (a wrapper's wrappedValue cannot be weak), named as a wrapper's is.
private struct WeakStorage {
    weak var wrappedValue: Node?
}

private struct WeakStorageHolder {
    let name = "h"
    let _node: WeakStorage
    init(node: Node?) { _node = WeakStorage(wrappedValue: node) }
}

private struct Masked: CustomReflectable {
    let secret = "s"
    let shown = 1
    var customMirror: Mirror { Mirror(self, children: ["shown": shown], displayStyle: .struct) }
}
