import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What names the version of a resource that a download's partial data came from, sent back in
/// `If-Range` so that the server sends the rest only if the resource is still that version
/// (RFC 9110 §13.1.5), and the whole of it otherwise.
///
/// `If-Range` needs a strong validator: bytes from two versions must never be spliced together.
enum ResumeValidator: Hashable, Sendable {
    /// A strong entity tag, exactly as the server sent it (quotes included).
    case entityTag(String)
    /// A `Last-Modified` date that is a strong validator: the response's `Date` is at least 60
    /// seconds later (RFC 9110 §8.8.2.2), so the resource cannot have changed twice within that second.
    case lastModified(String)

    /// The value of `If-Range`.
    var headerValue: String {
        switch self {
        case .entityTag(let tag): tag
        case .lastModified(let date): date
        }
    }

    /// The validator a response offers for resuming its body: its entity tag unless weak (`W/`),
    /// else its `Last-Modified` if strong; `nil` when it has neither, or when its body is
    /// content-coded (then offsets in the file are not offsets in what the server would send).
    ///
    /// An entity tag without the quotes the grammar asks for (httpbin sends `range1024`) is still
    /// used, byte for byte: the server compares it with its own.
    static func of(_ head: ResponseHead) -> ResumeValidator? {
        guard isUncoded(head) else { return nil }
        if let tag = head.headerFields["ETag"]?.trimmingCharacters(in: .whitespaces) {
            if !tag.isEmpty, !tag.hasPrefix("W/"), isSafe(tag) { return .entityTag(tag) }
        }
        if let modified = head.headerFields["Last-Modified"]?.trimmingCharacters(in: .whitespaces),
           let sent = head.headerFields["Date"], isSafe(modified),
           let modifiedAt = httpDate(modified), let sentAt = httpDate(sent), sentAt.timeIntervalSince(modifiedAt) >= 60 {
            return .lastModified(modified)
        }
        return nil
    }

    /// Whether the body comes as the resource is (no `Content-Encoding` but `identity`).
    static func isUncoded(_ head: ResponseHead) -> Bool {
        let coding = head.headerFields["Content-Encoding"]?.trimmingCharacters(in: .whitespaces).lowercased()
        return coding == nil || coding == "" || coding == "identity"
    }

    /// Whether a value read back from disk may go into a header (no CR, LF or NUL).
    static func isSafe(_ value: String) -> Bool {
        (try? HeaderValidator.validate(name: "If-Range", value: value)) != nil
    }

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form servers must send
    /// (RFC 9110 §5.6.7); `nil` for anything else, which then is no validator.
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }
}
