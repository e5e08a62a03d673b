import Foundation

/// One link of a response's `Link` header fields (RFC 8288): a target and its parameters.
///
/// ```swift
/// let page = try await queue.reply(to: .get("/posts", as: [Post].self))
/// if let next = page.head.link(rel: "next") {          // "<…?page=2>; rel=\"next\"" resolved
///     let more = try await queue.send(.get(next.absoluteString, as: [Post].self))
/// }
/// ```
public struct WebLink: Sendable, Hashable {
    /// The target, resolved against the response's URL.
    public var target: URL
    /// The relation types (`rel`), lowercased: `["next"]`, `["prev", "first"]`…
    public var relations: [String]
    /// Every parameter as written, names lowercased (`rel`, `type`, `title`…), values unquoted.
    public var parameters: [String: String]

    /// Creates a link.
    public init(target: URL, relations: [String], parameters: [String: String] = [:]) {
        self.target = target
        self.relations = relations
        self.parameters = parameters
    }

    /// The links of `Link` field values, in order, their targets resolved against `base`. A
    /// link-value that is malformed (no `<…>` target, an unterminated quote) is left out; the
    /// others are still read, since one bad link should not hide the rest.
    ///
    /// Read as Unicode scalars, as the field's syntax is: a separator must not hide in a
    /// `Character` with what precedes it (a prepended mark joins the space after it into one).
    static func parse(_ fieldValues: [String], base: URL) -> [WebLink] {
        var links: [WebLink] = []
        for value in fieldValues {
            for linkValue in split(Array(value.unicodeScalars)[...], at: ",") {
                if let link = parseLinkValue(linkValue, base: base) { links.append(link) }
            }
        }
        return links
    }

    private typealias Scalars = ArraySlice<Unicode.Scalar>

    /// `<target>; name=value; name="quoted, value"`.
    private static func parseLinkValue(_ scalars: Scalars, base: URL) -> WebLink? {
        let value = trimmed(scalars)
        guard value.first == "<", let close = value.firstIndex(of: ">") else { return nil }
        let reference = string(trimmed(value[value.index(after: value.startIndex)..<close]))
        guard let target = URL(string: reference, relativeTo: base)?.absoluteURL else { return nil }
        var parameters: [String: String] = [:]
        for parameter in split(value[value.index(after: close)...], at: ";") {
            let pair = trimmed(parameter)
            guard !pair.isEmpty else { continue }
            let name: String, raw: Scalars
            if let equals = pair.firstIndex(of: "=") {
                name = string(trimmed(pair[..<equals])).lowercased()
                raw = trimmed(pair[pair.index(after: equals)...])
            } else {
                (name, raw) = (string(pair).lowercased(), [])
            }
            guard let value = unquoted(raw) else { return nil }
            // RFC 8288 §3: only the first occurrence of a parameter counts.
            if parameters[name] == nil { parameters[name] = value }
        }
        let rel = Array((parameters["rel"] ?? "").lowercased().unicodeScalars)
        let relations = rel.split(whereSeparator: isSpace).map { string($0) }
        return WebLink(target: target, relations: relations, parameters: parameters)
    }

    /// A token as it is, or a quoted string without its quotes and escapes; nil for a quote
    /// that does not end.
    private static func unquoted(_ raw: Scalars) -> String? {
        guard raw.first == "\"" else { return string(raw) }
        var value = String.UnicodeScalarView()
        var escaped = false
        for scalar in raw.dropFirst() {
            if escaped {
                value.append(scalar)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if scalar == "\"" {
                return String(value)
            } else {
                value.append(scalar)
            }
        }
        return nil
    }

    /// Splits at `separator` where it stands outside `<…>` and outside quoted strings.
    private static func split(_ scalars: Scalars, at separator: Unicode.Scalar) -> [Scalars] {
        var parts: [Scalars] = []
        var start = scalars.startIndex
        var inTarget = false, inQuotes = false, escaped = false
        for index in scalars.indices {
            let scalar = scalars[index]
            if escaped {
                escaped = false
            } else if inQuotes {
                if scalar == "\\" { escaped = true } else if scalar == "\"" { inQuotes = false }
            } else if inTarget {
                if scalar == ">" { inTarget = false }
            } else if scalar == "<" {
                inTarget = true
            } else if scalar == "\"" {
                inQuotes = true
            } else if scalar == separator {
                parts.append(scalars[start..<index])
                start = index + 1
            }
        }
        parts.append(scalars[start...])
        return parts
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t"
    }

    private static func trimmed(_ scalars: Scalars) -> Scalars {
        var slice = scalars
        while let first = slice.first, isSpace(first) { slice = slice.dropFirst() }
        while let last = slice.last, isSpace(last) { slice = slice.dropLast() }
        return slice
    }

    private static func string(_ scalars: Scalars) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }
}

extension ResponseHead {
    /// The links of the response's `Link` header fields (RFC 8288), in order, their targets
    /// resolved against ``url``: several fields and several links in one field alike, commas in
    /// targets and quoted parameters understood. Malformed links are left out.
    public var links: [WebLink] {
        WebLink.parse(headerFields.values(for: "Link"), base: url)
    }

    /// The target of the first link whose relation types include `relation` (case-insensitive):
    /// `head.link(rel: "next")` for the next page of a paged list. `nil` when there is none.
    public func link(rel relation: String) -> URL? {
        let relation = relation.lowercased()
        return links.first { $0.relations.contains(relation) }?.target
    }
}
