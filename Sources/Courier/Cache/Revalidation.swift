/// Validation of a stored response with the origin (RFC 9111 §4.3) and its fallback when the
/// origin fails (RFC 5861 §4, RFC 9111 §4.2.4): the conditional fields to send, what a 304 does
/// to the stored response, and when a stored response may answer instead of an error.
enum Revalidation {
    /// What stopped a request from getting a usable response from the origin.
    enum FailureKind: Hashable, Sendable {
        /// The origin could not be reached (no connection, DNS, TLS, timeout…).
        case network
        /// The origin answered with this status.
        case status(Int)
    }

    // MARK: Conditional requests (§4.3.1)

    /// The precondition fields that validate `stored`: `If-None-Match` with its `ETag`, exactly as
    /// stored (weak or strong: the weak comparison of If-None-Match accepts both, RFC 9110
    /// §13.1.2), and `If-Modified-Since` with its `Last-Modified` when that is a valid HTTP date
    /// (§4.3.1 asks for the entity tag and recommends the date for a single stored response; both
    /// go, for servers that only read one). Empty when `stored` has no validator: it cannot be
    /// validated, only replaced.
    static func conditionalHeaders(for stored: StoredResponse, now: Double) -> [String: String] {
        var headers: [String: String] = [:]
        if let etag = entityTag(of: stored.headers) { headers["If-None-Match"] = etag }
        if let lastModified = stored.headers["Last-Modified"],
           CacheHeaders.date(lastModified, now: now) != nil {
            headers["If-Modified-Since"] = lastModified
        }
        return headers
    }

    // MARK: Freshening with a 304 (§4.3.4)

    /// `stored` updated with a 304 (Not Modified) that answered its validation, or nil when the
    /// 304 does not select it (then the 304 says nothing about `stored`, which must not be
    /// reused on its strength; the request is sent again without preconditions).
    ///
    /// Selection (§4.3.4, for the one stored response Courier validates at a time):
    /// - The 304 has an `ETag`: a strong one selects a stored response with the same strong
    ///   `ETag` (strong comparison, RFC 9110 §8.8.3.2); a weak one, a stored `ETag` with the
    ///   same opaque tag (weak comparison). A different tag, or none stored, selects nothing,
    ///   whatever `Last-Modified` says: the entity tag identifies the representation better.
    /// - Otherwise, a valid `Last-Modified` selects a stored response with the same date.
    /// - A 304 without validators selects the stored response. §4.3.4 would select it only when
    ///   it has no validators either, a rule for caches that update stored responses from 304s
    ///   they did not ask for; Courier validates one stored response at a time, so such a 304
    ///   can only be about that one (as browsers read it). Servers send them: httpbin's `/cache`
    ///   does, and RFC 9110 §15.4.5 only asks for the validators "that would have been sent".
    ///
    /// Update (§3.2): each field of the 304 is added, replacing a stored field of the same name
    /// (names case-insensitively), except those §3.1–3.2 keep out:
    /// - `Content-Length`, which describes the 304, not the stored content;
    /// - hop-by-hop fields (`Connection` and the fields it names, `Keep-Alive`,
    ///   `Proxy-Connection`, `TE`, `Transfer-Encoding`, `Upgrade`) and the proxy's
    ///   `Proxy-Authenticate`, `Proxy-Authentication-Info`, `Proxy-Authorization` (§3.1);
    /// - `Content-Encoding`, which the stored body depends on (it is stored decoded, §3.2's own
    ///   example), and `Content-Range`, which the transport processes (§3.2).
    ///
    /// The request and response times become those of the validation, so the age starts again
    /// from the 304 (§4.2.3: age counts from when the response was last validated). Therefore an
    /// `Age` the 304 does not carry is removed (the stored one measured the old exchange), and a
    /// 304 without `Date` is dated when it was received (RFC 9110 §6.6.1: a recipient records
    /// that time and appends `Date` to a message it caches); otherwise the old values would make
    /// the freshened response as old as before.
    static func freshened(_ stored: StoredResponse, with notModifiedHeaders: HTTPFields,
                          requestTime: Double, responseTime: Double) -> StoredResponse? {
        guard selects(notModifiedHeaders, stored, now: responseTime) else { return nil }
        let listedInConnection = (notModifiedHeaders["Connection"] ?? "")
            .split(separator: ",").map { lowercased(CacheHeaders.trimmed($0)) }
        let excluded = nonUpdatedFields.union(listedInConnection)
        let updates = notModifiedHeaders.filter { !excluded.contains(lowercased($0.name)) }

        // The stored fields the 304 does not replace, in their order, then the 304's own (every
        // line of a repeated name, in its order).
        var updated = stored
        var fields = HTTPFields(stored.headers.filter { field in
            !updates.contains { CacheHeaders.namesEqual($0.name, field.name) }
        })
        for field in updates { fields.append(field) }
        if !notModifiedHeaders.contains("Age") { fields.removeAll(named: "Age") }
        if !notModifiedHeaders.contains("Date") {
            fields["Date"] = HTTPDate.format(secondsSince1970: Int64(responseTime.rounded(.down)))
        }
        updated.headers = fields
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        return updated
    }

