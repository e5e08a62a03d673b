@_spi(Reflection) import Swift

// The encoder's only unsafe code: reading a struct's stored properties straight from its memory.
//
// `Mirror` is what a value's properties mean; it is also slow, since it boxes every child in an
// `Any` and resolves its type by name on each access. For structs, the encoder reads the same
// properties here instead: the standard library's reflection SPI (`_forEachField`) lists each
// stored property's name, type and byte offset from the type's metadata, once per type, and a
// value's properties are loaded at those offsets, the common types without boxing them.
//
// Why the loads are valid:
// - Offsets and types come from the runtime's metadata of exactly the struct type `T` that a
//   ``StructFields`` describes, which is the layout the compiler gave `T`. They never leave this
//   file: other files hold a field's ``FieldSlot``, whose contents only this file can see or make,
//   and which names the struct type it belongs to.
// - Loads happen only inside ``StructValues/withFields(of:_:)``, on the bytes of a value that was
//   cast to `T` itself (unwrapping every existential box around it) and is held for the call, so
//   the base address points at a live, correctly aligned `T` for as long as it is read. The
//   ``StructValues/Reader`` that holds the address is noncopyable and lent to the caller, so it
//   cannot outlive the call, and it reads only slots of `T`: a slot of another type stops the
//   program rather than misread memory.
// - A field is loaded as its own metadata type (boxed in an `Any`), or as a type the caller names,
//   which is checked to be that metadata type before the load, so `load(as:)` copies it with
//   that type's value witness (retaining what it references).
// - A field whose storage is not a plain value of its type cannot be loaded so: `weak` and
//   `unowned` references (a weak reference points at a side table, not the object) and functions.
//   `_forEachFieldWithKeyPath` refuses types with such fields; a struct with one, or with a
//   property wrapper's storage holding one, is not described here.
// - Only structs: `_forEachFieldWithKeyPath` cannot vouch for a class's fields, so classes are
//   never read from memory.
//
// A type the SPI cannot describe (not a struct, a field it cannot read, metadata it cannot
// resolve) gets no ``StructFields``, and the encoder reads it through `Mirror`, as it reads
// classes, `CustomReflectable` types, and everything when ``TypeLayout/forcesMirror`` is set.

/// The stored properties of one struct type, in declaration order, as its metadata lists them.
/// See the top of this file for why reading them is safe.
struct StructFields {
    /// One stored property: what the encoder needs to decide how to encode it, and its slot.
    struct Field {
        let name: String
        let type: Any.Type
        /// Whether a value of this static type can be nil: an `Optional`, or an existential that can hold one.
        let mayHoldNil: Bool
        let slot: FieldSlot
        /// For `_`-prefixed storage (as the compiler names a property wrapper's) whose type is a struct
        /// with a stored `wrappedValue`: that property, read in place.
        let wrappedValue: (type: Any.Type, mayHoldNil: Bool, slot: FieldSlot)?
    }

    let fields: [Field]
    /// Reads the fields of values of this type.
    let values: StructValues

    /// The stored properties of `type`, or nil when it is not a struct whose every field can be read
    /// from memory (then it is read through `Mirror`).
    init?(_ type: Any.Type) {
        guard metadataKind(of: type) == .struct, hasOnlyPlainStoredFields(type) else { return nil }
        let owner = ObjectIdentifier(type)
        var fields: [Field] = []
        var readable = true
        let described = _forEachField(of: type, options: []) { cName, offset, fieldType, kind in
            let name = String(cString: cName)
            var wrappedValue: (type: Any.Type, mayHoldNil: Bool, slot: FieldSlot)?
            if name.hasPrefix("_"), kind == .struct, let inner = storedWrappedValue(of: fieldType) {
                // Storage whose wrappedValue cannot be read from memory makes the whole struct unreadable.
                guard let inner else { readable = false; return false }
                wrappedValue = (inner.type, Self.mayHoldNil(inner.kind),
                                FieldSlot(owner: owner, offset: offset + inner.offset, type: inner.type))
            }
            fields.append(Field(name: name, type: fieldType, mayHoldNil: Self.mayHoldNil(kind),
                                slot: FieldSlot(owner: owner, offset: offset, type: fieldType), wrappedValue: wrappedValue))
            return true
        }
        guard described, readable else { return nil }
        self.fields = fields
        values = StructValues(owner: owner, bytes: _openExistential(type, do: structBytes(for:)))
    }

    /// Whether a class type, or one of its superclasses, has a stored property named `name`.
    static func classStoresProperty(named name: String, in classType: Any.Type) -> Bool {
        var found = false
        _ = _forEachField(of: classType, options: _EachFieldOptions(rawValue: 1)) { cName, _, _, _ in  // .classType
            found = String(cString: cName) == name
            return !found
        }
        return found
    }

    private static func mayHoldNil(_ kind: _MetadataKind) -> Bool {
        kind == .optional || kind == .existential
    }
}

