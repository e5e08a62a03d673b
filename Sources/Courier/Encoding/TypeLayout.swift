import Foundation

/// How a type is encoded: for a struct or class, its stored properties in encoding order
/// (superclass first) with their keys. Computed once per type and key style, then cached.
///
/// `Mirror` defines what a value's properties are. Structs whose stored properties can all be read
/// from memory are read through ``StructFields`` instead, which lists the same properties from
/// type metadata and is much faster; classes, `CustomReflectable` types (whose `Mirror` is their
/// own) and structs ``StructFields`` cannot describe are read through `Mirror`.
final class TypeLayout: Sendable {
    enum Shape: Sendable {
        /// A struct read from memory through its ``StructValues``; ``fields`` say which fields, in order.
        case structure(StructValues)
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

    private init(shape: Shape, fields: [FieldLayout] = []) {
        self.shape = shape
        self.fields = fields
    }

    /// Whether values of this type are read through `Mirror` rather than from memory.
    var readsThroughMirror: Bool {
        if case .structure = shape { return false }
        return true
    }

    /// Set (by tests) to read every struct through `Mirror`, the reference meaning, so that the
    /// memory path can be checked against it.
    ///
    /// A task-local rather than a global: Swift Testing runs tests concurrently, and a test's
    /// setting must neither leak into another test nor race with it (a task-local is read-only
    /// outside `withValue`, so there is nothing to synchronize). Reading it costs one lookup per
    /// top-level encode (``ReflectionEncoder`` reads it once), and the cache below is keyed by it,
    /// so a forced layout never serves an unforced encode or the reverse.
    @TaskLocal static var forcesMirror = false

    private struct CacheKey: Hashable {
        let type: ObjectIdentifier
        let keyStyle: ParameterEncodingOptions.KeyStyle
        let forcesMirror: Bool
    }

    private static let cache = Locked<[CacheKey: TypeLayout]>([:])

    /// The cached layout of `type`, if a value of that type was reflected before. Only types that
    /// are none of the encoder's special cases get a layout, so a hit skips all of them.
    static func cached(_ type: Any.Type, keyStyle: ParameterEncodingOptions.KeyStyle, forcesMirror: Bool) -> TypeLayout? {
        let key = CacheKey(type: ObjectIdentifier(type), keyStyle: keyStyle, forcesMirror: forcesMirror)
        return cache.withLock { $0[key] }
    }

    /// The layout of `value`'s dynamic type.
    static func of(_ value: Any, keyStyle: ParameterEncodingOptions.KeyStyle, forcesMirror: Bool) throws(EncodingFailure) -> TypeLayout {
        let type = type(of: value)
        let key = CacheKey(type: ObjectIdentifier(type), keyStyle: keyStyle, forcesMirror: forcesMirror)
        if let layout = cache.withLock({ $0[key] }) { return layout }
        let layout = try build(value, type: type, keyStyle: keyStyle, forcesMirror: forcesMirror)
        cache.withLock { $0[key] = layout }
        return layout
    }

