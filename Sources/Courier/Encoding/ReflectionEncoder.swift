import Foundation

/// The one reflection walk behind every format: it reads a value once, a struct's stored
/// properties from memory through its cached ``TypeLayout``'s ``StructFields`` (anything else
/// through `Mirror`), and tells a ``ParameterWriter`` what it finds. Generic over the writer so
/// each format gets a specialized walk with no dynamic dispatch per value.
///
/// Errors are ``EncodingFailure``s whose key path is filled in while they unwind, so the
/// walk keeps no path while it succeeds.
struct ReflectionEncoder<Writer: ParameterWriter> {
    /// Containers (structs, classes, arrays, dictionaries, converted values) nested deeper
    /// than this throw instead of risking a stack overflow.
    static var maximumDepth: Int { 64 }

    var writer: Writer
    private let dateStyle: ParameterEncodingOptions.DateStyle
    private let keyStyle: ParameterEncodingOptions.KeyStyle
    /// ``TypeLayout/forcesMirror``, read once per encode.
    private let forcesMirror = TypeLayout.forcesMirror
    private var depth = 0
    /// Objects being encoded, outermost first, to detect reference cycles.
    private var objectsInProgress: [ObjectIdentifier] = []

    init(writer: Writer, options: ParameterEncodingOptions) {
        self.writer = writer
        dateStyle = options.dateStyle
        keyStyle = options.keyStyle
    }

    /// Encodes any value. Casts are ordered by how common the type is in parameters.
    mutating func encode(_ value: Any) throws(EncodingFailure) {
        if let string = value as? String { return try writer.writeString(string) }
        if let int = value as? Int { return try writer.writeInteger(Int64(int)) }
        if let bool = value as? Bool { return try writer.writeBool(bool) }
        if let double = value as? Double { return try writeDouble(double) }
        // A struct or class seen before skips the casts below, which look up protocol conformances.
        if let layout = TypeLayout.cached(type(of: value), keyStyle: keyStyle, forcesMirror: forcesMirror) { return try encodeReflected(value, layout: layout) }
        if let convertible = value as? any ParameterConvertible { return try encodeConverted(convertible) }
        if let optional = value as? any OptionalProtocol {
            guard let wrapped = optional.wrappedAny else { return try writer.writeNull() }
            return try encode(wrapped)
        }
        if try encodeFoundationValue(value) { return }
        if try encodeOtherScalar(value) { return }
        if let dictionary = value as? any StringKeyedDictionaryProtocol { return try encodeDictionary(dictionary) }
        if let array = value as? any ArrayProtocol { return try encodeArray(array) }
        if let representable = value as? any RawRepresentable { return try encodeNested(representable.rawValue) }
        try encodeReflected(value)
    }

    // MARK: Scalars

    private mutating func encodeFoundationValue(_ value: Any) throws(EncodingFailure) -> Bool {
        if let date = value as? Date {
            try writeDate(date)
        } else if let url = value as? URL {
            try writer.writeString(url.absoluteString)
        } else if let uuid = value as? UUID {
            try writer.writeString(uuid.uuidString)
        } else if let decimal = value as? Decimal {
            guard decimal.isFinite else { throw EncodingFailure("Decimal NaN cannot be encoded") }
            try writer.writeNumber(decimal.description)
        } else if let data = value as? Data {
            try writer.writeString(data.base64EncodedString())
        } else {
            return false
        }
        return true
    }

    private mutating func encodeOtherScalar(_ value: Any) throws(EncodingFailure) -> Bool {
        if let integer = value as? any BinaryInteger {
            try writeInteger(integer)
        } else if let float = value as? Float {
            guard float.isFinite else { try writer.writeNonFiniteNumber(Double(float)); return true }
            try writer.writeNumber(shortestText(float))
        } else if let floatingPoint = value as? any BinaryFloatingPoint {
            try writeDouble(Double(floatingPoint))
        } else if let substring = value as? Substring {
            try writer.writeString(String(substring))
        } else if let character = value as? Character {
            try writer.writeString(String(character))
        } else {
            return false
        }
        return true
    }

    private mutating func writeInteger(_ integer: some BinaryInteger) throws(EncodingFailure) {
        if let signed = Int64(exactly: integer) {
            try writer.writeInteger(signed)
        } else if let unsigned = UInt64(exactly: integer) {
            try writer.writeInteger(unsigned)
        } else {
            try writer.writeNumber(integer.description)  // Int128 and wider
        }
    }

    private mutating func writeDouble(_ double: Double) throws(EncodingFailure) {
        guard double.isFinite else { return try writer.writeNonFiniteNumber(double) }
        try writer.writeNumber(shortestText(double))
    }

