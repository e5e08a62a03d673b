import Foundation

/// One stored property of a reflected type, with its key already converted and escaped
/// for every output format, so encoding a value does no string work on keys.
struct FieldLayout: Sendable {
    /// Where the property's value comes from.
    enum Source: Sendable {
        /// Read from memory through the type's ``StructValues``.
        case stored(Stored)
        /// The `Mirror` child at the same position (every field of a type laid out by `Mirror`).
        case mirrored
        /// Lazy storage, compiler-synthesized storage, or excluded by ``ParameterKeyMapping``.
        case skipped
    }

    /// A property read from memory: a field of the struct, or a property wrapper's stored `wrappedValue`.
    struct Stored: Sendable {
        /// How the value is read: the common types as themselves, without boxing them in `Any`.
        enum Representation: Sendable {
            case string, int, bool, double
            case optionalString, optionalInt, optionalBool, optionalDouble
            /// Any other type, boxed in an `Any` and handed to ``ReflectionEncoder/encode(_:)``.
            case other
        }

        let slot: FieldSlot
        let representation: Representation

        init(_ slot: FieldSlot, type: Any.Type) {
            self.slot = slot
            representation =
                if type == String.self { .string }
                else if type == Int.self { .int }
                else if type == Bool.self { .bool }
                else if type == Double.self { .double }
                else if type == String?.self { .optionalString }
                else if type == Int?.self { .optionalInt }
                else if type == Bool?.self { .optionalBool }
                else if type == Double?.self { .optionalDouble }
                else { .other }
        }
    }

    /// The Swift property name as written (a wrapper's name without its `_`); used in error key paths.
    let name: String
    let source: Source
    /// Whether the value read is a property wrapper whose `wrappedValue` is found through `Mirror`
    /// (a class, or a struct that `Mirror` laid out); the property is its wrapped value.
    let unwrapsThroughMirror: Bool
    /// Whether the value may be nil, so the encoder checks for nil only where it can occur.
    let mayBeNil: Bool
    /// The key's UTF-8 bytes, for multipart field names.
    let rawKey: [UInt8]
    /// `"key":`, escaped.
    let jsonKey: [UInt8]
    /// The key percent-encoded with spaces as `%20` (a space in a key is rare; ``FormWriter`` re-escapes then).
    let formKey: [UInt8]
    let keyHasSpace: Bool

    init(name: String, key: String, source: Source, unwrapsThroughMirror: Bool = false, mayBeNil: Bool) {
        self.name = name
        self.source = source
        self.unwrapsThroughMirror = unwrapsThroughMirror
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
        FieldLayout(name: name, key: "", source: .skipped, mayBeNil: false)
    }
}
