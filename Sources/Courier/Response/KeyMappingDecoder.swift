import Foundation

/// Decodes JSON whose keys are written in a ``ParameterEncodingOptions/KeyStyle``, by asking for
/// each property under the key the encoder would write for it (`userID` → `user_id`), so that
/// decoding reads back exactly what encoding writes, acronyms included.
///
/// `JSONDecoder`'s own `convertFromSnakeCase` goes the other way, turning `user_id` into `userId`,
/// which is not `userID`; and it changes the keys of dictionaries, which are data. This wraps the
/// containers `JSONDecoder` makes instead: a keyed container looks a Swift name up under its
/// styled key, then as written; dictionaries keep their keys; dates, data, URLs and decimals still
/// go to `JSONDecoder`, so that its strategies apply.
enum KeyMappingDecoder {
    static let styleKey = CodingUserInfoKey(rawValue: "Courier.keyStyle")!

    /// Decodes with `decoder`, whose userInfo holds the style under ``styleKey``.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, with decoder: JSONDecoder) throws -> T {
        try decoder.decode(Root<T>.self, from: data).value
    }

    /// The top-level value, whose decoder is the first one to wrap.
    private struct Root<T: Decodable>: Decodable {
        let value: T
        init(from decoder: any Decoder) throws {
            let style = decoder.userInfo[KeyMappingDecoder.styleKey] as? ParameterEncodingOptions.KeyStyle ?? .unchanged
            value = try MappedDecoder(inner: decoder, keys: KeyNames(style: style)).decodeValue(T.self)
        }
    }
}

/// The styled key of each Swift name met in one decoding, worked out once per name.
final class KeyNames {
    let style: ParameterEncodingOptions.KeyStyle
    private var styled: [String: String] = [:]

    init(style: ParameterEncodingOptions.KeyStyle) {
        self.style = style
    }

    func key(for name: String) -> String {
        if let key = styled[name] { return key }
        let key = style.key(for: name)
        styled[name] = key
        return key
    }

    /// The Swift name a styled key most likely came from (`user_created` → `userCreated`), for
    /// `allKeys`, which names keys as they are in the JSON.
    func name(for key: String) -> String {
        let separator: Character
        switch style {
        case .snakeCase: separator = "_"
        case .kebabCase: separator = "-"
        case .lowercase, .unchanged: return key
        }
        var name = ""
        var upperNext = false
        for character in key {
            if character == separator, !name.isEmpty {
                upperNext = true
            } else {
                name += upperNext ? character.uppercased() : String(character)
                upperNext = false
            }
        }
        return name
    }
}

/// A key of any name, for the containers of the wrapped decoder.
struct AnyCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue; intValue = nil }
    init(intValue: Int) { stringValue = String(intValue); self.intValue = intValue }
    init(_ key: some CodingKey) { stringValue = key.stringValue; intValue = key.intValue }
}

/// Types `JSONDecoder` decodes itself, with its strategies: handed to it as they are.
private func isDecodedByJSONDecoder(_ type: Any.Type) -> Bool {
    type == Date.self || type == Data.self || type == URL.self || type == Decimal.self
        || type == String.self || type == Bool.self || type == Double.self || type == Float.self
        || type == Int.self || type == Int64.self || type == Int32.self || type == Int16.self || type == Int8.self
        || type == UInt.self || type == UInt64.self || type == UInt32.self || type == UInt16.self || type == UInt8.self
}

/// A dictionary with `String` keys: its keys are data, read as they are; its values are
/// decoded with the mapping.
private protocol StringKeyedDictionary {
    static func decodeMapped(from decoder: MappedDecoder) throws -> Self
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Decodable {
    fileprivate static func decodeMapped(from decoder: MappedDecoder) throws -> Self {
        let container = try decoder.inner.container(keyedBy: AnyCodingKey.self)
        var dictionary: [String: Value] = [:]
        dictionary.reserveCapacity(container.allKeys.count)
        for key in container.allKeys {
            dictionary[key.stringValue] = try MappedDecoder(inner: try container.superDecoder(forKey: key), keys: decoder.keys)
                .decodeValue(Value.self)
        }
        return dictionary
    }
}

struct MappedDecoder: Decoder {
    let inner: any Decoder
    let keys: KeyNames