    private mutating func writeDate(_ date: Date) throws(EncodingFailure) {
        switch dateStyle {
        case .iso8601:
            guard let text = iso8601Text(date) else {
                throw EncodingFailure("\(date.timeIntervalSince1970) seconds since 1970 is outside the years 0000–9999 that ISO 8601 can write")
            }
            try writer.writeString(text)
        case .secondsSince1970:
            try writeDouble(date.timeIntervalSince1970)
        case .millisecondsSince1970:
            let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
            guard let exact = Int64(exactly: milliseconds) else { return try writeDouble(milliseconds) }
            try writer.writeInteger(exact)
        }
    }

    // MARK: Containers

    /// Counts one level of nesting around `body`, so that no input can overflow the stack.
    private mutating func nested(_ body: (inout Self) throws(EncodingFailure) -> Void) throws(EncodingFailure) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw EncodingFailure("the value is nested deeper than \(Self.maximumDepth) levels")
        }
        try body(&self)
        depth -= 1
    }

    private mutating func encodeNested(_ value: Any) throws(EncodingFailure) {
        try nested { (encoder: inout Self) throws(EncodingFailure) in try encoder.encode(value) }
    }

    private mutating func encodeConverted(_ convertible: any ParameterConvertible) throws(EncodingFailure) {
        let converted: any Sendable
        do {
            converted = try convertible.parameterValue
        } catch let failure as EncodingFailure {
            throw failure
        } catch {
            throw EncodingFailure("\(type(of: convertible)).parameterValue failed: \(error)")
        }
        try encodeNested(converted)
    }

    private mutating func encodeArray(_ array: any ArrayProtocol) throws(EncodingFailure) {
        try nested { (encoder: inout Self) throws(EncodingFailure) in
            try encoder.writer.beginArray()
            try array.forEachElement { (index: Int, element: Any) throws(EncodingFailure) in
                let mark = encoder.writer.beginElement(index)
                try encoder.encode(element, at: .index(index))
                encoder.writer.endEntry(mark)
            }
            encoder.writer.endArray()
        }
    }

    private mutating func encodeDictionary(_ dictionary: any StringKeyedDictionaryProtocol) throws(EncodingFailure) {
        try nested { (encoder: inout Self) throws(EncodingFailure) in
            try encoder.writer.beginObject()
            try dictionary.forEachSortedEntry { (key: String, value: Any) throws(EncodingFailure) in
                if !encoder.writer.writesNilProperties, isNil(value) { return }
                let mark = encoder.writer.beginDictionaryEntry(key)
                try encoder.encode(value, at: .dictionaryKey(key))
                encoder.writer.endEntry(mark)
            }
            encoder.writer.endObject()
        }
    }

    /// Encodes a child, adding its place to the key path of an error on the way out.
    private mutating func encode(_ value: Any, at component: EncodingFailure.PathComponent) throws(EncodingFailure) {
        do {
            try encode(value)
        } catch {
            var failure = error
            failure.reversedPath.append(component)
            throw failure
        }
    }

    // MARK: Structs and classes

    private mutating func encodeReflected(_ value: Any) throws(EncodingFailure) {
        try encodeReflected(value, layout: TypeLayout.of(value, keyStyle: keyStyle, forcesMirror: forcesMirror))
    }

    private mutating func encodeReflected(_ value: Any, layout: TypeLayout) throws(EncodingFailure) {
        switch layout.shape {
        case .structure(let storage):
            try encodeStructure(value, layout: layout, storage: storage)
        case .reflectedObject:
            let identifier = ObjectIdentifier(value as AnyObject)
            guard !objectsInProgress.contains(identifier) else {
                throw EncodingFailure("reference cycle: this \(type(of: value)) instance contains itself")
            }
            objectsInProgress.append(identifier)
            try nested { (encoder: inout Self) throws(EncodingFailure) in
                try encoder.writer.beginObject()
                try encoder.encodeReflectedFields(TypeLayout.mirrorChain(Mirror(reflecting: value)), layout: layout)
                encoder.writer.endObject()
            }
            objectsInProgress.removeLast()
        case .reflectedStructure:
            try nested { (encoder: inout Self) throws(EncodingFailure) in
                try encoder.writer.beginObject()
                try encoder.encodeReflectedFields([Mirror(reflecting: value)], layout: layout)
                encoder.writer.endObject()
            }
        case .reflectedCollection:
            try nested { (encoder: inout Self) throws(EncodingFailure) in
                try encoder.writer.beginArray()
                for (index, child) in Mirror(reflecting: value).children.enumerated() {
                    let mark = encoder.writer.beginElement(index)
                    try encoder.encode(child.value, at: .index(index))
                    encoder.writer.endEntry(mark)
                }
                encoder.writer.endArray()
            }
        case .unsupported(let reason):
            throw EncodingFailure(reason)
        }
    }

    /// Reads the struct's fields from memory through its ``StructValues``.
    private mutating func encodeStructure(_ value: Any, layout: TypeLayout, storage: StructValues) throws(EncodingFailure) {
        try nested { (encoder: inout Self) throws(EncodingFailure) in
            try encoder.writer.beginObject()
            let read = try storage.withFields(of: value) { (reader: borrowing StructValues.Reader) throws(EncodingFailure) in
                try encoder.encodeFields(layout.fields, from: reader)
            }
            guard read else { throw EncodingFailure("\(type(of: value)) could not be read as the type its layout describes") }
            encoder.writer.endObject()
        }
    }

    /// Writes each stored property; the common types as they are read, without boxing them in `Any`.
    private mutating func encodeFields(_ fields: [FieldLayout], from reader: borrowing StructValues.Reader) throws(EncodingFailure) {
        for field in fields {
            guard case .stored(let stored) = field.source else { continue }
            let slot = stored.slot
            do {
                switch stored.representation {
                case .string:
                    let mark = writer.beginProperty(field)
                    try writer.writeString(reader.read(slot, as: String.self))
                    writer.endEntry(mark)
                case .int:
                    let mark = writer.beginProperty(field)
                    try writer.writeInteger(Int64(reader.read(slot, as: Int.self)))
                    writer.endEntry(mark)
                case .bool:
                    let mark = writer.beginProperty(field)
                    try writer.writeBool(reader.read(slot, as: Bool.self))
                    writer.endEntry(mark)
                case .double:
                    let mark = writer.beginProperty(field)
                    try writeDouble(reader.read(slot, as: Double.self))
                    writer.endEntry(mark)
                case .optionalString:
                    guard let string = reader.read(slot, as: String?.self) else { try writeNil(field); continue }
                    let mark = writer.beginProperty(field)
                    try writer.writeString(string)
                    writer.endEntry(mark)
                case .optionalInt:
                    guard let int = reader.read(slot, as: Int?.self) else { try writeNil(field); continue }
                    let mark = writer.beginProperty(field)
                    try writer.writeInteger(Int64(int))
                    writer.endEntry(mark)
                case .optionalBool:
                    guard let bool = reader.read(slot, as: Bool?.self) else { try writeNil(field); continue }
                    let mark = writer.beginProperty(field)
                    try writer.writeBool(bool)
                    writer.endEntry(mark)
                case .optionalDouble:
                    guard let double = reader.read(slot, as: Double?.self) else { try writeNil(field); continue }
                    let mark = writer.beginProperty(field)
                    try writeDouble(double)
                    writer.endEntry(mark)
                case .other:
                    let value = reader.read(slot)
                    if field.unwrapsThroughMirror {
                        guard let wrapped = TypeLayout.wrappedValue(of: value) else { continue }
                        try encodeProperty(field, value: wrapped)
                    } else {
                        try encodeProperty(field, value: value)
                    }
                }
            } catch {
                var failure = error
                failure.reversedPath.append(.property(field.name))
                throw failure
            }
        }
    }

    /// Fields of a type laid out by `Mirror`, whose children match `layout.fields` in order.
    private mutating func encodeReflectedFields(_ mirrors: [Mirror], layout: TypeLayout) throws(EncodingFailure) {
        var index = 0
        for mirror in mirrors {
            for child in mirror.children {
                let field = layout.fields[index]
                index += 1
                if case .skipped = field.source { continue }
                do {
                    if field.unwrapsThroughMirror {
                        guard let wrapped = TypeLayout.wrappedValue(of: child.value) else { continue }
                        try encodeProperty(field, value: wrapped)
                    } else {
                        try encodeProperty(field, value: child.value)
                    }
                } catch {
                    var failure = error
                    failure.reversedPath.append(.property(field.name))
                    throw failure
                }
            }
        }
    }

    /// Encodes a property's value (a wrapper's wrapped value, unwrapped by the caller).
    private mutating func encodeProperty(_ field: FieldLayout, value: Any) throws(EncodingFailure) {
        if field.mayBeNil, isNil(value) { return try writeNil(field) }
        let mark = writer.beginProperty(field)
        try encode(value)
        writer.endEntry(mark)
    }

    private mutating func writeNil(_ field: FieldLayout) throws(EncodingFailure) {
        guard writer.writesNilProperties else { return }
        let mark = writer.beginProperty(field)
        try writer.writeNull()
        writer.endEntry(mark)
    }
}

private func isNil(_ value: Any) -> Bool {
    guard let optional = value as? any OptionalProtocol else { return false }
    guard let wrapped = optional.wrappedAny else { return true }
    return isNil(wrapped)
}
