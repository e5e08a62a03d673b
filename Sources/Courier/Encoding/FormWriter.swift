import Foundation

/// Flattens a value into `key=value` pairs with `user[address][city]` style keys: either one
/// percent-encoded string (query strings and `application/x-www-form-urlencoded` bodies), or a
/// list of raw name/value fields (multipart forms, whose parts are not percent-encoded).
///
/// The brackets of the nesting syntax are percent-encoded like any other reserved character
/// (`tags%5B%5D=a`): RFC 3986 does not allow a literal `[` in a query, Foundation's URL
/// types reject or re-escape it, and Rails, PHP and Werkzeug decode keys before parsing them.
struct FormWriter: ParameterWriter {
    enum Output {
        case percentEncoded
        case fields
    }

    let output: Output
    private let arrayStyle: ParameterEncodingOptions.ArrayStyle
    private let boolStyle: ParameterEncodingOptions.BoolStyle
    /// Unreserved characters, with a space as `+` or `%20` by the options.
    private let percentEncoding: PercentEncoding
    let writesNilProperties = false

    /// The percent-encoded form, `a=1&b=2` (``Output/percentEncoded``).
    private(set) var bytes: [UInt8] = []
    /// The raw fields (``Output/fields``).
    private(set) var fields: [(name: [UInt8], value: [UInt8])] = []

    /// The key of the value being written, escaped for the output, e.g. `user%5Btags%5D%5B%5D`.
    private var prefix: [UInt8] = []
    /// How many keys make up `prefix`; a value with none is a top-level scalar, which has no name.
    private var keyDepth = 0
    /// Inside a ``ParameterEncodingOptions/ArrayStyle/commaSeparated`` array: whether it has a value yet.
    private var commaArrayHasValue: Bool?

    init(options: ParameterEncodingOptions, output: Output, namePrefix: String? = nil, capacity: Int = 128) {
        self.output = output
        arrayStyle = options.arrayStyle
        boolStyle = options.boolStyle
        percentEncoding = .unreserved(spaceAsPlus: options.spaceStyle == .plus)
        bytes.reserveCapacity(capacity)
        prefix.reserveCapacity(64)
        if let namePrefix {
            switch output {
            case .fields: prefix.appendUTF8(namePrefix)
            case .percentEncoded: prefix.appendPercentEncoded(namePrefix, percentEncoding)
            }
            keyDepth = 1
        }
    }

    // MARK: Keys

    mutating func beginObject() throws(EncodingFailure) {
        if commaArrayHasValue != nil { throw nestedInCommaArray }
    }

    mutating func endObject() {}

    mutating func beginProperty(_ field: FieldLayout) -> Int {
        let mark = self.mark
        openBracket()
        switch output {
        case .fields: prefix.append(contentsOf: field.rawKey)
        case .percentEncoded:
            if percentEncoding.spaceAsPlus, field.keyHasSpace {
                prefix.appendPercentEncoded(String(decoding: field.rawKey, as: UTF8.self), percentEncoding)
            } else {
                prefix.append(contentsOf: field.formKey)
            }
        }
        closeBracket()
        keyDepth += 1
        return mark
    }

    mutating func beginDictionaryEntry(_ key: String) -> Int {
        let mark = self.mark
        openBracket()
        switch output {
        case .fields: prefix.appendUTF8(key)
        case .percentEncoded: prefix.appendPercentEncoded(key, percentEncoding)
        }
        closeBracket()
        keyDepth += 1
        return mark
    }

    /// Elements add `[]` or `[0]` to their array's key but no name: an array with no key
    /// (at the top level) has nothing to name its values, which ``beginValue()`` rejects.
    mutating func beginElement(_ index: Int) -> Int {
        let mark = self.mark
        guard keyDepth > 0 else { return mark }
        switch arrayStyle {
        case .brackets:
            appendBracket(open: true)
            appendBracket(open: false)
        case .indexed:
            appendBracket(open: true)
            prefix.appendDecimal(Int64(index))
            appendBracket(open: false)
        case .repeatedKey, .commaSeparated:
            break
        }
        return mark
    }

