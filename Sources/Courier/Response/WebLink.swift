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
    static func parse(_ fieldValues: [String], base: URL) -> [WebLink] {
        var links: [WebLink] = []
        for value in fieldValues {
            for linkValue in split(value, at: ",") {
                if let link = parseLinkValue(linkValue, base: base) { links.append(link) }
            }
        }
        return links
    }

    /// `<target>; name=value; name="quoted, value"`.
    private static func parseLinkValue(_ text: Substring, base: URL) -> WebLink? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("<"), let close = trimmed.firstIndex(of: ">") else { return nil }
        let reference = trimmed[trimmed.index(after: trimmed.startIndex)..<close].trimmingCharacters(in: .whitespaces)
        guard let target = URL(string: reference, relativeTo: base)?.absoluteURL else { return nil }
        var parameters: [String: String] = [:]
        for parameter in split(trimmed[trimmed.index(after: close)...], at: ";") {
            let pair = parameter.trimmingCharacters(in: .whitespaces)
            guard !pair.isEmpty else { continue }
            let name: String, raw: String
            if let equals = pair.firstIndex(of: "=") {
                name = pair[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
                raw = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            } else {
                (name, raw) = (pair.lowercased(), "")
            }
            guard let value = unquoted(raw) else { return nil }
            // RFC 8288 §3: only the first occurrence of a parameter counts.
            if parameters[name] == nil { parameters[name] = value }
        }
        let relations = (parameters["rel"] ?? "").lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        return WebLink(target: target, relations: relations, parameters: parameters)
    }

    /// A token as it is, or a quoted string without its quotes and escapes; nil for a quote
    /// that does not end.
    private static func unquoted(_ raw: String) -> String? {
        guard raw.hasPrefix("\"") else { return raw }
        var value = ""
        var escaped = false
        for character in raw.dropFirst() {
            if escaped {
                value.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                return value
            } else {
                value.append(character)
            }
        }
        return nil
    }

    /// Splits at `separator` where it stands outside `<…>` and outside quoted strings.
    private static func split<Text: StringProtocol>(_ text: Text, at separator: Character) -> [Substring] {
        let text = Substring(text)
        var parts: [Substring] = []
        var start = text.startIndex
        var inTarget = false, inQuotes = false, escaped = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if escaped {
                escaped = false
            } else if inQuotes {
                if character == "\\" { escaped = true } else if character == "\"" { inQuotes = false }
            } else if inTarget {
                if character == ">" { inTarget = false }
            } else if character == "<" {
                inTarget = true
            } else if character == "\"" {
                inQuotes = true
            } else if character == separator {
                parts.append(text[start..<index])
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        parts.append(text[start...])
        return parts
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
