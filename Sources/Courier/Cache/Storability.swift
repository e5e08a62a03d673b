/// Whether the cache may store a response, and for whom: RFC 9111 §3 for a private cache, with
/// the limits of what Courier implements.
///
/// The rules, in the order they are checked (the first that refuses gives the reason):
/// 1. Only responses to `GET` are stored (§3: the method must be understood; Courier keys
///    stored responses by URL alone, which is right for `GET` only). Methods are case-sensitive
///    (RFC 9110 §9.1), so `get` is another method.
/// 2. The status must be final (§3): not 1xx.
/// 3. No partial content: a 206, or any response to a request with `Range`. §3.3 allows storing
///    ranges only to a cache that implements `Range` and `Content-Range`; Courier does not
///    combine them.
/// 4. No response to a request with its own preconditions (`If-None-Match`, `If-Modified-Since`,
///    `If-Match`, `If-Unmodified-Since`, `If-Range`): the app validates its own copy, and the
///    answer (often a 304 without content) belongs to that exchange.
/// 5. No `no-store` in the request (§5.2.1.5) or the response (§5.2.2.5). A response with
///    `must-understand` whose status Courier understands may ignore its `no-store` (§5.2.2.3).
/// 6. No `Vary: *` (or a `Vary` Courier cannot read): §4.1 says it always fails to match, so
///    storing it could only waste space.
/// 7. The response must say it may be stored (§3, last item, for a private cache): `public`,
///    `private`, `Expires`, `max-age`, or a heuristically cacheable status (RFC 9110 §15.1);
///    and with `must-understand`, a status Courier understands (§3, third item).
///
/// `private` never stops a private cache (§5.2.2.7), and `s-maxage` gives it no permission to
/// store (it is for shared caches).
///
/// **Credentials** (§3.5): a shared cache must not reuse a response to a request with
/// `Authorization` unless `public`, `must-revalidate` or `s-maxage` allows it. A private cache
/// may, but Courier's one cache can serve several users of one app (an account switch), so
/// such a response is stored bound to a digest of the credentials (``credentialKey(requestHeaders:)``)
/// and answers only requests with the same `Authorization`.
enum Storability {
    /// The final status codes whose caching requirements Courier implements, for
    /// `must-understand` (§5.2.2.3): those RFC 9110 §15 defines, whose only caching rule is
    /// whether they are heuristically cacheable, except 206 (Courier does not implement ranges)
    /// and 304 (it freshens a stored response and is never stored itself); 305, 306 and 418 are
    /// deprecated or unused. (A `switch`, not a `Set`: it is asked for every response.)
    static func isUnderstood(_ status: Int) -> Bool {
        switch status {
        case 200...205, 300...303, 307, 308, 400...417, 421, 422, 426, 500...505: true
        default: false
        }
    }

    /// What the cache does with the response to a request.
    /// - Parameters:
    ///   - request: The request, as sent.
    ///   - statusCode: The response's status code.
    ///   - responseHeaders: The response's header fields.
    static func decide(request: CacheRequest, statusCode: Int, responseHeaders: HTTPFields) -> StoreDecision {
        decide(request: request, statusCode: statusCode, received: ResponseFields(responseHeaders))
    }

