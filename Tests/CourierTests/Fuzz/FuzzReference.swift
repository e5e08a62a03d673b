import Foundation
@testable import Courier

// What each format must read back for a generated value, computed from the value and the
// documented rules only (ParameterEncodingOptions, DefaultQueryString, JSONBodyData,
// MultipartFormData), never from the encoder's output.

/// One `name=value` pair of a form, query string or multipart form, unescaped.
struct ExpectedField {
    let name: String
    let value: String
    /// For a number, the number the text must read back as.
    let number: ExpectedNumber?
    /// For a comma-separated array, its elements: each is percent-encoded on its own (a comma
    /// inside one is `%2C`) and they are joined with literal commas. `value` is them joined.
    var elements: [String]? = nil
}

enum ExpectedNumber {
    case double(Double)
    case float(Float)
}

/// A JSON value as it must parse back.
indirect enum ExpectedJSON {
    case string(String)
    case bool(Bool)
    /// Any integer, as exact decimal text.
    case integer(String)
    case double(Double)
    case float(Float)
    case null
    case array([ExpectedJSON])
    /// Keys in the order they are written: sorted for dictionaries, declaration order for records.
    case object([(key: String, value: ExpectedJSON)])
}

enum FuzzReference {
    // MARK: Numbers

    /// The documented text of a Double: shortest round-trip decimal; integral values below 1e15
    /// without `.0` (`3`, `-0`), others as Swift prints them (`0.1`, `1e+16`, `-2.5e-07`).
    /// Forms write NaN and the infinities as `nan`, `inf`, `-inf`.
    static func text(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        if value == value.rounded(.towardZero), value.magnitude < 1e15 {
            return value == 0 ? (value.sign == .minus ? "-0" : "0") : String(Int64(value))
        }
        return "\(value)"
    }

