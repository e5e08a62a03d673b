import Foundation
import XCTest
@testable import Courier

/// Bugs the encoder fuzz test found, kept as exact examples.
final class EncodingRegressionTests: XCTestCase {
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
}
