import XCTest
@testable import Courier

class KeyStyleTests: XCTestCase {
    func testSnakeCaseSplitsWordsAndAcronyms() {
        // Given Swift property names in camelCase with acronyms
        let names = ["displayName", "userID", "URLString", "myURLProperty", "HTTPStatus", "isOK", "version2", "name", "already_snake", "_private", "ID"]

        // When converted to snake_case
        let keys = names.map { ParameterEncodingOptions.KeyStyle.snakeCase.key(for: $0) }

        // Then acronyms stay one word and existing underscores are kept
        XCTAssertEqual(keys, ["display_name", "user_id", "url_string", "my_url_property", "http_status", "is_ok", "version2", "name", "already_snake", "_private", "id"])
    }

    func testKebabLowercaseAndUnchanged() {
        // Given one name
        let name = "myURLProperty"

        // When converted with each other style
        // Then each applies its rule
        XCTAssertEqual(ParameterEncodingOptions.KeyStyle.kebabCase.key(for: name), "my-url-property")
        XCTAssertEqual(ParameterEncodingOptions.KeyStyle.lowercase.key(for: name), "myurlproperty")
        XCTAssertEqual(ParameterEncodingOptions.KeyStyle.unchanged.key(for: name), "myURLProperty")
    }

    func testKeyStyleAppliesToPropertiesButNotDictionaryKeys() throws {
        // Given a struct with a camelCase property and a dictionary with a camelCase key
        struct Value { let displayName: String; let extra: [String: Int] }
        let value = Value(displayName: "Ada", extra: ["someKey": 1])

        // When encoded with each key style
        // Then only the property name changes
        XCTAssertEqual(try json(value), #"{"display_name":"Ada","extra":{"someKey":1}}"#)
        XCTAssertEqual(try json(value, .init(keyStyle: .kebabCase)), #"{"display-name":"Ada","extra":{"someKey":1}}"#)
        XCTAssertEqual(try json(value, .init(keyStyle: .lowercase)), #"{"displayname":"Ada","extra":{"someKey":1}}"#)
        XCTAssertEqual(try json(value, .init(keyStyle: .unchanged)), #"{"displayName":"Ada","extra":{"someKey":1}}"#)
    }
}
