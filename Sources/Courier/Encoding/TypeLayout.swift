@_spi(Reflection) import Swift
import Foundation

/// How a type is encoded: for a struct or class, its stored properties in encoding order
/// (superclass first) with their offsets and keys. Computed once per type and key style, then cached.
///
/// Stored properties are listed with the standard library's `_forEachField` (SPI, stable since
/// Swift 5.2), which gives each property's name, type and byte offset from type metadata,
/// so values are read straight from memory. `Mirror` would work too but resolves each child's
/// type by name on every access, which made encoding slower than `JSONEncoder`.
/// Types `_forEachField` cannot describe fall back to `Mirror`.
final class TypeLayout: Sendable {
    enum Shape: Sendable {
        /// A struct read at ``FieldLayout/offset``s from its storage.
        case structure
        /// A class read at ``FieldLayout/offset``s from the object.
        case object
        /// A struct or class read through `Mirror`, whose children match ``fields`` one to one.
        case reflectedStructure
        case reflectedObject
        /// A collection that is not an `Array`, read through `Mirror`.
        case reflectedCollection
        /// A type that has no parameter form; the reason says why.
        case unsupported(String)
    }

    let shape: Shape
    let fields: [FieldLayout]
    /// For `.structure`: reads a value's bytes as the struct's own type.
    let bytesReader: (any StructureBytes.Type)?

    private init(shape: Shape, fields: [FieldLayout] = [], bytesReader: (any StructureBytes.Type)? = nil) {
        self.shape = shape
        self.fields = fields
        self.bytesReader = bytesReader
    }

    private struct CacheKey: Hashable {
        let type: ObjectIdentifier
        let keyStyle: ParameterEncodingOptions.KeyStyle
    }

    private static let cache = Locked<[CacheKey: TypeLayout]>([:])

    /// The cached layout of `type`, if a value of that type was reflected before. Only types that
    /// are none of the encoder's special cases get a layout, so a hit skips all of them.
    static func cached(_ type: Any.Type, keyStyle: ParameterEncodingOptions.KeyStyle) -> TypeLayout? {
        let key = CacheKey(type: ObjectIdentifier(type), keyStyle: keyStyle)
        return cache.withLock { $0[key] }
    }

    /// The layout of `value`'s dynamic type.
    static func of(_ value: Any, keyStyle: ParameterEncodingOptions.KeyStyle) throws(EncodingFailure) -> TypeLayout {
        let type = type(of: value)
        let key = CacheKey(type: ObjectIdentifier(type), keyStyle: keyStyle)
        if let layout = cache.withLock({ $0[key] }) { return layout }
        let layout = try build(value, type: type, keyStyle: keyStyle)
        cache.withLock { $0[key] = layout }
        return layout
    }

