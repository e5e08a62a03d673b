/// The directives of `Cache-Control` field values (of a response or of a request), which the HTTP
/// cache reads to decide what it may store and how long it may reuse it: RFC 9111 §5.2 with the
/// freshness rules of §4.2.1 and §1.2.2, and `stale-while-revalidate` / `stale-if-error` of
/// RFC 5861.
///
/// Parsing never fails; what it cannot use it ignores or reads in the cautious way:
/// - Directive names are compared case-insensitively; unknown directives are ignored.
///   Optional whitespace around `=` is tolerated; empty list members (`,,`) are skipped; a comma
///   inside a quoted string does not end a directive; several field values form one list.
/// - An argument may be a token or a quoted string (§5.2: recipients ought to accept both), so
///   `max-age="60"` is `max-age=60`.
/// - Delta-seconds (§1.2.2) are one or more ASCII digits; a value above 2^31 is 2^31.
/// - `max-age` and `s-maxage` without a usable value (missing, negative, not digits, a malformed
///   quoted string), or repeated with different values, are invalid freshness information:
///   ``hasInvalidFreshness`` is true and the value is nil, and a cache then considers the
///   response stale (§4.2.1 lets it use the first occurrence or consider it stale; this takes the
///   second, as it does for invalid values). Repeating the same value is harmless.
/// - The other delta-seconds directives ignore an unusable value, and of several values keep the
///   most restrictive: the lowest `stale-while-revalidate`, `stale-if-error` and `max-stale`,
///   the highest `min-fresh`; a bounded `max-stale=N` beats a bare `max-stale`.
/// - `no-cache` and `private` apply to the whole response when bare, when their field-name list
///   is malformed, or when any occurrence is bare; otherwise their lists are merged. Field names
///   are lowercased.
/// - Directives without arguments (`no-store`, `public`…) count whatever argument follows them.
///
/// The work is one pass over the bytes, so a huge field value costs time in proportion to its length.
struct CacheControl: Hashable, Sendable {
    /// What `no-cache` or `private` applies to.
    enum FieldScope: Hashable, Sendable {
        /// The whole response.
        case all
        /// Only these header fields (lowercased).
        case fields(Set<String>)
    }

    /// A request's `max-stale`.
    enum MaxStale: Hashable, Sendable {
        /// Any staleness (bare `max-stale`).
        case any
        /// At most this many seconds.
        case seconds(Int)
    }

    /// RFC 9111 §1.2.2: a delta-seconds value too large to represent is taken as 2^31.
    static let maximumDeltaSeconds = 2_147_483_648

    /// A freshness lifetime directive as read: a value, or invalid (§4.2.1).
    enum Lifetime: Hashable, Sendable {
        case seconds(Int)
        case invalid
    }

    var maxAgeDirective: Lifetime?
    var sharedMaxAgeDirective: Lifetime?
    var noCache: FieldScope?
    var noStore = false
    var noTransform = false
    var mustRevalidate = false
    var proxyRevalidate = false
    var mustUnderstand = false
    var privateScope: FieldScope?
    var isPublic = false
    var immutable = false
    var staleWhileRevalidate: Int?
    var staleIfError: Int?
    var maxStale: MaxStale?
    var minFresh: Int?
    var onlyIfCached = false

    /// `max-age` in seconds, when present and valid.
    var maxAge: Int? {
        if case .seconds(let value) = maxAgeDirective { return value }
        return nil
    }

    /// `s-maxage` in seconds, when present and valid.
    var sharedMaxAge: Int? {
        if case .seconds(let value) = sharedMaxAgeDirective { return value }
        return nil
    }

    /// Whether `max-age` or `s-maxage` was present but unusable: a response is then stale (§4.2.1).
    var hasInvalidFreshness: Bool {
        maxAgeDirective == .invalid || sharedMaxAgeDirective == .invalid
    }

    init() {}

    /// The directives of one field value.
    init(_ fieldValue: String) {
        self.init(fieldValues: [fieldValue])
    }

    /// The directives of several field values (several `Cache-Control` lines), read as one list.
    init(fieldValues: some Sequence<String>) {
        for value in fieldValues {
            var value = value
            value.withUTF8 { parse($0) }
        }
    }