    /// ``decide(request:statusCode:responseHeaders:)`` with the response's fields read already
    /// (the cache keeps their `Vary` for the stored response's secondary key).
    static func decide(request: CacheRequest, statusCode: Int, received: ResponseFields) -> StoreDecision {
        guard request.method == "GET" else { return .doNotStore(.methodNotCacheable) }
        guard statusCode >= 200 else { return .doNotStore(.statusNotFinal) }
        let fields = request.fields
        if statusCode == 206 || fields.hasRange { return .doNotStore(.partialContent) }
        if fields.hasPreconditions { return .doNotStore(.userConditional) }

        let asked = fields.hasCacheControl ? CacheHeaders.cacheControl(in: request.headers) : CacheControl()
        let response = received.cacheControl.map(CacheControl.init) ?? CacheControl()
        let understood = isUnderstood(statusCode)
        if asked.noStore || (response.noStore && !(response.mustUnderstand && understood)) {
            return .doNotStore(.noStore)
        }
        if received.vary == .everything {
            return .doNotStore(.varyEverything)
        }
        let allowed = response.isPublic || response.privateScope != nil || response.maxAgeDirective != nil
            || received.hasExpires
            || Freshness.isHeuristicallyCacheable(statusCode)
        guard allowed, statusCode != 304, understood || !response.mustUnderstand else {
            return .doNotStore(.notCacheableStatus)
        }

        let sharable = response.isPublic || response.mustRevalidate || response.sharedMaxAgeDirective != nil
        return .store(bindsCredentials: fields.hasAuthorization && !sharable)
    }

    /// The response fields the rules read, found in one pass over them: each value as the fields'
    /// subscript reads it (repeated lines joined with ", ").
    struct ResponseFields {
        /// `Cache-Control`, unparsed.
        private(set) var cacheControl: String?
        /// `Vary`, parsed; no fields without one.
        let vary: Vary
        private(set) var hasExpires = false

        init(_ fields: borrowing HTTPFields) {
            var vary: String?
            // By index: a `for`-`in` loop would consume a copy of the borrowed fields.
            for index in fields.startIndex..<fields.endIndex {
                let field = fields[index]
                switch field.name.utf8.count {
                case 4 where CacheHeaders.namesEqual(field.name, "Vary"):
                    vary = vary.map { $0 + ", " + field.value } ?? field.value
                case 7 where CacheHeaders.namesEqual(field.name, "Expires"):
                    hasExpires = true
                case 13 where CacheHeaders.namesEqual(field.name, "Cache-Control"):
                    cacheControl = cacheControl.map { $0 + ", " + field.value } ?? field.value
                default:
                    break
                }
            }
            self.vary = vary.map(Vary.init) ?? .fields([])
        }
    }

    /// The digest that binds a stored response to the credentials of the request that got it
    /// (``StoredResponse/credentialKey``): `"a1:"` and 16 hexadecimal digits of the 64-bit
    /// FNV-1a hash of the `Authorization` value's UTF-8 bytes; nil without `Authorization`.
    ///
    /// FNV-1a is not a cryptographic hash: it keeps the token itself off the disk and tells
    /// users apart (an accidental collision between two tokens is a 2^-64 chance), but someone
    /// who can read the store and wants to find a token with the same digest can. Anyone who can
    /// read the store can read the stored responses themselves anyway. The `a1` names the
    /// scheme, so that a later one cannot be confused with it.
    static func credentialKey(requestHeaders: [String: String]) -> String? {
        guard let authorization = CacheHeaders.value("Authorization", in: requestHeaders) else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in authorization.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "a1:" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// What the cache does with a response (``Storability/decide(request:statusCode:responseHeaders:)``).
enum StoreDecision: Hashable, Sendable {
    /// Store it; when `bindsCredentials`, only for requests with the same `Authorization`
    /// (save it with ``Storability/credentialKey(requestHeaders:)``).
    case store(bindsCredentials: Bool)
    /// Do not store it.
    case doNotStore(Reason)

    /// Why a response is not stored.
    enum Reason: Hashable, Sendable {
        /// The request method is not `GET`.
        case methodNotCacheable
        /// An informational (1xx) response.
        case statusNotFinal
        /// A 206, or a response to a range request.
        case partialContent
        /// The request carried its own preconditions.
        case userConditional
        /// `no-store` in the request or the response.
        case noStore
        /// `Vary: *`, which no later request can match.
        case varyEverything
        /// Nothing in the response allows storing it: a status that is not heuristically
        /// cacheable without explicit freshness, `public` or `private`; or `must-understand` with
        /// a status Courier does not understand; or a 304, which freshens a stored response
        /// instead (see ``Revalidation``).
        case notCacheableStatus
    }
}
