/// One header field: a name and its value, as one line of a request or response head.
public struct HTTPField: Sendable, Hashable, CustomStringConvertible {
    /// The name as written (`Content-Type`); names compare case-insensitively in ``HTTPFields``.
    public var name: String
    /// The value, without surrounding whitespace.
    public var value: String

    /// Creates a field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    public var description: String { "\(name): \(value)" }
}

/// Header fields in the order they were written, with repeated names kept, looked up by name
/// case-insensitively: the shape of an HTTP head (RFC 9110 §5.3).
///
/// ```swift
/// var fields: HTTPFields = ["Accept": "application/json"]      // a dictionary literal works
/// fields.append("en", for: "Accept-Language")
/// fields.append("fr;q=0.5", for: "Accept-Language")           // a second line of the same name
/// fields["accept-language"]                                   // "en, fr;q=0.5"
/// fields.values(for: "Accept-Language")                       // ["en", "fr;q=0.5"]
/// ```
/// The subscript joins repeated values with `", "` (RFC 9110 §5.3), and `Cookie` values with
/// `"; "`; ``values(for:)`` keeps them apart, as `Set-Cookie` and `Link` need. Two values are equal
/// when they have the same fields in the same order.
public struct HTTPFields: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral,
                          ExpressibleByArrayLiteral, CustomStringConvertible {
    private var fields: [HTTPField]

    /// No fields.
    public init() {
        fields = []
    }

    /// The fields, in order.
    public init(_ fields: some Sequence<HTTPField>) {
        self.fields = Array(fields)
    }

    /// The fields of a dictionary literal, in the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { HTTPField(name: $0.0, value: $0.1) }
    }

    /// The fields of an array literal of fields, in order.
    public init(arrayLiteral elements: HTTPField...) {
        fields = elements
    }

    /// The fields of a dictionary, sorted by name (a dictionary has no order of its own).
    public init(_ dictionary: [String: String]) {
        // Compared as bytes: the same order as String's for the ASCII names fields have, and
        // several times cheaper (a cached response's head is made this way on every hit).
        fields = dictionary.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            .map { HTTPField(name: $0.key, value: $0.value) }
    }

    public var startIndex: Int { fields.startIndex }
    public var endIndex: Int { fields.endIndex }
    public subscript(position: Int) -> HTTPField { fields[position] }

    /// The value of the fields named `name` (any case): `nil` when there is none, the value of
    /// the only one, or the values of several joined with `", "` (`"; "` for `Cookie`).
    ///
    /// Setting a value replaces every field of that name by one field where the first stood
    /// (or at the end); setting `nil` removes them.
    public subscript(name: String) -> String? {
        get {
            var joined: String?
            for field in fields where HTTPSyntax.namesEqual(field.name, name) {
                if joined == nil {
                    joined = field.value
                } else {
                    joined! += HTTPSyntax.namesEqual(name, "Cookie") ? "; " : ", "
                    joined! += field.value
                }
            }
            return joined
        }
        set {
            guard let first = fields.firstIndex(where: { HTTPSyntax.namesEqual($0.name, name) }) else {
                if let newValue { fields.append(HTTPField(name: name, value: newValue)) }
                return
            }
            if let newValue {
                fields[first] = HTTPField(name: fields[first].name, value: newValue)
                fields.removeSubrange(first + 1 ..< fields.endIndex, where: { HTTPSyntax.namesEqual($0.name, name) })
            } else {
                fields.removeAll { HTTPSyntax.namesEqual($0.name, name) }
            }
        }
    }

    /// Every value of the fields named `name` (any case), in order, each as it was written.
    public func values(for name: String) -> [String] {
        fields.filter { HTTPSyntax.namesEqual($0.name, name) }.map(\.value)
    }

    /// Whether a field named `name` (any case) is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { HTTPSyntax.namesEqual($0.name, name) }
    }

    /// Adds a field after the others, keeping any of the same name.
    public mutating func append(_ value: String, for name: String) {
        fields.append(HTTPField(name: name, value: value))
    }

    /// Adds a field after the others, keeping any of the same name.
    public mutating func append(_ field: HTTPField) {
        fields.append(field)
    }

    /// Removes every field named `name` (any case).
    public mutating func removeAll(named name: String) {
        fields.removeAll { HTTPSyntax.namesEqual($0.name, name) }
    }

    /// The fields as a dictionary, repeated names joined as the subscript joins them, under the
    /// spelling of their first field: for APIs that take `[String: String]`.
    public var dictionary: [String: String] {
        var dictionary = [String: String](minimumCapacity: fields.count)
        // Each name's first spelling, found by comparing names with ASCII letters folded (RFC
        // 9110 §5.1), not by `lowercased()`, whose Unicode case mapping and new strings cost most
        // of the 21,000 instructions this took for a ten-field response (the cache does it for
        // every response it may store). A head's dozen fields are compared with those before
        // them; beyond `linearScanLimit` (a server may send thousands), through a dictionary.
        var spelling = [FoldedName: String]()
        for (index, field) in fields.enumerated() {
            let first: String?
            if index < Self.linearScanLimit {
                first = fields[..<index].first { HTTPSyntax.namesEqual($0.name, field.name) }?.name
            } else {
                if spelling.isEmpty {
                    for earlier in fields[..<index].reversed() { spelling[FoldedName(earlier.name)] = earlier.name }
                }
                let folded = FoldedName(field.name)
                first = spelling[folded]
                if first == nil { spelling[folded] = field.name }
            }
            if let first {
                let separator = HTTPSyntax.namesEqual(first, "Cookie") ? "; " : ", "
                dictionary[first, default: ""] += separator + field.value
            } else {
                dictionary[field.name] = field.value
            }
        }
        return dictionary
    }

    /// How many fields ``dictionary`` compares with each other pairwise before it indexes them.
    static let linearScanLimit = 32

    public var description: String {
        "[" + fields.map { "\($0.name): \($0.value)".debugEscaped }.joined(separator: ", ") + "]"
    }
}

/// A field name as a key: equal to the same name in any case of its ASCII letters, and hashed so.
private struct FoldedName: Hashable {
    let name: String

    init(_ name: String) {
        self.name = name
    }

    static func == (first: FoldedName, second: FoldedName) -> Bool {
        HTTPSyntax.namesEqual(first.name, second.name)
    }

    func hash(into hasher: inout Hasher) {
        // Eight folded bytes at a time: a byte at a time cost 800 instructions a name.
        var word: UInt64 = 0
        var shift: UInt64 = 0
        for byte in name.utf8 {
            word |= UInt64(HTTPSyntax.lowercase(byte)) << shift
            shift += 8
            if shift == 64 {
                hasher.combine(word)
                word = 0
                shift = 0
            }
        }
        hasher.combine(word | shift << 56)   // the count of the last word's bytes: "a\0" is not "a"
    }
}

private extension Array {
    /// Removes the elements of `range` that match, keeping the others in order.
    mutating func removeSubrange(_ range: Range<Int>, where shouldRemove: (Element) -> Bool) {
        let kept = self[range].filter { !shouldRemove($0) }
        replaceSubrange(range, with: kept)
    }
}
