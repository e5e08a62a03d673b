import Foundation
@testable import Courier

// The random parameter values of the encoding fuzz tests: a tree that knows both the Swift
// value handed to the encoder and what that value means, so the tests can compute what every
// format must read back without looking at the encoder's output.

/// A generated parameter value. ``swiftValue`` is what the encoder gets.
indirect enum FuzzValue {
    case string(String)
    case int(Int)
    case int32(Int32)
    case uint8(UInt8)
    case uint64(UInt64)
    case int128(Int128)
    case double(Double)
    case float(Float)
    case bool(Bool)
    /// A nil optional, of one of several static types.
    case nilValue(NilKind)
    /// `Optional.some` around a value.
    case wrapped(FuzzValue)
    case array([FuzzValue], ArrayKind)
    /// Entries sorted by key's UTF-8 bytes (the encoder's order), keys unique under Swift's `==`
    /// (canonical equivalence).
    case dictionary([(key: String, value: FuzzValue)], DictionaryKind)
    /// One of the fixed struct and class shapes below, with random contents.
    case record(FuzzRecord)

    enum NilKind: CaseIterable {
        case string, int, bool, double, any, nestedOptional
    }

    /// How an array is handed to the encoder.
    enum ArrayKind: CaseIterable {
        /// `[any Sendable]`.
        case any
        /// `[String]`, `[Int]` or `[Double]` when every element allows it, else `[any Sendable]`.
        case typed
        /// An `ArraySlice` that does not start at index 0.
        case slice
    }

    /// How a dictionary is handed to the encoder.
    enum DictionaryKind: CaseIterable {
        /// `[String: any Sendable]`.
        case any
        /// `[String: String]`, `[String: String?]` or `[String: Int]` when every value allows it.
        case typed
    }

    /// The value the encoder is given.
    var swiftValue: any Sendable {
        switch self {
        case .string(let value): value
        case .int(let value): value
        case .int32(let value): value
        case .uint8(let value): value
        case .uint64(let value): value
        case .int128(let value): value
        case .double(let value): value
        case .float(let value): value
        case .bool(let value): value
        case .nilValue(let kind):
            switch kind {
            case .string: String?.none as any Sendable
            case .int: Int?.none as any Sendable
            case .bool: Bool?.none as any Sendable
            case .double: Double?.none as any Sendable
            case .any: (any Sendable)?.none as any Sendable
            case .nestedOptional: Int??.some(.none) as any Sendable
            }
        case .wrapped(let wrapped):
            if case .string(let text) = wrapped { String?.some(text) as any Sendable } else { (any Sendable)?.some(wrapped.swiftValue) as any Sendable }
        case .array(let elements, let kind):
            Self.arrayValue(elements, kind: kind)
        case .dictionary(let entries, let kind):
            Self.dictionaryValue(entries, kind: kind)
        case .record(let record):
            record.instance
        }
    }

    private static func arrayValue(_ elements: [FuzzValue], kind: ArrayKind) -> any Sendable {
        let values: [any Sendable] = elements.map(\.swiftValue)
        switch kind {
        case .any:
            return values
        case .slice:
            return ([Int(0) as any Sendable] + values)[1...]
        case .typed:
            if !elements.isEmpty, let strings = elements.allMap({ if case .string(let value) = $0 { value } else { nil } }) { return strings }
            if !elements.isEmpty, let ints = elements.allMap({ if case .int(let value) = $0 { value } else { nil } }) { return ints }
            if !elements.isEmpty, let doubles = elements.allMap({ if case .double(let value) = $0 { value } else { nil } }) { return doubles }
            if !elements.isEmpty, let addresses = elements.allMap({ if case .record(let record) = $0 { record.instance as? FuzzAddress } else { nil } }) {
                return addresses
            }
            return values
        }
    }

    private static func dictionaryValue(_ entries: [(key: String, value: FuzzValue)], kind: DictionaryKind) -> any Sendable {
        if kind == .typed, !entries.isEmpty {
            if let strings = entries.allMap({ if case .string(let value) = $0.value { value } else { nil } }) {
                return Dictionary(uniqueKeysWithValues: zip(entries.map(\.key), strings))
            }
            if let ints = entries.allMap({ if case .int(let value) = $0.value { value } else { nil } }) {
                return Dictionary(uniqueKeysWithValues: zip(entries.map(\.key), ints))
            }
            let optionalStrings: [String??] = entries.map {
                switch $0.value {
                case .string(let value): .some(.some(value))
                case .nilValue: .some(.none)
                default: .none
                }
            }
            if let optionalStrings = optionalStrings.allMap({ $0 }) {
                return Dictionary(uniqueKeysWithValues: zip(entries.map(\.key), optionalStrings))
            }
        }
        var dictionary: [String: any Sendable] = [:]
        for entry in entries { dictionary[entry.key] = entry.value.swiftValue }
        return dictionary
    }

    /// Whether the encoder sees nil: a nil optional, or `some` around one.
    var isNil: Bool {
        switch self {
        case .nilValue: true
        case .wrapped(let wrapped): wrapped.isNil
        default: false
        }
    }

    /// Whether this is a scalar (no array, dictionary or record, also inside `some`).
    var isScalar: Bool {
        switch self {
        case .array, .dictionary, .record: false
        case .wrapped(let wrapped): wrapped.isScalar
        default: true
        }
    }
}