    /// The fields a 304 never updates (lowercased).
    static let nonUpdatedFields: Set<String> = [
        "content-length", "content-encoding", "content-range",
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authentication-info", "proxy-authorization",
    ]

    /// Whether a 304 with `headers` selects `stored` for update (§4.3.4; see ``freshened``).
    static func selects(_ headers: HTTPFields, _ stored: StoredResponse, now: Double) -> Bool {
        let storedTag = entityTag(of: stored.headers)
        let storedDate = CacheHeaders.date("Last-Modified", in: stored.headers, now: now)
        if let tag = entityTag(of: headers) {
            guard let storedTag else { return false }
            if isWeak(tag) { return opaqueTag(tag) == opaqueTag(storedTag) }
            return !isWeak(storedTag) && opaqueTag(tag) == opaqueTag(storedTag)
        }
        if let date = CacheHeaders.date("Last-Modified", in: headers, now: now) {
            return storedDate == date
        }
        return true
    }

    // MARK: Serving stale on failure (RFC 5861 §4, RFC 9111 §4.2.4)

    /// Whether `stored` may answer a request that failed with `failure` instead of the failure.
    ///
    /// Only failures that RFC 5861 §4 calls errors count: the origin could not be reached, or it
    /// answered 500, 502, 503 or 504. Then:
    /// - ``CachePolicy/reload``: never (the app asked for the origin's answer).
    /// - ``CachePolicy/returnCachedElseLoad``, ``CachePolicy/onlyCached``: always (the app asked
    ///   for stored data whatever its age).
    /// - ``CachePolicy/useProtocol``: when `stale-if-error=N` allows it, that is when the response
    ///   has been stale for at most N seconds. The request's directive, when it has one, decides
    ///   for that request (RFC 5861 §4: its scope is the request it appears in); otherwise the
    ///   response's. But never against RFC 9111 §4.2.4, which forbids generating a stale response
    ///   that an explicit directive prohibits: the response's `no-cache` (validation on every
    ///   use, §5.2.2.4: "even by caches that have been configured to send stale responses"), or
    ///   its `must-revalidate` once it is stale (§5.2.2.2: a disconnected cache must answer with
    ///   an error).
    static func servesStale(_ stored: StoredResponse, after failure: FailureKind, requestHeaders: [String: String],
                            policy: CachePolicy, now: Double, heuristicLimit: Double) -> Bool {
        switch failure {
        case .network, .status(500), .status(502), .status(503), .status(504): break
        case .status: return false
        }
        switch policy {
        case .reload: return false
        case .returnCachedElseLoad, .onlyCached: return true
        case .useProtocol: break
        }
        let basis = stored.freshnessBasis(now: now)
        let response = basis.directives
        let staleness = Freshness(basis, responseTime: stored.responseTime, now: now, heuristicLimit: heuristicLimit).staleness
        if response.noCache != nil || (response.mustRevalidate && staleness > 0) { return false }
        guard let window = CacheHeaders.cacheControl(in: requestHeaders).staleIfError ?? response.staleIfError else {
            return false
        }
        return staleness <= Double(window)
    }

    // MARK: Entity tags

    /// A message's `ETag`, or nil when it has none or a blank one.
    static func entityTag(of headers: HTTPFields) -> String? {
        guard let value = headers["ETag"], !CacheHeaders.trimmed(value).isEmpty else { return nil }
        return value
    }

    /// Whether an entity tag is weak (`W/` prefix, case-sensitive: RFC 9110 §8.8.3).
    static func isWeak(_ tag: String) -> Bool {
        CacheHeaders.trimmed(tag).hasPrefix("W/")
    }

    /// The opaque tag of an entity tag, without its weakness indicator.
    static func opaqueTag(_ tag: String) -> Substring {
        let trimmed = CacheHeaders.trimmed(tag)
        return isWeak(tag) ? trimmed.dropFirst(2) : trimmed
    }

    private static func lowercased(_ name: some StringProtocol) -> String {
        String(decoding: name.utf8.map(HTTPSyntax.lowercase), as: UTF8.self)
    }
}
