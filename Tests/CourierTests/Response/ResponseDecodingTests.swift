import Foundation
import XCTest
@testable import Courier

/// Decoding keys and dates as an API writes them, mirroring how Courier encodes them.
final class ResponseDecodingTests: XCTestCase {
    private let snake = ResponseDecoding(keyStyle: .snakeCase, dateStyle: .iso8601)

    private func decode<T: Decodable>(_ type: T.Type, _ json: String, with decoding: ResponseDecoding) throws -> T {
        try decoding.decode(T.self, from: ResponseData(Data(json.utf8)))
    }

    struct Account: Decodable, Equatable {
        let userID: Int
        let displayName: String
        let homeAddress: Address
        let pastAddresses: [Address]
        let nickName: String?
        let joinedAt: Date
    }

    struct Address: Decodable, Equatable {
        let streetName: String
        let postCode: String
    }

    func testSnakeCaseKeysAreReadUnderTheKeysTheEncoderWritesAcronymsIncluded() throws {
        // Given snake_case JSON, `user_id` for `userID`, nested objects, an array of them and no nickname
        let json = #"""
        {"user_id": 7, "display_name": "Ada", "home_address": {"street_name": "Rue A", "post_code": "75001"},
         "past_addresses": [{"street_name": "Rue B", "post_code": "69001"}], "joined_at": "2026-11-25T10:00:00.250Z"}
        """#

        // When it is decoded with the snake_case style
        let account = try decode(Account.self, json, with: snake)

        // Then every property, at every depth, is found
        XCTAssertEqual(account, Account(userID: 7, displayName: "Ada", homeAddress: Address(streetName: "Rue A", postCode: "75001"),
                                        pastAddresses: [Address(streetName: "Rue B", postCode: "69001")], nickName: nil,
                                        joinedAt: Date(timeIntervalSince1970: 1_795_600_800.25)))
    }

    func testWhatCourierEncodesDecodesBackWithTheMirroredStyle() throws {
        // Given a value encoded with the default options (snake_case keys, ISO 8601 dates)
        struct Profile: JSONBodyData, Decodable, Equatable {
            let userID: Int
            let firstName: String
            let lastSeenAt: Date
            let tagsByURL: [String: [String]]
        }
        let profile = Profile(userID: 1, firstName: "Grace", lastSeenAt: Date(timeIntervalSince1970: 1_795_600_800.5),
                              tagsByURL: ["https://a.example/x": ["one"], "keyName": ["two"]])
        let body = try profile.encode()
        XCTAssertEqual(String(decoding: body, as: UTF8.self), #"{"user_id":1,"first_name":"Grace","last_seen_at":"2026-11-25T10:00:00.500Z","#
            + #""tags_by_url":{"https://a.example/x":["one"],"keyName":["two"]}}"#)

        // Then decoding it mirroring those options gives the same value back, dictionary keys untouched
        XCTAssertEqual(try ResponseDecoding(mirroring: .default).decode(Profile.self, from: ResponseData(body)), profile)
    }

    func testKeysWrittenAsDeclaredAreReadTooAndDictionaryKeysAreData() throws {
        // Given camelCase keys where snake_case was expected, and a dictionary with both spellings
        struct Mixed: Decodable, Equatable { let displayName: String; let counts: [String: Int] }
        let mixed = try decode(Mixed.self, #"{"displayName": "Ada", "counts": {"userName": 1, "user_name": 2}}"#, with: snake)

        // Then the name as declared is found, and the dictionary keeps its keys as they are
        XCTAssertEqual(mixed, Mixed(displayName: "Ada", counts: ["userName": 1, "user_name": 2]))
    }

    func testAnEnumWithAssociatedValuesFindsItsCaseUnderItsStyledKey() throws {
        enum Change: Decodable, Equatable { case userCreated(userName: String), userDeleted }
        let created = try decode(Change.self, #"{"user_created": {"user_name": "ada"}}"#, with: snake)
        XCTAssertEqual(created, .userCreated(userName: "ada"))
        let deleted = try decode([Change].self, #"[{"user_deleted": {}}]"#, with: snake)
        XCTAssertEqual(deleted, [.userDeleted])
    }

    func testKebabCaseAndLowercaseStyles() throws {
        struct Item: Decodable, Equatable { let itemName: String }
        XCTAssertEqual(try decode(Item.self, #"{"item-name": "a"}"#, with: ResponseDecoding(keyStyle: .kebabCase)), Item(itemName: "a"))
        XCTAssertEqual(try decode(Item.self, #"{"itemname": "b"}"#, with: ResponseDecoding(keyStyle: .lowercase)), Item(itemName: "b"))
    }

    func testAMissingKeyNamesBothSpellingsItWasLookedFor() throws {
        struct Item: Decodable { let itemName: Nested }
        struct Nested: Decodable { let x: Int }
        XCTAssertThrowsError(try decode(Item.self, #"{"other": 1}"#, with: snake)) { error in
            guard case DecodingError.keyNotFound(let key, let context) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(key.stringValue, "itemName")
            XCTAssertEqual(context.debugDescription, #"No value for itemName under "item_name" (snakeCase) nor "itemName""#)
        }
    }

    func testDateStyles() throws {
        struct Stamp: Decodable { let at: Date }
        let iso = try decode(Stamp.self, #"{"at": "2026-11-25T12:00:00+02:00"}"#, with: ResponseDecoding(dateStyle: .iso8601))
        let seconds = try decode(Stamp.self, #"{"at": 1795600800.5}"#, with: ResponseDecoding(dateStyle: .secondsSince1970))
        let milliseconds = try decode(Stamp.self, #"{"at": 1795600800250}"#, with: ResponseDecoding(dateStyle: .millisecondsSince1970))
        let plain = try decode(Stamp.self, #"{"at": 0}"#, with: .default)
        XCTAssertEqual(iso.at, Date(timeIntervalSince1970: 1_795_600_800))
        XCTAssertEqual(seconds.at, Date(timeIntervalSince1970: 1_795_600_800.5))
        XCTAssertEqual(milliseconds.at, Date(timeIntervalSince1970: 1_795_600_800.25))
        XCTAssertEqual(plain.at, Date(timeIntervalSinceReferenceDate: 0))
        XCTAssertThrowsError(try decode(Stamp.self, #"{"at": "25/11/2026"}"#, with: ResponseDecoding(dateStyle: .iso8601))) { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(context.debugDescription, #"expected an ISO 8601 date such as 2026-11-25T10:00:00Z, found "25/11/2026""#)
        }
    }

    func testTopLevelArraysDictionariesAndSingleValueWrappers() throws {
        struct Tag: Decodable, Equatable {
            let tagName: String
        }
        struct Wrapped: Decodable, Equatable {
            let inner: Tag
            init(from decoder: any Decoder) throws { inner = try decoder.singleValueContainer().decode(Tag.self) }
            init(_ inner: Tag) { self.inner = inner }
        }
        XCTAssertEqual(try decode([Tag].self, #"[{"tag_name": "a"}]"#, with: snake), [Tag(tagName: "a")])
        XCTAssertEqual(try decode([String: Tag].self, #"{"First_Key": {"tag_name": "b"}}"#, with: snake), ["First_Key": Tag(tagName: "b")])
        XCTAssertEqual(try decode(Wrapped.self, #"{"tag_name": "c"}"#, with: snake), Wrapped(Tag(tagName: "c")))
        XCTAssertEqual(try decode([Int].self, "[1, 2]", with: snake), [1, 2])
    }
}