    /// Like ``text(_:)-(Double)``, shortest for Float precision, integral below 1e7 without `.0`.
    static func text(_ value: Float) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        if value == value.rounded(.towardZero), value.magnitude < 1e7 {
            return value == 0 ? (value.sign == .minus ? "-0" : "0") : String(Int64(value))
        }
        return "\(value)"
    }

    // MARK: Forms

    /// The fields of a query string, form or multipart form, in order: dictionary entries sorted by key,
    /// record properties in declaration order under their styled keys, nested keys in brackets
    /// (`user[address][city]`), arrays by the array style, nil left out, Bools by the bool style.
    static func formFields(_ value: FuzzValue, options: ParameterEncodingOptions, namePrefix: String? = nil) -> [ExpectedField] {
        var fields: [ExpectedField] = []
        visit(value, name: namePrefix, options: options, into: &fields)
        return fields
    }

    private static func childName(_ name: String?, _ key: String) -> String {
        guard let name else { return key }
        return name + "[" + key + "]"
    }

    private static func visit(_ value: FuzzValue, name: String?, options: ParameterEncodingOptions, into fields: inout [ExpectedField]) {
        switch value {
        case .nilValue:
            return
        case .wrapped(let wrapped):
            visit(wrapped, name: name, options: options, into: &fields)
        case .dictionary(let entries, _):
            for entry in entries where !entry.value.isNil {
                visit(entry.value, name: childName(name, entry.key), options: options, into: &fields)
            }
        case .record(let record):
            for field in record.fields where !field.value.isNil {
                visit(field.value, name: childName(name, FuzzRecord.key(for: field.name, style: options.keyStyle)), options: options, into: &fields)
            }
        case .array(let elements, _):
            guard let name else { preconditionFailure("a top-level array has no name; the generator never makes one") }
            switch options.arrayStyle {
            case .brackets:
                for element in elements { visit(element, name: name + "[]", options: options, into: &fields) }
            case .indexed:
                for (index, element) in elements.enumerated() { visit(element, name: name + "[\(index)]", options: options, into: &fields) }
            case .repeatedKey:
                for element in elements { visit(element, name: name, options: options, into: &fields) }
            case .commaSeparated:
                let texts = elements.filter { !$0.isNil }.map { leaf($0, options: options).text }
                if !texts.isEmpty { fields.append(ExpectedField(name: name, value: texts.joined(separator: ","), number: nil, elements: texts)) }
            }
        default:
            guard let name else { preconditionFailure("a top-level scalar has no name; the generator never makes one") }
            let (text, number) = leaf(value, options: options)
            fields.append(ExpectedField(name: name, value: text, number: number))
        }
    }

    private static func leaf(_ value: FuzzValue, options: ParameterEncodingOptions) -> (text: String, number: ExpectedNumber?) {
        switch value {
        case .string(let value): return (value, nil)
        case .int(let value): return ("\(value)", nil)
        case .int32(let value): return ("\(value)", nil)
        case .uint8(let value): return ("\(value)", nil)
        case .uint64(let value): return ("\(value)", nil)
        case .int128(let value): return ("\(value)", nil)
        case .double(let value): return (text(value), .double(value))
        case .float(let value): return (text(value), .float(value))
        case .bool(let value):
            switch options.boolStyle {
            case .trueFalse: return (value ? "true" : "false", nil)
            case .numeric: return (value ? "1" : "0", nil)
            }
        case .wrapped(let wrapped): return leaf(wrapped, options: options)
        case .nilValue, .array, .dictionary, .record: preconditionFailure("not a leaf: \(value.dump)")
        }
    }

    /// Every array holds only scalars (or nils): what ``ParameterEncodingOptions/ArrayStyle/commaSeparated`` allows.
    static func allArraysHoldScalars(_ value: FuzzValue) -> Bool {
        switch value {
        case .wrapped(let wrapped): allArraysHoldScalars(wrapped)
        case .array(let elements, _): elements.allSatisfy(\.isScalar)
        case .dictionary(let entries, _): entries.allSatisfy { allArraysHoldScalars($0.value) }
        case .record(let record): record.fields.allSatisfy { allArraysHoldScalars($0.value) }
        default: true
        }
    }

    /// RFC 3986 unreserved characters: all a query string or form may hold unescaped.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// `text`'s UTF-8 bytes with every byte but the unreserved ones as `%XX` (uppercase), a space as `+` when `plus`.
    static func percentEncode(_ text: String, plus: Bool) -> String {
        var result = ""
        for byte in text.utf8 {
            if isUnreserved(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else if byte == 0x20, plus {
                result += "+"
            } else {
                result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return result
    }

    /// The exact query string of the fields: brackets are percent-encoded like any other reserved
    /// character, the commas between comma-separated elements are not.
    static func query(_ fields: [ExpectedField], options: ParameterEncodingOptions) -> String {
        let plus = options.spaceStyle == .plus
        return fields.map { field in
            let value = field.elements.map { $0.map { percentEncode($0, plus: plus) }.joined(separator: ",") } ?? percentEncode(field.value, plus: plus)
            return percentEncode(field.name, plus: plus) + "=" + value
        }.joined(separator: "&")
    }

    // MARK: JSON

    /// Dictionaries become objects with sorted keys, records objects in declaration order, nil
    /// entries and properties are left out unless `nilStyle` is `.null`; nil array elements and a
    /// nil top-level value are `null`; Bools are always `true`/`false`.
    static func json(_ value: FuzzValue, options: ParameterEncodingOptions) -> ExpectedJSON {
        let keepsNil = options.nilStyle == .null
        switch value {
        case .string(let value): return .string(value)
        case .int(let value): return .integer("\(value)")
        case .int32(let value): return .integer("\(value)")
        case .uint8(let value): return .integer("\(value)")
        case .uint64(let value): return .integer("\(value)")
        case .int128(let value): return .integer("\(value)")
        case .double(let value): return .double(value)
        case .float(let value): return .float(value)
        case .bool(let value): return .bool(value)
        case .nilValue: return .null
        case .wrapped(let wrapped): return json(wrapped, options: options)
        case .array(let elements, _): return .array(elements.map { json($0, options: options) })
        case .dictionary(let entries, _):
            return .object(entries.filter { keepsNil || !$0.value.isNil }.map { ($0.key, json($0.value, options: options)) })
        case .record(let record):
            return .object(record.fields.filter { keepsNil || !$0.value.isNil }.map {
                (FuzzRecord.key(for: $0.name, style: options.keyStyle), json($0.value, options: options))
            })
        }
    }

    // MARK: Multipart

    /// A name or file name in a part header: `"` as `%22`, CR as `%0D`, LF as `%0A` (WHATWG HTML), nothing else changed.
    static func headerEscaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: result += "%22"
            case 0x0D: result += "%0D"
            case 0x0A: result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A part's `Content-Type`: the given type without CR and LF.
    static func withoutLineBreaks(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars where scalar.value != 0x0D && scalar.value != 0x0A {
            result.unicodeScalars.append(scalar)
        }
        return result
    }
}

/// One expected multipart part.
struct ExpectedPart {
    let name: String
    let fileName: String?
    /// The `Content-Type` header's value, nil for text fields (which have none).
    let contentType: String?
    let content: Data

    var contentDisposition: String {
        var value = "form-data; name=\"" + FuzzReference.headerEscaped(name) + "\""
        if let fileName { value += "; filename=\"" + FuzzReference.headerEscaped(fileName) + "\"" }
        return value
    }

    /// The exact bytes of the part: RFC 7578 with CRLF line breaks.
    func bytes(boundary: String) -> Data {
        var head = "--" + boundary + "\r\nContent-Disposition: " + contentDisposition + "\r\n"
        if let contentType { head += "Content-Type: " + contentType + "\r\n" }
        head += "\r\n"
        return Data(head.utf8) + content + Data("\r\n".utf8)
    }

    var dump: String {
        "name: \(fuzzLiteral(name)), fileName: \(fileName.map(fuzzLiteral) ?? "nil"), contentType: \(contentType.map(fuzzLiteral) ?? "nil"), content: \(fuzzBytes(content))"
    }
}