    /// The directives written back as one field value, in a fixed order; parsing it gives the same
    /// value. An invalid lifetime is written as `max-age=invalid` so that it stays invalid.
    var fieldValue: String {
        var parts: [String] = []
        func lifetime(_ name: String, _ directive: Lifetime?) {
            switch directive {
            case .seconds(let value): parts.append("\(name)=\(value)")
            case .invalid: parts.append("\(name)=invalid")
            case nil: break
            }
        }
        func scope(_ name: String, _ scope: FieldScope?) {
            switch scope {
            case .all: parts.append(name)
            case .fields(let names): parts.append("\(name)=\"\(names.sorted().joined(separator: ", "))\"")
            case nil: break
            }
        }
        lifetime("max-age", maxAgeDirective)
        lifetime("s-maxage", sharedMaxAgeDirective)
        scope("no-cache", noCache)
        if noStore { parts.append("no-store") }
        if noTransform { parts.append("no-transform") }
        if mustRevalidate { parts.append("must-revalidate") }
        if proxyRevalidate { parts.append("proxy-revalidate") }
        if mustUnderstand { parts.append("must-understand") }
        scope("private", privateScope)
        if isPublic { parts.append("public") }
        if immutable { parts.append("immutable") }
        if let staleWhileRevalidate { parts.append("stale-while-revalidate=\(staleWhileRevalidate)") }
        if let staleIfError { parts.append("stale-if-error=\(staleIfError)") }
        switch maxStale {
        case .any: parts.append("max-stale")
        case .seconds(let value): parts.append("max-stale=\(value)")
        case nil: break
        }
        if let minFresh { parts.append("min-fresh=\(minFresh)") }
        if onlyIfCached { parts.append("only-if-cached") }
        return parts.joined(separator: ", ")
    }

    // MARK: Parsing

    /// A directive's argument as read.
    private enum Argument {
        case none
        /// A token, or the unescaped content of a quoted string.
        case value([UInt8])
        /// Something that is neither: a missing value after `=`, an unterminated quoted string,
        /// text after the argument before the next comma.
        case malformed
    }

