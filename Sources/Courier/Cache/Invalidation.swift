import Foundation

/// Which stored responses a request that may change the origin's state makes obsolete:
/// RFC 9111 §4.4.
enum Invalidation {
    /// Whether RFC 9110 §9.2.1 defines a method as safe; every other method, known or not, is
    /// treated as unsafe (§4.4: "including methods whose safety is unknown"). Methods are
    /// case-sensitive.
    static func isSafe(_ method: String) -> Bool {
        switch method {
        case "GET", "HEAD", "OPTIONS", "TRACE": true
        default: false
        }
    }

    /// The primary keys (``CacheKey/make(for:)``) whose stored responses are to be removed after
    /// a request with `method` to `requestURL` got a response with `statusCode` and
    /// `responseHeaders`; empty when nothing is invalidated.
    ///
    /// Only an unsafe method answered with a non-error status (2xx or 3xx, §4.4) invalidates:
    /// first its target URI (which §4.4 requires), then the URIs in `Location` and
    /// `Content-Location` (which §4.4 allows, and which name what such a request typically
    /// changed or created), resolved against the request URL, when they have the origin of the
    /// target URI (scheme, host and port, RFC 9110 §4.3.1; §4.4 forbids others, so that a
    /// response cannot wipe another site's entries). A field value is read as Foundation's `URL`
    /// reads a reference (which percent-encodes a stray space rather than refuse it: harmless, as
    /// the origin check still applies); one it cannot read is ignored. No key is listed twice.
    static func invalidatedKeys(method: String, requestURL: URL, statusCode: Int,
                                responseHeaders: HTTPFields) -> [String] {
        guard !isSafe(method), (200...399).contains(statusCode),
              let target = CacheKey.make(for: requestURL) else { return [] }
        var keys = [target]
        for field in ["Location", "Content-Location"] {
            guard let value = responseHeaders[field],
                  let url = URL(string: String(CacheHeaders.trimmed(value)), relativeTo: requestURL),
                  let key = CacheKey.make(for: url.absoluteURL),
                  origin(of: key) == origin(of: target), !keys.contains(key) else { continue }
            keys.append(key)
        }
        return keys
    }

    /// The origin (scheme, host, port or nil for the default) of a primary key, which
    /// ``CacheKey`` has already lowercased and stripped of a default port.
    private static func origin(of key: String) -> [String?]? {
        guard let components = URLComponents(string: key) else { return nil }
        return [components.scheme, components.host, components.port.map(String.init)]
    }
}
