import Foundation
import XCTest
@testable import Courier

/// The query string of any value with the given options.
func query(_ value: Any, _ options: ParameterEncodingOptions = .default) throws -> String {
    try encodeQuery(value, options: options)
}

/// The JSON text of any value with the given options.
func json(_ value: Any, _ options: ParameterEncodingOptions = .default) throws -> String {
    String(decoding: try encodeJSON(value, options: options), as: UTF8.self)
}

/// The JSON of a value parsed back with `JSONSerialization`.
func jsonObject(_ value: Any, _ options: ParameterEncodingOptions = .default) throws -> Any {
    try JSONSerialization.jsonObject(with: encodeJSON(value, options: options), options: [.fragmentsAllowed])
}

/// Asserts that `expression` throws `RequestError.invalidParameters` with this key path and a reason containing `reason`.
func assertInvalidParameters(
    _ expression: @autoclosure () throws -> Any,
    keyPath: String,
    reasonContains reason: String,
    file: StaticString = #filePath,
    line: UInt = #line
) {
    XCTAssertThrowsError(try expression(), file: file, line: line) { error in
        guard case RequestError.invalidParameters(let actualKeyPath, let actualReason) = error else {
            return XCTFail("unexpected error \(error)", file: file, line: line)
        }
        XCTAssertEqual(actualKeyPath, keyPath, file: file, line: line)
        XCTAssertTrue(actualReason.contains(reason), "reason \"\(actualReason)\" lacks \"\(reason)\"", file: file, line: line)
    }
}
