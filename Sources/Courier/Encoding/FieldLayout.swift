import Foundation

/// One stored property of a reflected type, with its key already converted and escaped
/// for every output format, so encoding a value does no string work on keys.
struct FieldLayout: Sendable {
    /// How the property's value is read. The common types are read straight from memory
    /// with their static type; everything else is boxed in an `Any` and goes through
    /// ``ReflectionEncoder/encode(_:)``.
    enum Kind: Sendable {
        case string, int, bool, double
        case optionalString, optionalInt, optionalBool, optionalDouble
        /// Any other type, read from memory as this type.
        case other(Any.Type)
        /// A property wrapper's storage whose `wrappedValue` could not be located statically;
        /// read through `Mirror` (also every field of a type laid out by `Mirror`).
        case reflected
        /// Lazy storage, compiler-synthesized storage, or excluded by ``ParameterKeyMapping``.
        case skipped
    }

    /// The Swift property name as written (a wrapper's name without its `_`); used in error key paths.
    let name: String
    let kind: Kind
    /// Whether this is a property wrapper laid out through `Mirror` (``Kind/reflected``).
    let isReflectedWrapper: Bool
    /// Byte offset of the value (a wrapper's `wrappedValue`) from the start of the struct or object.
    let offset: Int
    /// Whether the value may be nil, so the encoder checks for nil only where it can occur.
    let mayBeNil: Bool
    /// The key's UTF-8 bytes, for multipart field names.
    let rawKey: [UInt8]
    /// `"key":`, escaped.
    let jsonKey: [UInt8]
    /// The key percent-encoded with spaces as `%20` (a space in a key is rare; ``FormWriter`` re-escapes then).
    let formKey: [UInt8]
    let keyHasSpace: Bool

    init(name: String, key: String, kind: Kind, isReflectedWrapper: Bool = false, offset: Int, mayBeNil: Bool) {
        self.name = name
        self.kind = kind
        self.isReflectedWrapper = isReflectedWrapper
        self.offset = offset
        self.mayBeNil = mayBeNil
        rawKey = Array(key.utf8)
        var jsonKey: [UInt8] = []
        jsonKey.appendJSONString(key)
        jsonKey.append(UInt8(ascii: ":"))
        self.jsonKey = jsonKey
        var formKey: [UInt8] = []
        formKey.appendPercentEncoded(key, .unreserved)
        self.formKey = formKey
        keyHasSpace = key.utf8.contains(0x20)
    }

    static func skipped(_ name: String) -> FieldLayout {
        FieldLayout(name: name, key: "", kind: .skipped, offset: 0, mayBeNil: false)
    }

    static func kind(of type: Any.Type) -> Kind {
        if type == String.self { return .string }
        if type == Int.self { return .int }
        if type == Bool.self { return .bool }
        if type == Double.self { return .double }
        if type == String?.self { return .optionalString }
        if type == Int?.self { return .optionalInt }
        if type == Bool?.self { return .optionalBool }
        if type == Double?.self { return .optionalDouble }
        return .other(type)
    }
}