    private static func build(_ value: Any, type: Any.Type, keyStyle: ParameterEncodingOptions.KeyStyle,
                              forcesMirror: Bool) throws(EncodingFailure) -> TypeLayout {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct:
            if !forcesMirror, !(type is any CustomReflectable.Type), let storage = StructFields(type) {
                var builder = Builder(type: type, keyStyle: keyStyle)
                for field in storage.fields { builder.add(field) }
                return TypeLayout(shape: .structure(storage.values), fields: try builder.finish())
            }
            return TypeLayout(shape: .reflectedStructure, fields: try reflectedProperties(of: type, mirrors: [mirror], keyStyle: keyStyle))
        case .class:
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
    ///
    /// Lazy storage (`$__lazy_storage_$_name`) and compiler storage (`_$observationRegistrar`)
    /// are skipped; `_name` that adopts ``ParameterConvertible`` (first: its `parameterValue` is
    /// what it sends, even if it stores a `wrappedValue`), or stores a `wrappedValue`, is a property
    /// wrapper, encoded under `name`. A wrapper with a computed `wrappedValue`
    /// cannot be recognized and is encoded as the struct it is, under `_name`, unless it adopts
    /// ``ParameterConvertible``. Both paths apply these rules alike: ``add(_:)`` from a
    /// field's static type, ``addReflected(label:value:)`` from the child `Mirror` gives.
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

        mutating func add(_ field: StructFields.Field) {
            let label = field.name
            let own = FieldLayout.Stored(field.slot, type: field.type)
            if label.hasPrefix("$") || label.hasPrefix("_$") { return fields.append(.skipped(label)) }
            if label.hasPrefix("_") {
                let name = String(label.dropFirst())
                // A converting wrapper says what it sends, even when it stores its wrappedValue
                // (a redacting one must never send the value it stores).
                if field.type is any ParameterConvertible.Type {
                    return addField(name: name, source: .stored(own), mayBeNil: field.mayHoldNil)
                }
                if let wrapped = field.wrappedValue {
                    let stored = FieldLayout.Stored(wrapped.slot, type: wrapped.type)
                    return addField(name: name, source: .stored(stored), mayBeNil: wrapped.mayHoldNil)
                }
                if field.type is AnyClass, StructFields.classStoresProperty(named: "wrappedValue", in: field.type) {
                    return addField(name: name, source: .stored(own), unwrapsThroughMirror: true, mayBeNil: true)
                }
            }
            addField(name: label, source: .stored(own), mayBeNil: field.mayHoldNil)
        }

        /// `Mirror` gives no static types, so every field may be nil: a property typed `Any` can
        /// hold nil whatever the value the layout is built from held.
        mutating func addReflected(label: String, value: Any) {
            if label.hasPrefix("$") || label.hasPrefix("_$") { return fields.append(.skipped(label)) }
            if label.hasPrefix("_") {
                // In the order add(_:) tries them: a ParameterConvertible, a struct's wrappedValue, a class's wrappedValue.
                let name = String(label.dropFirst())
                // The dynamic type itself: `value is` would also look inside an Optional, which add(_:) does not.
                if Swift.type(of: value) is any ParameterConvertible.Type {
                    return addField(name: name, source: .mirrored, mayBeNil: true)
                }
                let isClass = Mirror(reflecting: value).displayStyle == .class
                let isWrapper = TypeLayout.wrappedValue(of: value) != nil
                if isWrapper, !isClass {
                    return addField(name: name, source: .mirrored, unwrapsThroughMirror: true, mayBeNil: true)
                }
                if isWrapper {
                    return addField(name: name, source: .mirrored, unwrapsThroughMirror: true, mayBeNil: true)
                }
            }
            addField(name: label, source: .mirrored, mayBeNil: true)
        }

        private mutating func addField(name: String, source: FieldLayout.Source, unwrapsThroughMirror: Bool = false, mayBeNil: Bool) {
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
            fields.append(FieldLayout(name: name, key: key, source: source, unwrapsThroughMirror: unwrapsThroughMirror, mayBeNil: mayBeNil))
        }

        func finish() throws(EncodingFailure) -> [FieldLayout] {
            if let failure { throw failure }
            if let unknown = mapping.keys.sorted().first {
                throw EncodingFailure("\(type).parameterKeys names `\(unknown)`, which is not a stored property")
            }
            return fields
        }
    }

    /// A property wrapper's `wrappedValue`, found by reflection since wrappers share no protocol:
    /// a stored property of a struct, or of a class or any of its superclasses.
    static func wrappedValue(of wrapper: Any) -> Any? {
        let mirror = Mirror(reflecting: wrapper)
        guard mirror.displayStyle == .struct || mirror.displayStyle == .class else { return nil }
        for mirror in mirrorChain(mirror).reversed() {
            if let child = mirror.children.first(where: { $0.label == "wrappedValue" }) { return child.value }
        }
        return nil
    }
}
