/// A `Content-Range` header of bytes (RFC 9110 §14.4): `bytes 100-199/1000` on a `206`, the
/// part sent and the whole length; `bytes */1000` on a `416`, the whole length alone. A download
/// reads it to tell whether a part continues its partial data.
struct ContentRange: Hashable, Sendable {
    /// The first and last positions of the bytes sent (from 0, inclusive); `nil` for `*` (a `416`'s).
    let range: ClosedRange<Int64>?
    /// The length of the whole representation; `nil` when the server wrote `*` (unknown).
    let completeLength: Int64?

    /// Parses a header value; `nil` for anything but a well-formed range of bytes (another unit,
    /// a last position before the first or past the end, `*/*`).
    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.count > 6, trimmed.prefix(6).lowercased() == "bytes " else { return nil }
        let parts = trimmed.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let complete: Int64?
        if parts[1] == "*" {
            complete = nil
        } else {
            guard let length = Self.number(parts[1]) else { return nil }
            complete = length
        }
        if parts[0] == "*" {
            guard complete != nil else { return nil }
            range = nil
        } else {
            let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]), first <= last,
                  complete.map({ last < $0 }) ?? true else { return nil }
            range = first...last
        }
        completeLength = complete
    }

    /// Digits only (no sign, no spaces), as the grammar says.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}
