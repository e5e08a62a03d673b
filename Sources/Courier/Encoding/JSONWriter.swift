import Foundation

/// Writes compact RFC 8259 JSON into a byte buffer.
struct JSONWriter: ParameterWriter {
    private(set) var bytes: [UInt8] = []
    let writesNilProperties: Bool
    /// Whether the next key or element follows another one and needs a comma.
    private var needsComma = false

    init(options: ParameterEncodingOptions, capacity: Int = 256) {
        writesNilProperties = options.nilStyle == .null
        bytes.reserveCapacity(capacity)
    }

    mutating func beginObject() throws(EncodingFailure) {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func beginProperty(_ field: FieldLayout) -> Int {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(contentsOf: field.jsonKey)
        return 0
    }

    mutating func beginDictionaryEntry(_ key: String) -> Int {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.appendJSONString(key)
        bytes.append(UInt8(ascii: ":"))
        return 0
    }

    mutating func endEntry(_ mark: Int) {}

    mutating func beginArray() throws(EncodingFailure) {
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    mutating func beginElement(_ index: Int) -> Int {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        return 0
    }

    mutating func writeString(_ value: String) throws(EncodingFailure) {
        bytes.appendJSONString(value)
        needsComma = true
    }

    mutating func writeBool(_ value: Bool) throws(EncodingFailure) {
        if value { bytes.appendASCII("true") } else { bytes.appendASCII("false") }
        needsComma = true
    }

    mutating func writeInteger(_ value: Int64) throws(EncodingFailure) {
        bytes.appendDecimal(value)
        needsComma = true
    }

    mutating func writeInteger(_ value: UInt64) throws(EncodingFailure) {
        bytes.appendDecimal(value)
        needsComma = true
    }

    mutating func writeNumber(_ text: String) throws(EncodingFailure) {
        bytes.appendUTF8(text)
        needsComma = true
    }

    mutating func writeNonFiniteNumber(_ value: Double) throws(EncodingFailure) {
        throw EncodingFailure("\(value) cannot be written in JSON, which has no NaN or infinity")
    }

    mutating func writeNull() throws(EncodingFailure) {
        bytes.appendASCII("null")
        needsComma = true
    }
}
