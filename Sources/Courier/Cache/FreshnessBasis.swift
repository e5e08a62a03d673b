/// What a stored response's ``Freshness`` depends on besides the clock, read from its fields
/// once: its `Cache-Control` directives, its corrected initial age and its freshness lifetime.
///
/// A stored response answers many requests, and reading its `Cache-Control`, `Date`, `Age`,
/// `Expires` and `Last-Modified` for each was a sixth of a fresh hit from memory. The memory
/// store keeps the basis with the response from its first use (``StoredResponse/freshnessBasis``);
/// a hit then only adds the time the response has been resident.
///
/// The rules are those of ``Freshness`` (RFC 9111 §4.2); the two-digit years of obsolete date
/// formats are settled by the clock when the basis is read, which a later reading could only
/// settle differently across the turn of a century's half.
struct FreshnessBasis: Hashable, Sendable {
    /// How long a response stays fresh, before the cache's cap on heuristic lifetimes.
    enum Lifetime: Hashable, Sendable {
        /// `max-age`, or `Expires` minus `Date`: seconds.
        case explicit(Double)
        /// A tenth of the time between `Last-Modified` and `Date` (§4.2.2), before
        /// ``ResponseCache/heuristicFreshnessLimit`` caps it.
        case heuristic(Double)
        /// None: stale from the start (no explicit expiration, and no heuristic applies).
        case none
    }

    /// The response's `Cache-Control` directives; none when it has no such field.
    let directives: CacheControl
    /// `corrected_initial_age` (§4.2.3): its age when it was received, in seconds.
    let correctedInitialAge: Double
    /// Its freshness lifetime.
    let lifetime: Lifetime

    /// The basis of `stored`, its dates read at `now` (seconds since 1970); `directives` are its
    /// `Cache-Control`'s when the caller has parsed them already.
    init(of stored: StoredResponse, now: Double, directives: CacheControl? = nil) {
        let headers = stored.headers
        let dateValue = CacheHeaders.date("Date", in: headers, now: now) ?? stored.responseTime
        let apparentAge = max(0, stored.responseTime - dateValue)
        let responseDelay = max(0, stored.responseTime - stored.requestTime)
        let correctedAgeValue = Freshness.ageValue(headers["Age"]) + responseDelay
        correctedInitialAge = max(apparentAge, correctedAgeValue)

        let directives = directives ?? CacheHeaders.cacheControl(in: headers)
        self.directives = directives
        switch directives.maxAgeDirective {
        case .seconds(let seconds):
            lifetime = .explicit(Double(seconds))
        case .invalid:
            lifetime = .explicit(0)
        case nil:
            if let expires = headers["Expires"] {
                lifetime = .explicit(CacheHeaders.date(expires, now: now).map { max(0, $0 - dateValue) } ?? 0)
            } else if Freshness.isHeuristicallyCacheable(stored.statusCode)
                        || directives.isPublic || directives.privateScope != nil,
                      let lastModified = CacheHeaders.date("Last-Modified", in: headers, now: now),
                      lastModified < dateValue {
                lifetime = .heuristic((dateValue - lastModified) / 10)
            } else {
                lifetime = .none
            }
        }
    }
}

extension StoredResponse {
    /// Its freshness basis: the one a store keeps with it, or read from its fields at `now`
    /// (`directives` are its `Cache-Control`'s when the caller has parsed them already).
    func freshnessBasis(now: Double, directives: CacheControl? = nil) -> FreshnessBasis {
        freshnessBasis ?? FreshnessBasis(of: self, now: now, directives: directives)
    }
}