extension Array {
    /// `transform` of every element, or nil if it is nil for any.
    fileprivate func allMap<T>(_ transform: (Element) -> T?) -> [T]? {
        var result: [T] = []
        result.reserveCapacity(count)
        for element in self {
            guard let mapped = transform(element) else { return nil }
            result.append(mapped)
        }
        return result
    }
}

// MARK: - Fixed shapes

struct FuzzAddress: Sendable {
    var streetName: String
    var zipCode: Int?
    var isPrimary: Bool
    var geo: [Double]
    var area51Code: UInt64
}

struct FuzzProfile: Sendable {
    var displayName: String
    var userID: Int
    var score: Double?
    var nickname: String?
    var address: FuzzAddress
    var homeURLText: String
    var tags: [String]
    var extra: [String: any Sendable]
    var backup: FuzzAddress?
    var ratio: Float
    var flags: [Bool?]
}

class FuzzEntity: @unchecked Sendable {
    let entityID: Int
    let createdBy: String?

    init(entityID: Int, createdBy: String?) {
        self.entityID = entityID
        self.createdBy = createdBy
    }
}

/// A subclass, whose superclass's properties are encoded first.
final class FuzzNote: FuzzEntity, @unchecked Sendable {
    let title: String
    let body: [String: any Sendable]
    let isDraft: Bool

    init(entityID: Int, createdBy: String?, title: String, body: [String: any Sendable], isDraft: Bool) {
        self.title = title
        self.body = body
        self.isDraft = isDraft
        super.init(entityID: entityID, createdBy: createdBy)
    }
}

/// A struct or class value with the meaning of each stored property, in declaration order.
struct FuzzRecord {
    let typeName: String
    let instance: any Sendable
    /// Swift property names as written, in encoding order (superclass first).
    let fields: [(name: String, value: FuzzValue)]

    /// The key of a property under each key style, written out by hand from the documented rules.
    static let keys: [String: (snake: String, kebab: String, lower: String, unchanged: String)] = [
        "streetName": ("street_name", "street-name", "streetname", "streetName"),
        "zipCode": ("zip_code", "zip-code", "zipcode", "zipCode"),
        "isPrimary": ("is_primary", "is-primary", "isprimary", "isPrimary"),
        "geo": ("geo", "geo", "geo", "geo"),
        "area51Code": ("area51_code", "area51-code", "area51code", "area51Code"),
        "displayName": ("display_name", "display-name", "displayname", "displayName"),
        "userID": ("user_id", "user-id", "userid", "userID"),
        "score": ("score", "score", "score", "score"),
        "nickname": ("nickname", "nickname", "nickname", "nickname"),
        "address": ("address", "address", "address", "address"),
        "homeURLText": ("home_url_text", "home-url-text", "homeurltext", "homeURLText"),
        "tags": ("tags", "tags", "tags", "tags"),
        "extra": ("extra", "extra", "extra", "extra"),
        "backup": ("backup", "backup", "backup", "backup"),
        "ratio": ("ratio", "ratio", "ratio", "ratio"),
        "flags": ("flags", "flags", "flags", "flags"),
        "entityID": ("entity_id", "entity-id", "entityid", "entityID"),
        "createdBy": ("created_by", "created-by", "createdby", "createdBy"),
        "title": ("title", "title", "title", "title"),
        "body": ("body", "body", "body", "body"),
        "isDraft": ("is_draft", "is-draft", "isdraft", "isDraft"),
    ]

