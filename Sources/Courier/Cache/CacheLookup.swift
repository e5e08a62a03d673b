/// What a request does with the stored responses (``CacheLookup/decide(stored:request:policy:now:heuristicLimit:)``).
enum CacheDecision: Hashable, Sendable {
    /// Answer with this response, which is fresh; send nothing.
    case fresh(StoredResponse)
    /// Answer with this response although it is stale: the policy accepts any age, or the
    /// request's `max-stale` (or `only-if-cached` within `stale-while-revalidate`) accepts it.
    case stale(StoredResponse)
    /// Answer with this stale response now, and revalidate it in the background with these
    /// fields (RFC 5861 §3); with no fields, the background request is a plain load that
    /// replaces it.
    case staleWhileRevalidate(StoredResponse, conditionalHeaders: [String: String])
    /// Send the request with these fields added; a 304 makes the stored response (freshened by
    /// ``Revalidation/freshened(_:with:requestTime:responseTime:)``) the answer.
    case validate(StoredResponse, conditionalHeaders: [String: String])
    /// The request is the app's own conditional GET, and this stored response, which may answer
    /// it (fresh, or stale as the policy allows), is not modified by its conditions: answer
    /// `304 Not Modified` (RFC 9111 §4.3.2); send nothing.
    case notModified(StoredResponse, CacheFreshness)
    /// Nothing usable is stored: send the request as it is.
    case load
    /// The policy (``CachePolicy/onlyCached``) or the request (`only-if-cached`) forbids the
    /// network, and nothing usable is stored: the request fails (a cache answers 504 here,
    /// RFC 9111 §5.2.1.7).
    case unavailable
}

/// Which stored response may answer a request, and how (RFC 9111 §4, RFC 5861 §3).
enum CacheLookup {
    /// The stored response that may answer `request` (§4.1), or nil:
    /// - its URL is the request's primary key (§4, first item);
    /// - the request fields its `Vary` names match those of the request that got it (§4.1;
    ///   `Vary: *` matches nothing);
    /// - it is bound to no credentials, or to those of this request (RFC 9111 §3.5, see
    ///   ``Storability``).
    /// Of several, the most recent by `Date` wins (§4: "the most recent one (as determined by
    /// the Date header field)"); a response without a valid `Date` is dated when it was received
    /// (RFC 9110 §6.6.1), and at equal dates the one received last wins; then the first in
    /// `stored`.
    static func bestMatch(in stored: [StoredResponse], for request: CacheRequest) -> StoredResponse? {
        // The request's credential digest, made only for a response bound to credentials.
        var credentials: String??
        func matches(_ response: StoredResponse) -> Bool {
            guard response.url == request.url, response.vary.matches(response.secondaryKey, headers: request.headers) else {
                return false
            }
            guard let bound = response.credentialKey else { return true }
            if credentials == nil { credentials = Storability.credentialKey(requestHeaders: request.headers) }
            return bound == credentials!
        }
        // One stored response (the usual case) needs no array of matches and no dates.
        if stored.count == 1 { return matches(stored[0]) ? stored[0] : nil }
        let matching = stored.filter(matches)
        if matching.count < 2 { return matching.first }
        var best: (response: StoredResponse, date: Double)?
        for response in matching {
            let date = CacheHeaders.date("Date", in: response.headers, now: response.responseTime) ?? response.responseTime
            if let current = best,
               (current.date, current.response.responseTime) >= (date, response.responseTime) { continue }
            best = (response, date)
        }
        return best?.response
    }

    /// What `request` does with the responses stored for its URL, under `policy`, at `now`
    /// (seconds since 1970), with heuristic lifetimes capped at `heuristicLimit` seconds.
    ///
    /// For every policy: only `GET` uses stored responses, and a request with preconditions only
    /// an origin evaluates (`If-Match`, `If-Unmodified-Since`, `If-Range`) or a `Range` bypasses
    /// the cache; with ``CachePolicy/onlyCached`` such a request is ``CacheDecision/unavailable``,
    /// since it may not go to the network either. A request with `If-None-Match` or
    /// `If-Modified-Since` (the app validating its own copy) is answered from a stored response
    /// that may answer it without the origin: ``CacheDecision/notModified(_:_:)`` when the
    /// conditions say so (``ConditionalRequest``), else that response whole; and goes to the
    /// origin as it is otherwise, never with the cache's validators added to the app's.
    ///
    /// - ``CachePolicy/reload``: ``CacheDecision/load``.
    /// - ``CachePolicy/returnCachedElseLoad``: the best match, fresh or stale, whatever its
    ///   directives; ``CacheDecision/load`` when there is none.
    /// - ``CachePolicy/onlyCached``: the same, but ``CacheDecision/unavailable`` when there is none.
    /// - ``CachePolicy/useProtocol``: see ``decideByProtocol(_:request:now:heuristicLimit:)``.
    static func decide(stored: [StoredResponse], request: CacheRequest, policy: CachePolicy, now: Double,
                       heuristicLimit: Double) -> CacheDecision {
        let network: CacheDecision = policy == .onlyCached ? .unavailable : .load
        // Nothing stored (every first request for a URL): whatever else the request says, it goes
        // to the network, or fails under `onlyCached`, unless `only-if-cached` makes a
        // `useProtocol` request fail; the rules below decide that case.
        if stored.isEmpty,
           policy != .useProtocol || !request.fields.hasCacheControl || !requestDirectives(request).onlyIfCached {
            return network
        }
        guard request.method == "GET", !request.fields.hasOriginOnlyPreconditions, !request.fields.hasRange,
              policy != .reload else { return network }
        if request.fields.isConditional {
            switch decide(stored: stored, unconditional: request, policy: policy, now: now, heuristicLimit: heuristicLimit) {
            case .fresh(let best): return answer(request, with: best, .fresh, now: now)
            case .stale(let best): return answer(request, with: best, .stale, now: now)
            default: return network
            }
        }
        return decide(stored: stored, unconditional: request, policy: policy, now: now, heuristicLimit: heuristicLimit)
    }