    var codingPath: [any CodingKey] { inner.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { inner.userInfo }

    /// Decodes a value: a type `JSONDecoder` handles itself directly, a string-keyed dictionary
    /// with its keys as they are, anything else through this decoder.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if isDecodedByJSONDecoder(T.self) { return try inner.singleValueContainer().decode(T.self) }
        if let dictionary = T.self as? any StringKeyedDictionary.Type { return try dictionary.decodeMapped(from: self) as! T }
        return try T(from: self)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(MappedKeyedContainer<Key>(inner: try inner.container(keyedBy: AnyCodingKey.self), keys: keys))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        MappedUnkeyedContainer(inner: try inner.unkeyedContainer(), keys: keys)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        MappedSingleValueContainer(inner: try inner.singleValueContainer(), decoder: self)
    }
}

struct MappedKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let inner: KeyedDecodingContainer<AnyCodingKey>
    let keys: KeyNames

    var codingPath: [any CodingKey] { inner.codingPath }

    var allKeys: [Key] {
        inner.allKeys.compactMap { key in
            let name = keys.name(for: key.stringValue)
            if name != key.stringValue, keys.key(for: name) == key.stringValue, let mapped = Key(stringValue: name) { return mapped }
            return Key(stringValue: key.stringValue)
        }
    }

    /// The key in the JSON: the styled one if present, else the name as written.
    private func wire(_ key: Key) -> AnyCodingKey {
        let styled = AnyCodingKey(stringValue: keys.key(for: key.stringValue))
        if styled.stringValue == key.stringValue || inner.contains(styled) { return styled }
        let written = AnyCodingKey(key)
        return inner.contains(written) ? written : styled
    }

    func contains(_ key: Key) -> Bool { inner.contains(wire(key)) }
    func decodeNil(forKey key: Key) throws -> Bool { try inner.decodeNil(forKey: wire(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let wireKey = wire(key)
        if isDecodedByJSONDecoder(T.self) { return try inner.decode(T.self, forKey: wireKey) }
        guard inner.contains(wireKey) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription:
                "No value for \(key.stringValue) under \"\(wireKey.stringValue)\" (\(keys.style)) nor \"\(key.stringValue)\""))
        }
        return try MappedDecoder(inner: try inner.superDecoder(forKey: wireKey), keys: keys).decodeValue(T.self)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let wireKey = wire(key)
        guard inner.contains(wireKey), try !inner.decodeNil(forKey: wireKey) else { return nil }
        return try decode(T.self, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(MappedKeyedContainer<NestedKey>(
            inner: try inner.nestedContainer(keyedBy: AnyCodingKey.self, forKey: wire(key)), keys: keys))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        MappedUnkeyedContainer(inner: try inner.nestedUnkeyedContainer(forKey: wire(key)), keys: keys)
    }

    func superDecoder() throws -> any Decoder {
        MappedDecoder(inner: try inner.superDecoder(), keys: keys)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        MappedDecoder(inner: try inner.superDecoder(forKey: wire(key)), keys: keys)
    }
}

struct MappedUnkeyedContainer: UnkeyedDecodingContainer {
    var inner: any UnkeyedDecodingContainer
    let keys: KeyNames

    var codingPath: [any CodingKey] { inner.codingPath }
    var count: Int? { inner.count }
    var isAtEnd: Bool { inner.isAtEnd }
    var currentIndex: Int { inner.currentIndex }

    mutating func decodeNil() throws -> Bool { try inner.decodeNil() }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if isDecodedByJSONDecoder(T.self) { return try inner.decode(T.self) }
        return try MappedDecoder(inner: try inner.superDecoder(), keys: keys).decodeValue(T.self)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(MappedKeyedContainer<NestedKey>(inner: try inner.nestedContainer(keyedBy: AnyCodingKey.self), keys: keys))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        MappedUnkeyedContainer(inner: try inner.nestedUnkeyedContainer(), keys: keys)
    }

    mutating func superDecoder() throws -> any Decoder {
        MappedDecoder(inner: try inner.superDecoder(), keys: keys)
    }
}

struct MappedSingleValueContainer: SingleValueDecodingContainer {
    let inner: any SingleValueDecodingContainer
    let decoder: MappedDecoder

    var codingPath: [any CodingKey] { inner.codingPath }
    func decodeNil() -> Bool { inner.decodeNil() }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // A wrapper type (`struct ID: Decodable { init(from:) { try singleValueContainer().decode(Inner.self) } }`)
        // decodes its inner value with the mapping too.
        try decoder.decodeValue(T.self)
    }
}