    static func key(for name: String, style: ParameterEncodingOptions.KeyStyle) -> String {
        guard let keys = keys[name] else { preconditionFailure("no key for property \(name)") }
        switch style {
        case .snakeCase: return keys.snake
        case .kebabCase: return keys.kebab
        case .lowercase: return keys.lower
        case .unchanged: return keys.unchanged
        }
    }
}

// MARK: - Generator

/// Makes random values from a ``SeededGenerator``. `allowsNonFinite` lets Doubles and Floats be
/// NaN or infinite (forms write them; JSON must reject them, which a separate test checks).
struct FuzzGenerator {
    var random: SeededGenerator
    let allowsNonFinite: Bool

    init(seed: UInt64, allowsNonFinite: Bool) {
        random = SeededGenerator(seed: seed)
        self.allowsNonFinite = allowsNonFinite
    }

    mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ options: [T]) -> T { options[below(options.count)] }

    // MARK: Strings

    /// Characters that stress the encoders, grouped so each group is picked as often as the others.
    private static let scalarPools: [[Unicode.Scalar]] = [
        Array("abcXYZ019".unicodeScalars),
        Array("-._~".unicodeScalars),
        Array(":#[]@!$&'()*+,;=/?% ".unicodeScalars),
        Array("\"'\\`{}<>^|".unicodeScalars),
        (0x00...0x1F).compactMap(Unicode.Scalar.init) + [Unicode.Scalar(0x7F)!, Unicode.Scalar(0x85)!],
        ["\r", "\n", "\t", "\0"],
        Array("éßñøÆ中文字ЖЯ".unicodeScalars),
        (0x300...0x36F).compactMap(Unicode.Scalar.init),  // combining marks
        Array("אבגשת".unicodeScalars) + Array("ابتثج".unicodeScalars) + [Unicode.Scalar(0x200F)!, Unicode.Scalar(0x202E)!, Unicode.Scalar(0x200D)!],
        [0x1F600, 0x1F4A9, 0x1F1EB, 0x1F1F7, 0x10000, 0x10FFFF, 0x1D400, 0xE0041, 0x20000, 0x1F9D1].compactMap(Unicode.Scalar.init),
        [0xFEFF, 0xFFFD, 0xFFFF, 0x2028, 0x2029, 0xA0, 0x3000, 0xD7FF, 0xE000].compactMap(Unicode.Scalar.init),
    ]

    /// Whole snippets that mean something to a decoder.
    private static let snippets = ["%22", "%0D", "%0A", "%41", "%", "%%", "+", "++", "=?utf-8?q?x?=", "[]", "[0]", "][", "&=", "\r\n", "--", "null", "true", "1e5", "-0", "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}", "e\u{301}", "\u{E9}"]

    mutating func string(maxLength: Int = 12) -> String {
        if chance(12) { return "" }
        var scalars = String.UnicodeScalarView()
        let length = 1 + below(maxLength)
        for _ in 0..<length {
            if chance(8) {
                scalars.append(contentsOf: pick(Self.snippets).unicodeScalars)
            } else {
                let pool = pick(Self.scalarPools)
                scalars.append(pick(pool))
            }
        }
        return String(scalars)
    }

    /// A dictionary key: usually short, sometimes empty or made of reserved characters.
    mutating func key() -> String {
        chance(30) ? pick(["a", "b", "id", "tags", "user", "x y", "é", "e\u{301}", "", "[]", "a[b]", "0", "%5B"]) : string(maxLength: 6)
    }

    // MARK: Numbers

    mutating func double() -> Double {
        switch below(12) {
        case 0: return pick([0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1e15, 1e15 - 1, -1e15, 1e16, 123_456_789_012_345.0, 9_007_199_254_740_993.0])
        case 1: return pick([Double.leastNonzeroMagnitude, -Double.leastNonzeroMagnitude, Double.leastNormalMagnitude, Double.greatestFiniteMagnitude, -Double.greatestFiniteMagnitude, Double.ulpOfOne])
        case 2: return Double(Int64(bitPattern: random.next()) >> below(64))  // integral, any magnitude
        case 3: return Double(bitPattern: random.next())  // any bit pattern; non-finite ones replaced below
        case 4: return pick([Double(Int64.max), Double(Int64.min), Double(UInt64.max), 2.5e-7, 1e-5, 1e-7, 0.001, 1e21, 1e22, 1e23])
        case 5: return Double(below(2_000_000) - 1_000_000) / pick([1, 10, 100, 1000, 3, 7])
        default: return Double.random(in: -1e6...1e6, using: &random) * pick([1, 1e-300, 1e300, 1e-10, 1e10])
        }
    }

    mutating func finiteOrNot(_ value: Double) -> Double {
        if allowsNonFinite, chance(3) { return pick([Double.nan, Double.infinity, -Double.infinity]) }
        return value.isFinite ? value : 0.25
    }

    mutating func float() -> Float {
        let value: Float = switch below(5) {
        case 0: pick([0, -0.0, 0.1, 1, 1e7, 1e7 - 1, 16_777_215, 0.3, Float.leastNonzeroMagnitude, Float.greatestFiniteMagnitude, -Float.leastNormalMagnitude])
        case 1: Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
        default: Float(Double.random(in: -1e4...1e4, using: &random))
        }
        if allowsNonFinite, chance(3) { return pick([Float.nan, Float.infinity, -Float.infinity]) }
        return value.isFinite ? value : 0.75
    }

    mutating func int() -> Int {
        switch below(4) {
        case 0: pick([Int.min, Int.max, 0, -1, 1, Int.min + 1, Int.max - 1])
        case 1: Int(bitPattern: UInt(random.next()))
        default: Int(Int64(bitPattern: random.next()) >> (1 + below(62)))
        }
    }

    // MARK: Values

    mutating func scalar() -> FuzzValue {
        switch below(16) {
        case 0, 1, 2, 3, 4: return .string(string())
        case 5, 6: return .int(int())
        case 7: return .int32(Int32(truncatingIfNeeded: int()))
        case 8: return .uint8(UInt8(truncatingIfNeeded: random.next()))
        case 9: return .uint64(chance(30) ? pick([UInt64.max, UInt64(Int64.max) + 1, 0]) : random.next() >> below(64))
        case 10: return .int128(chance(30) ? pick([Int128.max, Int128.min, Int128(UInt64.max) + 1]) : Int128(Int64(bitPattern: random.next())) * Int128(random.next() >> below(64)))
        case 11, 12: return .double(finiteOrNot(double()))
        case 13: return .float(float())
        default: return .bool(chance(50))
        }
    }

    /// A value nested in a container. Struct records appear at the top level, as typed struct
    /// properties and in typed arrays (`[FuzzAddress]`), but not in existential containers.
    mutating func value(depth: Int) -> FuzzValue {
        let roll = below(100)
        if depth <= 0 || roll < 55 { return scalar() }
        if roll < 62 { return .nilValue(pick(FuzzValue.NilKind.allCases)) }
        if roll < 67 { return .wrapped(value(depth: depth - 1)) }
        if roll < 80 { return array(depth: depth - 1) }
        if roll < 93 { return dictionary(depth: depth - 1) }
        // Structs larger than an existential's inline buffer, inside existential containers: the
        // shape that once made the encoder read the box instead of the struct (fixed; see
        // ReflectionEncoder.encodeStructure and EncodingRegressionTests).
        return chance(50) ? record(depth: depth - 1) : .record(note(depth: depth - 1))
    }

    mutating func array(depth: Int, maxCount: Int = 5) -> FuzzValue {
        let count = below(maxCount + 1)
        if chance(5) {
            // Structs in a typed array, [FuzzAddress], which the encoder reads correctly.
            return .array((0..<count).map { _ in .record(address()) }, .typed)
        }
        let homogeneous = chance(30)
        let elements: [FuzzValue] = (0..<count).map { _ in
            homogeneous ? .string(string()) : value(depth: depth)
        }
        return .array(elements, pick(FuzzValue.ArrayKind.allCases))
    }

    mutating func dictionary(depth: Int, maxCount: Int = 6) -> FuzzValue {
        .dictionary(entries(depth: depth, maxCount: maxCount), pick(FuzzValue.DictionaryKind.allCases))
    }

    mutating func entries(depth: Int, maxCount: Int) -> [(key: String, value: FuzzValue)] {
        let count = below(maxCount + 1)
        let homogeneous = chance(25)
        var entries: [(key: String, value: FuzzValue)] = []
        for _ in 0..<count {
            let key = key()
            // Swift's ==: canonically equivalent keys are one dictionary key.
            guard !entries.contains(where: { $0.key == key }) else { continue }
            let value: FuzzValue = homogeneous ? (chance(20) ? .nilValue(.string) : .string(string())) : value(depth: depth)
            entries.append((key, value))
        }
        // The encoder's order: UTF-8 bytes, a total order (String's `<` leaves some distinct keys,
        // such as "e\u{301}" and "\u{E9}\u{0}", unordered both ways).
        return entries.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// A value that forms can hold at the top level: a dictionary or a record.
    mutating func topLevelContainer(depth: Int) -> FuzzValue {
        chance(75) ? dictionary(depth: depth, maxCount: 8) : record(depth: depth)
    }

    // MARK: Records

    mutating func record(depth: Int) -> FuzzValue {
        switch below(3) {
        case 0: .record(address())
        case 1: .record(profile(depth: depth))
        default: .record(note(depth: depth))
        }
    }

    mutating func optional<T>(_ make: (inout Self) -> T) -> T? {
        chance(30) ? nil : make(&self)
    }

    mutating func address() -> FuzzRecord {
        let streetName = string()
        let zipCode = optional { $0.int() }
        let isPrimary = chance(50)
        let geo = (0..<below(4)).map { _ in finiteOrNot(double()) }
        let area51Code = random.next()
        return FuzzRecord(
            typeName: "FuzzAddress",
            instance: FuzzAddress(streetName: streetName, zipCode: zipCode, isPrimary: isPrimary, geo: geo, area51Code: area51Code),
            fields: [
                ("streetName", .string(streetName)),
                ("zipCode", zipCode.map(FuzzValue.int) ?? .nilValue(.int)),
                ("isPrimary", .bool(isPrimary)),
                ("geo", .array(geo.map(FuzzValue.double), .typed)),
                ("area51Code", .uint64(area51Code)),
            ])
    }

    mutating func profile(depth: Int) -> FuzzRecord {
        let displayName = string()
        let userID = int()
        let score = optional { $0.finiteOrNot($0.double()) }
        let nickname = optional { $0.string() }
        let address = address()
        let homeURLText = string(maxLength: 20)
        let tags = (0..<below(4)).map { _ in string() }
        let extra = entries(depth: max(depth - 1, 0), maxCount: 3)
        let backup = optional { $0.address() }
        let ratio = float()
        let flags: [Bool?] = (0..<below(4)).map { _ in chance(25) ? nil : chance(50) }
        var extraValue: [String: any Sendable] = [:]
        for entry in extra { extraValue[entry.key] = entry.value.swiftValue }
        let instance = FuzzProfile(
            displayName: displayName, userID: userID, score: score, nickname: nickname,
            address: address.instance as! FuzzAddress, homeURLText: homeURLText, tags: tags, extra: extraValue,
            backup: backup.map { $0.instance as! FuzzAddress }, ratio: ratio, flags: flags)
        return FuzzRecord(
            typeName: "FuzzProfile",
            instance: instance,
            fields: [
                ("displayName", .string(displayName)),
                ("userID", .int(userID)),
                ("score", score.map(FuzzValue.double) ?? .nilValue(.double)),
                ("nickname", nickname.map(FuzzValue.string) ?? .nilValue(.string)),
                ("address", .record(address)),
                ("homeURLText", .string(homeURLText)),
                ("tags", .array(tags.map(FuzzValue.string), .typed)),
                ("extra", .dictionary(extra, .any)),
                ("backup", backup.map(FuzzValue.record) ?? .nilValue(.any)),
                ("ratio", .float(ratio)),
                ("flags", .array(flags.map { $0.map(FuzzValue.bool) ?? .nilValue(.bool) }, .any)),
            ])
    }

    mutating func note(depth: Int) -> FuzzRecord {
        let entityID = int()
        let createdBy = optional { $0.string() }
        let title = string()
        let body = entries(depth: max(depth - 1, 0), maxCount: 3)
        let isDraft = chance(50)
        var bodyValue: [String: any Sendable] = [:]
        for entry in body { bodyValue[entry.key] = entry.value.swiftValue }
        return FuzzRecord(
            typeName: "FuzzNote",
            instance: FuzzNote(entityID: entityID, createdBy: createdBy, title: title, body: bodyValue, isDraft: isDraft),
            fields: [
                ("entityID", .int(entityID)),
                ("createdBy", createdBy.map(FuzzValue.string) ?? .nilValue(.string)),
                ("title", .string(title)),
                ("body", .dictionary(body, .any)),
                ("isDraft", .bool(isDraft)),
            ])
    }

    // MARK: Options

    /// The default options a quarter of the time, else any combination. `commaSeparated` only when allowed.
    mutating func options(allowCommaSeparated: Bool) -> ParameterEncodingOptions {
        if chance(25) { return .default }
        var arrayStyles: [ParameterEncodingOptions.ArrayStyle] = [.brackets, .indexed, .repeatedKey]
        if allowCommaSeparated { arrayStyles.append(.commaSeparated) }
        return ParameterEncodingOptions(
            keyStyle: pick([.snakeCase, .kebabCase, .lowercase, .unchanged]),
            arrayStyle: pick(arrayStyles),
            boolStyle: pick([.trueFalse, .numeric]),
            nilStyle: pick([.omit, .null]),
            spaceStyle: pick([.percent20, .plus]))
    }
}