    /// The stored response `best`, which may answer `request`, as the answer to its conditions:
    /// `304` when they say not modified (only for a stored `200`, RFC 9111 §4.3.2), else `best`.
    private static func answer(_ request: CacheRequest, with best: StoredResponse, _ freshness: CacheFreshness,
                               now: Double) -> CacheDecision {
        if best.statusCode == 200, ConditionalRequest.isNotModified(best, requestHeaders: request.headers, now: now) {
            return .notModified(best, freshness)
        }
        return freshness == .fresh ? .fresh(best) : .stale(best)
    }

    /// ``decide(stored:request:policy:now:heuristicLimit:)`` for a GET whose conditions, if any,
    /// are left to the caller.
    private static func decide(stored: [StoredResponse], unconditional request: CacheRequest, policy: CachePolicy,
                               now: Double, heuristicLimit: Double) -> CacheDecision {
        let network: CacheDecision = policy == .onlyCached ? .unavailable : .load
        guard let best = bestMatch(in: stored, for: request) else {
            return policy == .useProtocol && requestDirectives(request).onlyIfCached ? .unavailable : network
        }
        switch policy {
        case .returnCachedElseLoad, .onlyCached:
            return Freshness(of: best, now: now, heuristicLimit: heuristicLimit).isFresh ? .fresh(best) : .stale(best)
        case .useProtocol, .reload:
            return decideByProtocol(best, request: request, now: now, heuristicLimit: heuristicLimit)
        }
    }

    /// RFC 9111 §4 for the best match of a request:
    /// 1. Fresh, and within the request's `max-age` (age ≤ N) and `min-fresh` (lifetime − age ≥ N)
    ///    (§5.2.1.1, §5.2.1.3): ``CacheDecision/fresh``; unless `no-cache` in the response
    ///    (bare or with field names, both handled as bare: §5.2.2.4 notes that caches commonly
    ///    do) or in the request (§5.2.1.4; `Pragma: no-cache` when the request has no
    ///    `Cache-Control`, §5.4) asks for validation.
    /// 2. Stale, and the response allows serving stale (neither `no-cache` nor `must-revalidate`,
    ///    §4.2.4), and the request's `max-age` and `min-fresh` hold:
    ///    - the request's `max-stale` covers its staleness (§5.2.1.2): ``CacheDecision/stale``;
    ///    - the response's `stale-while-revalidate` covers it (RFC 5861 §3, the window includes
    ///      its last second): ``CacheDecision/staleWhileRevalidate``, or
    ///      ``CacheDecision/stale`` with `only-if-cached`, which allows no request, even in the
    ///      background.
    /// 3. Otherwise it must be validated: ``CacheDecision/validate``, or ``CacheDecision/load``
    ///    when it has no validator (a conditional request could not select it), or
    ///    ``CacheDecision/unavailable`` when the request says `only-if-cached` (§5.2.1.7).
    ///
    /// `immutable` needs nothing here: it only tells clients not to revalidate a fresh response,
    /// which the cache never does unless asked to.
    static func decideByProtocol(_ best: StoredResponse, request: CacheRequest, now: Double,
                                 heuristicLimit: Double) -> CacheDecision {
        let asked = requestDirectives(request)
        // Read from its fields once, usually when it was first used.
        let basis = best.freshnessBasis(now: now)
        let response = basis.directives
        let freshness = Freshness(basis, responseTime: best.responseTime, now: now, heuristicLimit: heuristicLimit)
        let withinRequestLimits = (asked.maxAge.map { freshness.age <= Double($0) } ?? true)
            && (asked.minFresh.map { freshness.lifetime - freshness.age >= Double($0) } ?? true)
        let mustValidate = asked.noCache != nil || response.noCache != nil

        if freshness.isFresh, withinRequestLimits, !mustValidate { return .fresh(best) }
        if !freshness.isFresh, withinRequestLimits, !mustValidate, !response.mustRevalidate {
            let staleness = freshness.staleness
            switch asked.maxStale {
            case .any?: return .stale(best)
            case .seconds(let limit)? where staleness <= Double(limit): return .stale(best)
            default: break
            }
            if let window = response.staleWhileRevalidate, staleness <= Double(window) {
                if asked.onlyIfCached { return .stale(best) }
                return .staleWhileRevalidate(best, conditionalHeaders: Revalidation.conditionalHeaders(for: best, now: now))
            }
        }
        if asked.onlyIfCached { return .unavailable }
        let conditions = Revalidation.conditionalHeaders(for: best, now: now)
        return conditions.isEmpty ? .load : .validate(best, conditionalHeaders: conditions)
    }

    /// A request's cache directives: its `Cache-Control`, or, when it has none, `no-cache` if its
    /// `Pragma` lists `no-cache` (RFC 9111 §5.4 deprecates `Pragma`, but HTTP/1.0 clients and
    /// RFC 7234 §5.4 gave it that meaning, and a request that bothers to send it wants it).
    static func requestDirectives(_ request: CacheRequest) -> CacheControl {
        let headers = request.headers
        if request.fields.hasCacheControl { return CacheHeaders.cacheControl(in: headers) }
        var directives = CacheControl()
        if request.fields.hasPragma, let pragma = CacheHeaders.value("Pragma", in: headers),
           pragma.split(separator: ",").contains(where: { CacheHeaders.namesEqual(String(CacheHeaders.trimmed($0)), "no-cache") }) {
            directives.noCache = .all
        }
        return directives
    }
}
