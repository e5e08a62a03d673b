/// An app's own conditional GET (`If-None-Match`, `If-Modified-Since`) evaluated by the cache
/// against the stored response that would answer it (RFC 9111 §4.3.2, RFC 9110 §13.2.2): a
/// match is answered `304 Not Modified` without asking the origin; otherwise the stored response
/// answers whole.
///
/// `If-Match`, `If-Unmodified-Since` and `If-Range` are not the cache's to evaluate (§4.3.2):
/// a request with them goes to the origin as it is.
enum ConditionalRequest {
    /// Whether `stored` is "not modified" for the request's conditions (RFC 9110 §13.2.2, steps
    /// 3 and 4): `If-None-Match` when present (a weak comparison with the stored `ETag`, `*`
    /// matching any), otherwise `If-Modified-Since` against the stored `Last-Modified`, or its
    /// `Date`, or when it was received (§4.3.2). An `If-Modified-Since` that is not a date is
    /// ignored (RFC 9110 §13.1.3).
    static func isNotModified(_ stored: StoredResponse, requestHeaders: [String: String], now: Double) -> Bool {
        if let noneMatch = CacheHeaders.value("If-None-Match", in: requestHeaders) {
            let trimmed = CacheHeaders.trimmed(noneMatch)
            if trimmed == "*" { return true }
            guard let etag = Revalidation.entityTag(of: stored.headers) else { return false }
            let opaque = Revalidation.opaqueTag(etag)
            return entityTags(in: noneMatch).contains { Revalidation.opaqueTag(String($0)) == opaque }
        }
        guard let since = CacheHeaders.date("If-Modified-Since", in: requestHeaders, now: now) else { return false }
        let modified = CacheHeaders.date("Last-Modified", in: stored.headers, now: now)
            ?? CacheHeaders.date("Date", in: stored.headers, now: now) ?? stored.responseTime
        return modified <= since
    }

    /// The entity tags of an `If-None-Match` list (RFC 9110 §8.8.3): quoted strings, each
    /// perhaps `W/`-prefixed, separated by commas, which may also stand inside a tag.
    static func entityTags(in list: String) -> [Substring] {
        var tags: [Substring] = []
        var rest = Substring(list)
        while true {
            rest = rest.drop { $0 == "," || $0 == " " || $0 == "\t" }
            guard !rest.isEmpty else { return tags }
            let start = rest.startIndex
            if rest.hasPrefix("W/") { rest = rest.dropFirst(2) }
            guard rest.first == "\"", let close = rest.dropFirst().firstIndex(of: "\"") else {
                // Not an entity tag: skip to the next comma.
                rest = rest.drop { $0 != "," }
                continue
            }
            tags.append(list[start...close])
            rest = rest[rest.index(after: close)...]
        }
    }

    /// The fields of a `304` answering for `stored` (RFC 9110 §15.4.5): those a 200 would carry
    /// of `Cache-Control`, `Content-Location`, `Date`, `ETag`, `Expires` and `Vary`, and
    /// `Last-Modified` when there is no `ETag`.
    static func notModifiedHeaders(of stored: StoredResponse) -> HTTPFields {
        var names = ["Cache-Control", "Content-Location", "Date", "ETag", "Expires", "Vary"]
        if Revalidation.entityTag(of: stored.headers) == nil { names.append("Last-Modified") }
        return HTTPFields(stored.headers.filter { field in names.contains { CacheHeaders.namesEqual($0, field.name) } })
    }
}
