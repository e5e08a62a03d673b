import Foundation

/// Reads of the header fields the cache rules are given, with names compared the way HTTP
/// compares them: case-insensitively (RFC 9110 §5.1), ASCII letters only, so that no Unicode
/// folding can make two names equal.
///
/// A response's fields (received or stored) are ``HTTPFields``, in order, read through its
/// subscript: several lines of one field combined with ", " in order (RFC 9110 §5.3). A
/// request's are the dictionary `URLRequest` keeps, which may hold one field under names that
/// differ only in case; such lines are combined in the byte order of their names, so the result
/// never depends on dictionary order.
enum CacheHeaders {
    /// The value of the field `name` of a request, or nil when there is none.
    static func value(_ name: String, in headers: [String: String]) -> String? {
        // One pass without allocating: a field is almost always there once or not at all.
        var first: (name: String, value: String)?
        var more: [(name: String, value: String)] = []
        for (key, value) in headers where namesEqual(key, name) {
            if first == nil { first = (key, value) } else { more.append((key, value)) }
        }
        guard let first else { return nil }
        if more.isEmpty { return first.value }
        return ([first] + more).sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            .map(\.value).joined(separator: ", ")
    }

    /// Whether the field `name` is present (with any value, even empty).
    static func contains(_ name: String, in headers: [String: String]) -> Bool {
        headers.keys.contains { namesEqual($0, name) }
    }

    /// The `Cache-Control` directives of a request; none when it has no such field.
    static func cacheControl(in headers: [String: String]) -> CacheControl {
        value("Cache-Control", in: headers).map(CacheControl.init) ?? CacheControl()
    }

    /// The `Cache-Control` directives of a response; none when it has no such field.
    static func cacheControl(in headers: HTTPFields) -> CacheControl {
        headers["Cache-Control"].map(CacheControl.init) ?? CacheControl()
    }

    /// The field `name` of a request read as an HTTP date, in seconds since 1970; nil when it is
    /// absent or not a date. `now` (seconds since 1970) settles the century of a two-digit year.
    static func date(_ name: String, in headers: [String: String], now: Double) -> Double? {
        value(name, in: headers).flatMap { date($0, now: now) }
    }

    /// The field `name` of a response read as an HTTP date (see the request's ``date(_:in:now:)``).
    static func date(_ name: String, in headers: HTTPFields, now: Double) -> Double? {
        headers[name].flatMap { date($0, now: now) }
    }

    /// An HTTP date in seconds since 1970, or nil when `text` is not one.
    static func date(_ text: String, now: Double) -> Double? {
        HTTPDate.parse(text, now: Date(timeIntervalSince1970: now)).map(Double.init)
    }

    /// `text` without the spaces and tabs (RFC 9110 §5.6.3 whitespace) at either end.
    static func trimmed(_ text: some StringProtocol) -> Substring {
        var text = Substring(text)
        while let first = text.utf8.first, HTTPSyntax.isWhitespace(first) { text = text.dropFirst() }
        while let last = text.utf8.last, HTTPSyntax.isWhitespace(last) { text = text.dropLast() }
        return text
    }

    /// Whether two field names are the same name: equal but for the case of ASCII letters.
    static func namesEqual(_ first: String, _ second: String) -> Bool {
        HTTPSyntax.namesEqual(first, second)
    }
}
