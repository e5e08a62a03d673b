/// A response's `Vary` field and the request fields it names, which decide whether a stored
/// response may answer a new request: RFC 9110 §12.5.5 and RFC 9111 §4.1.
///
/// - Field names are lowercased, deduplicated and sorted; empty list members are skipped. A
///   `*` anywhere, or a member that is not a field name (a token), makes it ``everything``:
///   a `Vary` the cache cannot read must never let a stored response match.
/// - The secondary key of a request is the value of each named field, in the order of the names:
///   nil when the request lacks the field (absent differs from empty), otherwise its value
///   normalised the way §4.1 allows without knowing a field's syntax: whitespace at either end
///   and around commas outside quoted strings is removed (list syntax allows it there), nothing
///   else (a false match would serve the wrong response; a false miss only costs a request).
///   Names are compared case-insensitively; headers whose names differ only in case are combined
///   with ", " in the order of their names' bytes (combining lines is allowed by §4.1).
enum Vary: Hashable, Sendable {
    /// `Vary: *`: no stored response matches without validation.
    case everything
    /// The request fields the response varies on, lowercased and sorted (empty: varies on none).
    case fields([String])

    /// The `Vary` of one or more field values, read as one list.
    init(fieldValues: some Sequence<String>) {
        var names: Set<String> = []
        for value in fieldValues {
            for member in value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                let trimmed = Self.trimmed(member)
                if trimmed.isEmpty { continue }
                if trimmed.elementsEqual("*".utf8) || !trimmed.allSatisfy(HTTPSyntax.isTokenByte) {
                    self = .everything
                    return
                }
                names.insert(String(decoding: trimmed.map(HTTPSyntax.lowercase), as: UTF8.self))
            }
        }
        self = .fields(names.sorted())
    }

    /// The `Vary` of one field value.
    init(_ fieldValue: String) {
        self.init(fieldValues: [fieldValue])
    }

    /// The `Vary` of a response's fields: varying on no field when it has none.
    init(of fields: HTTPFields) {
        self = fields["Vary"].map(Vary.init) ?? .fields([])
    }

    /// The field value written back: `*` or the names joined with ", ".
    var fieldValue: String {
        switch self {
        case .everything: "*"
        case .fields(let names): names.joined(separator: ", ")
        }
    }

    /// The secondary key of a request with these `headers`, or nil for ``everything`` (which
    /// matches nothing).
    func secondaryKey(for headers: [String: String]) -> [String?]? {
        guard case .fields(let names) = self else { return nil }
        if names.isEmpty { return [] }
        var values: [String: [(name: String, value: String)]] = [:]
        let wanted = Set(names)
        for (name, value) in headers {
            let lowered = String(decoding: name.utf8.map(HTTPSyntax.lowercase), as: UTF8.self)
            if wanted.contains(lowered) { values[lowered, default: []].append((name, value)) }
        }
        return names.map { name in
            guard let found = values[name] else { return nil }
            let combined = found.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
                .map(\.value).joined(separator: ", ")
            return Self.normalized(combined)
        }
    }

    /// Whether a request with `headers` matches the secondary key a stored response was saved with.
    func matches(_ storedKey: [String?], headers: [String: String]) -> Bool {
        guard let key = secondaryKey(for: headers) else { return false }
        return key == storedKey
    }

    /// A field value with the whitespace §4.1 lets a cache ignore removed: at either end and
    /// around commas outside quoted strings.
    static func normalized(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count)
        var quoted = false
        var escaped = false
        var pendingWhitespace: [UInt8] = []
        var afterComma = true  // the start behaves like the position after a comma
        for byte in value.utf8 {
            if quoted {
                out.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    quoted = false
                }
                continue
            }
            if HTTPSyntax.isWhitespace(byte) {
                if !afterComma { pendingWhitespace.append(byte) }
                continue
            }
            if byte == UInt8(ascii: ",") {
                pendingWhitespace.removeAll()
                out.append(byte)
                afterComma = true
                continue
            }
            out.append(contentsOf: pendingWhitespace)
            pendingWhitespace.removeAll()
            afterComma = false
            out.append(byte)
            if byte == UInt8(ascii: "\"") { quoted = true }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func trimmed(_ bytes: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence {
        var slice = bytes
        while let first = slice.first, HTTPSyntax.isWhitespace(first) { slice = slice.dropFirst() }
        while let last = slice.last, HTTPSyntax.isWhitespace(last) { slice = slice.dropLast() }
        return slice
    }

}