    mutating func endEntry(_ mark: Int) {
        prefix.removeSubrange((mark & 0xFFFF_FFFF)...)
        keyDepth = mark >> 32
    }

    mutating func beginArray() throws(EncodingFailure) {
        if commaArrayHasValue != nil { throw nestedInCommaArray }
        if arrayStyle == .commaSeparated { commaArrayHasValue = false }
    }

    mutating func endArray() {
        commaArrayHasValue = nil
    }

    /// The prefix length and key depth to return to, packed in one `Int`.
    private var mark: Int { prefix.count | keyDepth << 32 }

    private var nestedInCommaArray: EncodingFailure {
        EncodingFailure("a commaSeparated array can hold only single values, not arrays, structs or dictionaries")
    }

    /// A nested key goes in brackets (`user[name]`); the first key does not.
    private mutating func openBracket() {
        if keyDepth > 0 { appendBracket(open: true) }
    }

    private mutating func closeBracket() {
        if keyDepth > 0 { appendBracket(open: false) }
    }

    private mutating func appendBracket(open: Bool) {
        switch output {
        case .fields: prefix.append(open ? UInt8(ascii: "[") : UInt8(ascii: "]"))
        case .percentEncoded:
            if open { prefix.appendASCII("%5B") } else { prefix.appendASCII("%5D") }
        }
    }

    // MARK: Values

    /// Starts a value: `&key=`, or `,` after the first value of a comma-separated array.
    private mutating func beginValue() throws(EncodingFailure) {
        guard keyDepth > 0 else {
            throw EncodingFailure("query strings and forms need named values: the top-level value must be a struct, a class or a [String: Value] dictionary")
        }
        if let hasValue = commaArrayHasValue {
            if hasValue {
                switch output {
                case .fields: fields[fields.count - 1].value.append(UInt8(ascii: ","))
                case .percentEncoded: bytes.append(UInt8(ascii: ","))
                }
                return
            }
            commaArrayHasValue = true
        }
        switch output {
        case .fields:
            fields.append((name: prefix, value: []))
        case .percentEncoded:
            if !bytes.isEmpty { bytes.append(UInt8(ascii: "&")) }
            bytes.append(contentsOf: prefix)
            bytes.append(UInt8(ascii: "="))
        }
    }

    private mutating func appendValue(_ text: String) {
        switch output {
        case .fields: fields[fields.count - 1].value.appendUTF8(text)
        case .percentEncoded: bytes.appendPercentEncoded(text, percentEncoding)
        }
    }

    /// Appends text made only of unreserved characters (digits, `-`, letters), which needs no escaping.
    private mutating func appendUnreserved(_ write: (inout [UInt8]) -> Void) {
        switch output {
        case .fields: write(&fields[fields.count - 1].value)
        case .percentEncoded: write(&bytes)
        }
    }

    mutating func writeString(_ value: String) throws(EncodingFailure) {
        try beginValue()
        appendValue(value)
    }

    mutating func writeBool(_ value: Bool) throws(EncodingFailure) {
        try beginValue()
        switch boolStyle {
        case .trueFalse: appendUnreserved { value ? $0.appendASCII("true") : $0.appendASCII("false") }
        case .numeric: appendUnreserved { $0.append(value ? UInt8(ascii: "1") : UInt8(ascii: "0")) }
        }
    }

    mutating func writeInteger(_ value: Int64) throws(EncodingFailure) {
        try beginValue()
        appendUnreserved { $0.appendDecimal(value) }
    }

    mutating func writeInteger(_ value: UInt64) throws(EncodingFailure) {
        try beginValue()
        appendUnreserved { $0.appendDecimal(value) }
    }

    mutating func writeNumber(_ text: String) throws(EncodingFailure) {
        try beginValue()
        appendValue(text)
    }

    mutating func writeNonFiniteNumber(_ value: Double) throws(EncodingFailure) {
        try beginValue()
        appendValue(value.description)
    }

    /// Forms have no null: the key is left out.
    mutating func writeNull() throws(EncodingFailure) {}
}
