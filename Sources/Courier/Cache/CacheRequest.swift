/// A request as the cache's rules see it: what the lookup (``CacheLookup``) and the storing
/// rules (``Storability``) read of it, the names of its fields read once for both.
struct CacheRequest: Sendable, Hashable {
    /// The request method, as it will be sent.
    let method: String
    /// The primary key (``CacheKey/make(for:)``) of the request's URL.
    let url: String
    /// The request's header fields.
    let headers: [String: String]
    /// `url`'s ``GroupIndex/hash(_:)``, by which the memory store finds it: hashed once for the
    /// lookup and the store that follows.
    let urlHash: UInt32
    /// Which of the fields the rules ask about it has.
    let fields: Fields

    init(method: String, url: String, headers: [String: String]) {
        self.method = method
        self.url = url
        self.headers = headers
        urlHash = GroupIndex.hash(url)
        fields = Fields(headers)
    }

    /// The request fields the cache's rules ask about, found in one pass over the request's
    /// names (a name is compared only with those of its length), compared as HTTP compares them.
    struct Fields: Hashable, Sendable {
        /// `Range`.
        var hasRange = false
        /// `If-Match`, `If-Unmodified-Since` or `If-Range`: preconditions only an origin
        /// evaluates (RFC 9111 §4.3.2).
        var hasOriginOnlyPreconditions = false
        /// `If-None-Match` or `If-Modified-Since`: the app validating a copy of its own, which
        /// the cache may answer (``ConditionalRequest``).
        var isConditional = false
        /// `Cache-Control`.
        var hasCacheControl = false
        /// `Pragma`.
        var hasPragma = false
        /// `Authorization`.
        var hasAuthorization = false

        /// Any precondition: the origin's or the app's own.
        var hasPreconditions: Bool { hasOriginOnlyPreconditions || isConditional }

        init(_ headers: [String: String]) {
            for name in headers.keys {
                switch name.utf8.count {
                case 5:
                    hasRange = hasRange || CacheHeaders.namesEqual(name, "Range")
                case 6:
                    hasPragma = hasPragma || CacheHeaders.namesEqual(name, "Pragma")
                case 8:
                    hasOriginOnlyPreconditions = hasOriginOnlyPreconditions || CacheHeaders.namesEqual(name, "If-Match")
                        || CacheHeaders.namesEqual(name, "If-Range")
                case 13:
                    hasCacheControl = hasCacheControl || CacheHeaders.namesEqual(name, "Cache-Control")
                    hasAuthorization = hasAuthorization || CacheHeaders.namesEqual(name, "Authorization")
                    isConditional = isConditional || CacheHeaders.namesEqual(name, "If-None-Match")
                case 17:
                    isConditional = isConditional || CacheHeaders.namesEqual(name, "If-Modified-Since")
                case 19:
                    hasOriginOnlyPreconditions = hasOriginOnlyPreconditions
                        || CacheHeaders.namesEqual(name, "If-Unmodified-Since")
                default:
                    break
                }
            }
        }
    }
}