// MARK: - Dumps

extension FuzzValue {
    /// A Swift-like literal of the value, every non-printable-ASCII scalar written `\u{…}`.
    var dump: String { dump(indent: "") }

    private func dump(indent: String) -> String {
        let inner = indent + "  "
        switch self {
        case .string(let value): return fuzzLiteral(value)
        case .int(let value): return "\(value)"
        case .int32(let value): return "Int32(\(value))"
        case .uint8(let value): return "UInt8(\(value))"
        case .uint64(let value): return "UInt64(\(value))"
        case .int128(let value): return "Int128(\(value))"
        case .double(let value): return "Double(\(value)) /* bits 0x\(String(value.bitPattern, radix: 16)) */"
        case .float(let value): return "Float(\(value)) /* bits 0x\(String(value.bitPattern, radix: 16)) */"
        case .bool(let value): return "\(value)"
        case .nilValue(let kind): return "nil /* \(kind) */"
        case .wrapped(let wrapped): return "Optional.some(\(wrapped.dump(indent: indent)))"
        case .array(let elements, let kind):
            if elements.isEmpty { return "[] /* \(kind) */" }
            return "[ /* \(kind) */\n" + elements.map { inner + $0.dump(indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .dictionary(let entries, let kind):
            if entries.isEmpty { return "[:] /* \(kind) */" }
            return "[ /* \(kind) */\n" + entries.map { inner + fuzzLiteral($0.key) + ": " + $0.value.dump(indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .record(let record):
            return "\(record.typeName)(\n" + record.fields.map { inner + $0.name + ": " + $0.value.dump(indent: inner) }.joined(separator: ",\n") + "\n\(indent))"
        }
    }
}

/// `text` as a Swift string literal with every scalar outside printable ASCII escaped.
func fuzzLiteral(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case " "..."~": result.unicodeScalars.append(scalar)
        default: result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        }
    }
    return result + "\""
}

/// Bytes as text for failure messages: printable ASCII as is, the rest `\xNN`.
func fuzzBytes<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    var result = ""
    for byte in bytes {
        if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") {
            result.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            result += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
    }
    return result
}

extension ParameterEncodingOptions {
    var fuzzDescription: String {
        "ParameterEncodingOptions(keyStyle: .\(keyStyle), arrayStyle: .\(arrayStyle), boolStyle: .\(boolStyle), nilStyle: .\(nilStyle), spaceStyle: .\(spaceStyle))"
    }
}