/// Where a stored property lies in a struct of one type, and its type. Only this file can make
/// one or see inside it. Holds nothing reference-counted, so reading through it costs no
/// retain or release.
struct FieldSlot: Sendable {
    fileprivate let owner: ObjectIdentifier
    fileprivate let offset: Int
    fileprivate let type: Any.Type
}

/// Reads the stored properties of values of one struct type. Holds nothing reference-counted, so
/// handing it around costs no retain or release.
struct StructValues: Sendable {
    fileprivate let owner: ObjectIdentifier
    fileprivate let bytes: any StructBytes.Type

    /// Calls `body` with a reader of `value`'s fields; false (and `body` not called) when `value`
    /// is not of this struct type.
    ///
    /// The ``Reader`` is only lent to `body`: being noncopyable, it cannot be kept.
    func withFields<E: Error>(of value: Any, _ body: (borrowing Reader) throws(E) -> Void) throws(E) -> Bool {
        try bytes.withBytes(of: value) { (base: UnsafeRawPointer) throws(E) in
            // Bound first: handing the new noncopyable value straight to `body` crashes the optimizer.
            let reader = Reader(base: base, owner: owner)
            try body(reader)
        }
    }

    /// Reads the fields of one value. Made only by ``StructValues/withFields(of:_:)``.
    struct Reader: ~Copyable {
        fileprivate let base: UnsafeRawPointer
        fileprivate let owner: ObjectIdentifier

        /// The field in `slot` as `T`, its type: the common types are read without boxing them. A
        /// slot of another struct type, or a `T` that is not the field's type, stops the program.
        func read<T>(_ slot: FieldSlot, as type: T.Type) -> T {
            precondition(slot.owner == owner && slot.type == T.self, "the slot is not a \(T.self) of this struct")
            return (base + slot.offset).load(as: T.self)
        }

        /// The field in `slot`, of whatever type, boxed in an `Any`.
        func read(_ slot: FieldSlot) -> Any {
            precondition(slot.owner == owner, "the slot is not of this struct")
            let type: Any.Type = slot.type
            return loadValue(type, from: base + slot.offset)
        }
    }
}

/// Copies a value of the (opened) type `T` out of memory into an `Any`.
private func loadValue<T>(_ type: T.Type, from address: UnsafeRawPointer) -> Any {
    address.load(as: T.self)
}

/// The kind of `type`'s metadata (struct, class, enum, optional, existential…). The SPI tells the
/// kind of fields only, so this asks for the one field of a struct generic over `type`.
private func metadataKind(of type: Any.Type) -> _MetadataKind {
    func kind<T>(_: T.Type) -> _MetadataKind {
        var kind = _MetadataKind.unknown
        _ = _forEachField(of: KindProbe<T>.self, options: []) { _, _, _, fieldKind in
            kind = fieldKind
            return false
        }
        return kind
    }
    return kind(type)
}

private struct KindProbe<T> {
    let value: T
}

/// Whether every stored property of `T` holds a plain value of its type: not `weak`, not
/// `unowned`, not a function (see the top of this file).
private func hasOnlyPlainStoredFields<T>(_ type: T.Type) -> Bool {
    _forEachFieldWithKeyPath(of: type, options: []) { _, _ in true }
}

/// For a struct type with a stored `wrappedValue`: its offset, type and kind, or `.some(nil)` when
/// the struct's fields cannot all be read from memory. Nil when there is no stored `wrappedValue`.
private func storedWrappedValue(of type: Any.Type) -> (offset: Int, type: Any.Type, kind: _MetadataKind)?? {
    var result: (offset: Int, type: Any.Type, kind: _MetadataKind)?
    _ = _forEachField(of: type, options: []) { cName, offset, fieldType, kind in
        if String(cString: cName) == "wrappedValue" { result = (offset, fieldType, kind) }
        return result == nil
    }
    guard let result else { return nil }
    return hasOnlyPlainStoredFields(type) ? result : .some(nil)
}

/// Reads a struct's bytes in place as its own type.
///
/// A value can reach the encoder boxed more than once (an `any Sendable` inside an `[Any]`);
/// opening such an `Any` as a generic parameter reads the inner box, not the struct, and the
/// offsets then point into the box. Casting to `T`, the dynamic type the fields were listed for,
/// unwraps every layer.
private protocol StructBytes: SendableMetatype {
    /// Calls `body` with the address of `value`'s bytes; false when `value` is not a `Self`-described struct.
    static func withBytes<E: Error>(of value: Any, _ body: (UnsafeRawPointer) throws(E) -> Void) throws(E) -> Bool
}

private enum StructBytesReader<T>: StructBytes {
    static func withBytes<E: Error>(of value: Any, _ body: (UnsafeRawPointer) throws(E) -> Void) throws(E) -> Bool {
        guard let typed = value as? T else { return false }
        try withUnsafeBytes(of: typed) { (bytes: UnsafeRawBufferPointer) throws(E) in
            if let base = bytes.baseAddress { try body(base) }
        }
        return true
    }
}

private func structBytes<T>(for type: T.Type) -> any StructBytes.Type {
    StructBytesReader<T>.self
}