    private mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>) {
        let count = bytes.count
        var index = 0
        while index < count {
            // Separators and empty members.
            let byte = bytes[index]
            if byte == UInt8(ascii: ",") || HTTPSyntax.isWhitespace(byte) {
                index += 1
                continue
            }
            let nameStart = index
            while index < count, HTTPSyntax.isTokenByte(bytes[index]) { index += 1 }
            if index == nameStart {
                // Not a directive: skip the member.
                index = Self.skipMember(bytes, from: index)
                continue
            }
            let name = UnsafeBufferPointer(rebasing: bytes[nameStart..<index])
            var argument = Argument.none
            var cursor = Self.skipWhitespace(bytes, from: index)
            if cursor < count, bytes[cursor] == UInt8(ascii: "=") {
                cursor = Self.skipWhitespace(bytes, from: cursor + 1)
                if cursor < count, bytes[cursor] == UInt8(ascii: "\"") {
                    var content: [UInt8] = []
                    cursor += 1
                    var closed = false
                    while cursor < count {
                        let next = bytes[cursor]
                        if next == UInt8(ascii: "\"") {
                            closed = true
                            cursor += 1
                            break
                        }
                        if next == UInt8(ascii: "\\") {
                            cursor += 1
                            if cursor == count { break }
                        }
                        content.append(bytes[cursor])
                        cursor += 1
                    }
                    argument = closed ? .value(content) : .malformed
                } else {
                    let start = cursor
                    while cursor < count, HTTPSyntax.isTokenByte(bytes[cursor]) { cursor += 1 }
                    argument = cursor > start ? .value(Array(bytes[start..<cursor])) : .malformed
                }
                cursor = Self.skipWhitespace(bytes, from: cursor)
            }
            if cursor < count, bytes[cursor] != UInt8(ascii: ",") {
                argument = .malformed
                cursor = Self.skipMember(bytes, from: cursor)
            }
            apply(name: name, argument: argument)
            index = cursor
        }
    }

    private mutating func apply(name: UnsafeBufferPointer<UInt8>, argument: Argument) {
        // The longest known name is "stale-while-revalidate" (22 bytes).
        guard name.count <= 22 else { return }
        let lowercased = String(decoding: name.map(HTTPSyntax.lowercase), as: UTF8.self)
        switch lowercased {
        case "max-age": maxAgeDirective = Self.combine(maxAgeDirective, Self.lifetime(argument))
        case "s-maxage": sharedMaxAgeDirective = Self.combine(sharedMaxAgeDirective, Self.lifetime(argument))
        case "no-cache": noCache = Self.combine(noCache, Self.scope(argument))
        case "private": privateScope = Self.combine(privateScope, Self.scope(argument))
        case "no-store": noStore = true
        case "no-transform": noTransform = true
        case "must-revalidate": mustRevalidate = true
        case "proxy-revalidate": proxyRevalidate = true
        case "must-understand": mustUnderstand = true
        case "public": isPublic = true
        case "immutable": immutable = true
        case "only-if-cached": onlyIfCached = true
        case "stale-while-revalidate":
            if let value = Self.deltaSeconds(argument) { staleWhileRevalidate = min(staleWhileRevalidate ?? value, value) }
        case "stale-if-error":
            if let value = Self.deltaSeconds(argument) { staleIfError = min(staleIfError ?? value, value) }
        case "min-fresh":
            if let value = Self.deltaSeconds(argument) { minFresh = max(minFresh ?? value, value) }
        case "max-stale":
            let read: MaxStale?
            switch argument {
            case .none: read = .any
            case .value, .malformed: read = Self.deltaSeconds(argument).map { .seconds($0) }
            }
            switch (maxStale, read) {
            case (_, nil): break
            case (nil, let read?), (.any?, let read?): maxStale = read
            case (.seconds?, .any?): break
            case (.seconds(let old)?, .seconds(let new)?): maxStale = .seconds(min(old, new))
            }
        default: break
        }
    }

    private static func lifetime(_ argument: Argument) -> Lifetime {
        deltaSeconds(argument).map { .seconds($0) } ?? .invalid
    }

    private static func combine(_ old: Lifetime?, _ new: Lifetime) -> Lifetime {
        guard let old else { return new }
        return old == new ? old : .invalid
    }

    private static func scope(_ argument: Argument) -> FieldScope {
        guard case .value(let bytes) = argument else { return .all }
        var names: Set<String> = []
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
            var low = start
            var high = end
            while low < high, HTTPSyntax.isWhitespace(bytes[low]) { low += 1 }
            while high > low, HTTPSyntax.isWhitespace(bytes[high - 1]) { high -= 1 }
            if low < high {
                let member = bytes[low..<high]
                guard member.allSatisfy(HTTPSyntax.isTokenByte) else { return .all }
                names.insert(String(decoding: member.map(HTTPSyntax.lowercase), as: UTF8.self))
            }
            start = end + 1
        }
        return .fields(names)
    }

    private static func combine(_ old: FieldScope?, _ new: FieldScope) -> FieldScope {
        switch (old, new) {
        case (nil, _): new
        case (.all?, _), (_, .all): .all
        case (.fields(let old)?, .fields(let new)): .fields(old.union(new))
        }
    }

    /// RFC 9111 §1.2.2 delta-seconds, saturated at 2^31.
    private static func deltaSeconds(_ argument: Argument) -> Int? {
        guard case .value(let bytes) = argument, !bytes.isEmpty else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = min(value * 10 + Int(byte - UInt8(ascii: "0")), maximumDeltaSeconds)
        }
        return value
    }

    /// The index of the comma that ends the member at `index`, or the end; a comma inside a quoted
    /// string does not count.
    private static func skipMember(_ bytes: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        var index = index
        var quoted = false
        while index < bytes.count {
            let byte = bytes[index]
            if quoted {
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    quoted = false
                }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: ",") {
                return index
            }
            index += 1
        }
        return bytes.count
    }

    private static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        var index = index
        while index < bytes.count, HTTPSyntax.isWhitespace(bytes[index]) { index += 1 }
        return index
    }

}