    private static func build(_ value: Any, type: Any.Type, keyStyle: ParameterEncodingOptions.KeyStyle) throws(EncodingFailure) -> TypeLayout {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct:
            if let fields = try storedProperties(of: type, isClass: false, keyStyle: keyStyle) {
                return TypeLayout(shape: .structure, fields: fields, bytesReader: _openExistential(type, do: structureBytes(for:)))
            }
            return TypeLayout(shape: .reflectedStructure, fields: try reflectedProperties(of: type, mirrors: [mirror], keyStyle: keyStyle))
        case .class:
            if let fields = try storedProperties(of: type, isClass: true, keyStyle: keyStyle) {
                return TypeLayout(shape: .object, fields: fields)
            }
            return TypeLayout(shape: .reflectedObject, fields: try reflectedProperties(of: type, mirrors: mirrorChain(mirror), keyStyle: keyStyle))
        case .collection:
            return TypeLayout(shape: .reflectedCollection)
        case .dictionary:
            return TypeLayout(shape: .unsupported("\(type) cannot be encoded: dictionary keys must be String"))
        case .set:
            return TypeLayout(shape: .unsupported("\(type) cannot be encoded: a set has no order; encode a sorted array instead"))
        case .enum:
            return TypeLayout(shape: .unsupported("enum \(type) cannot be encoded: give it a String or Int raw value, or adopt ParameterConvertible"))
        case .tuple:
            return TypeLayout(shape: .unsupported("tuple \(type) cannot be encoded: use a struct"))
        default:
            return TypeLayout(shape: .unsupported("\(type) cannot be encoded: closures, metatypes and opaque values have no parameter form"))
        }
    }

    /// A class's mirror and its superclasses' mirrors, base class first.
    static func mirrorChain(_ mirror: Mirror) -> [Mirror] {
        var mirrors = [mirror]
        while let superclassMirror = mirrors[mirrors.count - 1].superclassMirror {
            mirrors.append(superclassMirror)
        }
        return mirrors.reversed()
    }

    // MARK: Building

    /// Stored properties from type metadata, or nil when the runtime cannot describe the type.
    private static func storedProperties(of type: Any.Type, isClass: Bool, keyStyle: ParameterEncodingOptions.KeyStyle) throws(EncodingFailure) -> [FieldLayout]? {
        guard hasOnlyStrongPlainFields(type, isClass: isClass) else { return nil }
        var builder = Builder(type: type, keyStyle: keyStyle)
        let described = _forEachField(of: type, options: _EachFieldOptions(rawValue: isClass ? 1 : 0)) { cName, offset, fieldType, _ in
            builder.add(label: String(cString: cName), offset: offset, type: fieldType)
            return true
        }
        guard described else { return nil }
        return try builder.finish()
    }

    /// Whether every stored property can be read from memory as its type: `weak` and `unowned`
    /// storage cannot (a weak reference is not a plain pointer), nor can functions, whose
    /// types `_forEachFieldWithKeyPath` refuses. Those types are read through `Mirror`.
    private static func hasOnlyStrongPlainFields<T>(_ type: T.Type, isClass: Bool) -> Bool {
        _forEachFieldWithKeyPath(of: type, options: _EachFieldOptions(rawValue: isClass ? 1 : 0)) { _, _ in true }
    }

    private static func reflectedProperties(of type: Any.Type, mirrors: [Mirror], keyStyle: ParameterEncodingOptions.KeyStyle) throws(EncodingFailure) -> [FieldLayout] {
        var builder = Builder(type: type, keyStyle: keyStyle)
        for mirror in mirrors {
            for child in mirror.children {
                builder.addReflected(label: child.label ?? "", value: child.value)
            }
        }
        return try builder.finish()
    }

    /// Collects fields, applying the type's ``ParameterKeyMapping`` and key style, and checks
    /// that no two properties share a key and that the mapping names only real properties.
    private struct Builder {
        let type: Any.Type
        let keyStyle: ParameterEncodingOptions.KeyStyle
        var mapping: [String: ParameterKey]
        var fields: [FieldLayout] = []
        var namesByKey: [String: String] = [:]
        var failure: EncodingFailure?

        init(type: Any.Type, keyStyle: ParameterEncodingOptions.KeyStyle) {
            self.type = type
            self.keyStyle = keyStyle
            mapping = (type as? any ParameterKeyMapping.Type)?.parameterKeys ?? [:]
        }

        /// Lazy storage (`$__lazy_storage_$_name`) and compiler storage (`_$observationRegistrar`)
        /// are skipped; `_name` whose type stores a `wrappedValue`, or adopts ``ParameterConvertible``,
        /// is a property wrapper, encoded under `name`. A wrapper with a computed `wrappedValue`
        /// cannot be recognized and is encoded as the struct it is, under `_name`, unless it adopts
        /// ``ParameterConvertible``.
        mutating func add(label: String, offset: Int, type fieldType: Any.Type) {
            if label.hasPrefix("$") || label.hasPrefix("_$") { return fields.append(.skipped(label)) }
            if label.hasPrefix("_") {
                if let wrapped = TypeLayout.wrappedValueField(of: fieldType) {
                    return addField(name: String(label.dropFirst()), offset: offset + wrapped.offset, type: wrapped.type)
                }
                if fieldType is any ParameterConvertible.Type {
                    return addField(name: String(label.dropFirst()), offset: offset, type: fieldType)
                }
                if fieldType is AnyClass, classDeclaresWrappedValue(fieldType) {
                    return addField(name: String(label.dropFirst()), kind: .reflected, isReflectedWrapper: true, offset: offset, mayBeNil: true)
                }
            }
            addField(name: label, offset: offset, type: fieldType)
        }

        mutating func addReflected(label: String, value: Any) {
            if label.hasPrefix("$") || label.hasPrefix("_$") { return fields.append(.skipped(label)) }
            if label.hasPrefix("_"), let wrapped = TypeLayout.wrappedValue(of: value) {
                return addField(name: String(label.dropFirst()), kind: .reflected, isReflectedWrapper: true, offset: 0,
                                mayBeNil: Swift.type(of: wrapped) is any OptionalProtocol.Type)
            }
            addField(name: label, kind: .reflected, offset: 0, mayBeNil: Swift.type(of: value) is any OptionalProtocol.Type)
        }

        private mutating func addField(name: String, offset: Int, type fieldType: Any.Type) {
            addField(name: name, kind: FieldLayout.kind(of: fieldType), offset: offset, mayBeNil: fieldType is any OptionalProtocol.Type)
        }

        private mutating func addField(name: String, kind: FieldLayout.Kind, isReflectedWrapper: Bool = false, offset: Int, mayBeNil: Bool) {
            let key: String
            switch mapping.removeValue(forKey: name) {
            case .excluded: return fields.append(.skipped(name))
            case .renamed(let renamed): key = renamed
            case nil: key = keyStyle.key(for: name)
            }
            if let other = namesByKey[key], failure == nil {
                failure = EncodingFailure("properties `\(other)` and `\(name)` of \(type) are both encoded as \"\(key)\"; rename one with ParameterKeyMapping")
                failure?.reversedPath = [.property(name)]
            }
            namesByKey[key] = name
            fields.append(FieldLayout(name: name, key: key, kind: kind, isReflectedWrapper: isReflectedWrapper, offset: offset, mayBeNil: mayBeNil))
        }

        private func classDeclaresWrappedValue(_ classType: Any.Type) -> Bool {
            var found = false
            _forEachField(of: classType, options: _EachFieldOptions(rawValue: 1)) { name, _, _, _ in
                found = found || String(cString: name) == "wrappedValue"
                return true
            }
            return found
        }

        func finish() throws(EncodingFailure) -> [FieldLayout] {
            if let failure { throw failure }
            if let unknown = mapping.keys.sorted().first {
                throw EncodingFailure("\(type).parameterKeys names `\(unknown)`, which is not a stored property")
            }
            return fields
        }
    }

    /// The offset and type of a property-wrapper struct's stored `wrappedValue`, if it has one.
    private static func wrappedValueField(of type: Any.Type) -> (offset: Int, type: Any.Type)? {
        var result: (offset: Int, type: Any.Type)?
        _forEachField(of: type, options: _EachFieldOptions(rawValue: 0)) { name, offset, fieldType, _ in
            if String(cString: name) == "wrappedValue" { result = (offset, fieldType) }
            return result == nil
        }
        return result
    }

    /// A property wrapper's `wrappedValue`, found by reflection since wrappers share no protocol.
    static func wrappedValue(of wrapper: Any) -> Any? {
        let mirror = Mirror(reflecting: wrapper)
        return mirror.children.first { $0.label == "wrappedValue" }?.value
            ?? mirror.superclassMirror?.children.first { $0.label == "wrappedValue" }?.value
    }
}

/// Reads a struct's bytes in place as its own type `T`.
///
/// A value can reach the encoder boxed more than once (an `any Sendable` inside an `[Any]`);
/// opening such an `Any` as a generic parameter reads the inner box, not the struct, and the
/// layout's offsets then point into the box. Casting to `T`, the dynamic type the layout was
/// built for, unwraps every layer.
protocol StructureBytes: SendableMetatype {
    /// Calls `body` with the address of `value`'s bytes; false when `value` is not a `Self`-described struct.
    static func withBytes(of value: Any, _ body: (UnsafeRawPointer) -> Void) -> Bool
}

private enum StructureReader<T>: StructureBytes {
    static func withBytes(of value: Any, _ body: (UnsafeRawPointer) -> Void) -> Bool {
        guard let typed = value as? T else { return false }
        withUnsafeBytes(of: typed) { bytes in
            if let base = bytes.baseAddress { body(base) }
        }
        return true
    }
}

private func structureBytes<T>(for type: T.Type) -> any StructureBytes.Type {
    StructureReader<T>.self
}
