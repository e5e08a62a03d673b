import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Applies the queue's HTTP cache to buffered requests: a layer between the queue's stages
/// (below shared transfers, so a shared transfer is looked up and stored once) and the transport.
///
/// For each request it asks ``CacheLookup`` what the stored responses allow, then answers from
/// the cache, sends the request (conditionally, to validate a stored response), or fails with
/// ``RequestError/notCached(_:)``; it stores what ``Storability`` allows, freshens a stored
/// response with a `304` (``Revalidation``), serves a stale one when the origin fails and the
/// response or the policy allow it, and forgets what unsafe methods change (``Invalidation``).
/// Every answer says where it came from (``TransportResponse/source``). Streams pass through.
final class CacheLayer: Transport {
    let inner: any Transport
    let cache: ResponseCache
    /// Background revalidations (`stale-while-revalidate`) by key: one at a time per key.
    private let revalidations = Locked<[String: any TransportTask]>([:])
    /// Heads made for stored responses: making one (its fields sorted, its `Age` set) costs about
    /// as much as the rest of a memory hit, so a response answering again at the same age reuses
    /// its head. At most 256, forgotten all at once.
    private let heads = Locked<[HeadKey: ResponseHead]>([:])

    private struct HeadKey: Hashable {
        let url: String
        let statusCode: Int
        let requestTime: Double
        let responseTime: Double
        let secondaryKey: [String?]
        let age: Int

        /// Hashed by the times and the age alone, which already tell the stored responses apart
        /// (two stored in the same microsecond share a bucket and are told apart by equality):
        /// hashing the URL as well cost a hit as much as the rest of finding its head.
        func hash(into hasher: inout Hasher) {
            hasher.combine(requestTime)
            hasher.combine(responseTime)
            hasher.combine(age)
        }
    }

    init(_ inner: any Transport, cache: ResponseCache) {
        self.inner = inner
        self.cache = cache
    }

    /// Looks the request up when its task is made (the queue resumes it right after), and makes
    /// the task its decision needs: a ``CachedAnswerTask`` for an answer from the store, a
    /// ``CacheTask`` for a request that goes to the origin with a stored response at hand (or
    /// may not go); and for a request the store has nothing for (most requests an app makes the
    /// first time), whose caller wants nothing shown first, the transport's own task, its answer
    /// stored on the way back.
    func makeTask(for request: TransportRequest,
                  completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) -> any TransportTask {
        let urlRequest = request.urlRequest
        // A URL without scheme or host names nothing a cache can keep.
        guard let url = urlRequest.url, let key = CacheKey.make(for: url) else {
            return loadingTask(request, lookup: nil, url: urlRequest.url, requestTime: cache.clock(), completion: completion)
        }
        // The fields once: a `URLRequest` makes a new dictionary each time it is asked.
        let lookup = CacheRequest(method: urlRequest.httpMethod ?? "GET", url: key, headers: urlRequest.allHTTPHeaderFields ?? [:])
        let now = cache.clock()
        let stored = lookup.method == "GET" ? cache.responses(matching: lookup, now: now) : []
        let work: CacheTask.Work
        switch CacheLookup.decide(stored: stored, request: lookup, policy: request.context.cachePolicy, now: now,
                                  heuristicLimit: cache.heuristicFreshnessLimit) {
        case .fresh(let response):
            return CachedAnswerTask(self.response(answeringWith: response, .fresh, url: url), completion: completion)
        case .stale(let response):
            return CachedAnswerTask(self.response(answeringWith: response, .stale, url: url), completion: completion)
        case .notModified(let response, let freshness):
            return CachedAnswerTask(self.response(notModified: response, freshness, url: url), completion: completion)
        case .staleWhileRevalidate(let response, let conditionalHeaders):
            work = .staleWhileRevalidate(response, conditionalHeaders: conditionalHeaders)
        case .validate(let response, let conditionalHeaders):
            work = .validate(response, conditionalHeaders: conditionalHeaders)
        case .load:
            // What the policy or stale-if-error may still fall back on, or show first.
            let fallback = stored.isEmpty ? nil : CacheLookup.bestMatch(in: stored, for: lookup)
            if fallback == nil, request.context.cachedFirst == nil {
                return loadingTask(request, lookup: lookup, url: url, requestTime: now, completion: completion)
            }
            work = .load(fallback: fallback)
        case .unavailable:
            work = .unavailable
        }
        return CacheTask(layer: self, request: request, lookup: lookup, url: url, work: work, completion: completion)
    }

    /// The transport's task for a request sent as it is, with nothing stored to fall back on:
    /// its answer is stored under `lookup`'s key (when there is one) if the rules allow.
    /// `requestTime` is the cache clock's time as the task is made (it is resumed right after).
    private func loadingTask(_ request: TransportRequest, lookup: consuming CacheRequest?, url: consuming URL?,
                             requestTime: Double,
                             completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void)
        -> any TransportTask {
        let method = lookup?.method ?? (request.urlRequest.httpMethod ?? "GET")
        // The lookup and URL moved into the closure: captured as they are, they would be copied.
        return inner.makeTask(for: request) { [self, lookup = consume lookup, url = consume url] result in
            if case .success(let response) = result {
                loaded(response, for: lookup, method: method, url: url, requestTime: requestTime, responseTime: cache.clock())
            }
            // Handed on after the other responses of the curl loop's pass are stored: the
            // storing code runs for them all in a row (`TransportHandOver.complete`).
            TransportHandOver.complete(result, with: completion)
        }
    }

    /// What follows a response from the origin that answers the request as it is: stored under
    /// `lookup`'s key (when there is one) if the rules allow, and what an unsafe method changed forgotten.
    func loaded(_ response: borrowing TransportResponse, for lookup: CacheRequest?, method: String, url: URL?,
                requestTime: Double, responseTime: Double) {
        if let lookup { store(response, for: lookup, requestTime: requestTime, responseTime: responseTime) }
        invalidate(after: response, method: method, url: url)
    }

    func makeStreamingTask(for request: TransportRequest, receiver: any TransportStreamReceiver) -> any TransportTask {
        inner.makeStreamingTask(for: request, receiver: receiver)
    }

    func invalidate() {
        let background = revalidations.withLock { tasks in
            defer { tasks = [:] }
            return Array(tasks.values)
        }
        for task in background { task.cancel() }
        inner.invalidate()
    }

    // MARK: - Answers from the store

    /// The answer a stored response gives a request for `url`: its head (with its current
    /// `Age`), its body, where it came from, and, when fresh, how long it stays so.
    func response(answeringWith stored: StoredResponse, _ freshness: CacheFreshness, url: URL) -> TransportResponse {
        let current = currentFreshness(of: stored)
        var response = TransportResponse(head: head(of: stored, for: url, age: Self.ageField(current.age)), body: stored.body)
        response.source = .cache(freshness)
        // Fresh (so no `no-cache`, which needs validation first): how long it stays so.
        if freshness == .fresh { response.freshFor = max(0, current.lifetime - current.age) }
        return response
    }

    /// The `304` without a body that answers the app's own conditional request for `url` when
    /// `stored` is not modified by its conditions.
    private func response(notModified stored: StoredResponse, _ freshness: CacheFreshness, url: URL) -> TransportResponse {
        var fields = ConditionalRequest.notModifiedHeaders(of: stored)
        fields["Age"] = String(Self.ageField(currentFreshness(of: stored).age))
        var response = TransportResponse(head: ResponseHead(status: 304, headerFields: fields, url: url), body: Data())
        response.source = .cache(freshness)
        return response
    }

    /// A stored response's freshness now, by the cache's clock and heuristic limit.
    private func currentFreshness(of stored: StoredResponse) -> Freshness {
        Freshness(of: stored, now: cache.clock(), heuristicLimit: cache.heuristicFreshnessLimit)
    }

    /// An age in whole seconds, rounded down, as an `Age` field writes it (RFC 9111 §5.1); at most 2^31.
    private static func ageField(_ age: Double) -> Int {
        Int(min(max(0, age), 2_147_483_648).rounded(.down))
    }

    // MARK: - Stale-while-revalidate

    /// Revalidates a stored response that was just served stale, unless its key is being
    /// revalidated already; the answer only updates the store.
    func revalidateInBackground(_ request: TransportRequest, lookup: CacheRequest, stored: StoredResponse,
                                            conditionalHeaders: [String: String]) {
        let key = lookup.url
        var outgoing = request
        outgoing.context.cachedFirst = nil
        for (name, value) in conditionalHeaders { outgoing.urlRequest.setValue(value, forHTTPHeaderField: name) }
        let requestTime = cache.clock()
        let task = inner.makeTask(for: outgoing) { [weak self] result in
            guard let self else { return }
            revalidations.withLock { $0[key] = nil }
            guard case .success(let response) = result else { return }
            let responseTime = cache.clock()
            if response.head.status == 304 {
                if let freshened = Revalidation.freshened(stored, with: response.head.headerFields,
                                                          requestTime: requestTime, responseTime: responseTime) {
                    cache.store(freshened)
                }
            } else {
                store(response, for: lookup, requestTime: requestTime, responseTime: responseTime)
            }
        }
        let isFirst = revalidations.withLock { tasks in
            guard tasks[key] == nil else { return false }
            tasks[key] = task
            return true
        }
        if isFirst { task.resume() } else { task.cancel() }
    }

    /// The head of a stored response answering a request for `url` when it is `age` seconds old:
    /// its stored fields with an `Age` field of that age in place of the origin's (RFC 9111 §5.1:
    /// a cache sends the age of what it answers with).
    private func head(of stored: StoredResponse, for url: URL, age: Int) -> ResponseHead {
        let key = HeadKey(url: url.absoluteString, statusCode: stored.statusCode, requestTime: stored.requestTime,
                          responseTime: stored.responseTime, secondaryKey: stored.secondaryKey, age: age)
        if let head = heads.withLock({ $0[key] }) { return head }
        var fields = stored.headers
        fields["Age"] = String(age)
        let head = ResponseHead(status: stored.statusCode, headerFields: fields, url: url)
        heads.withLock { heads in
            if heads.count >= 256 { heads.removeAll(keepingCapacity: true) }
            heads[key] = head
        }
        return head
    }

    // MARK: - Storing

    /// Stores a response to a request if the rules allow it; forgets the stored one a
    /// `no-store` answer replaces.
    private func store(_ response: borrowing TransportResponse, for request: CacheRequest, requestTime: Double,
                       responseTime: Double) {
        let headers = response.head.headerFields
        let received = Storability.ResponseFields(headers)
        switch Storability.decide(request: request, statusCode: response.head.status, received: received) {
        case .store(let bindsCredentials):
            guard let secondaryKey = received.vary.secondaryKey(for: request.headers) else { return }
            cache.store(response, headers: headers, for: request, requestTime: requestTime, responseTime: responseTime,
                        secondaryKey: secondaryKey,
                        credentialKey: bindsCredentials ? Storability.credentialKey(requestHeaders: request.headers) : nil)
        case .doNotStore(.noStore) where CacheHeaders.cacheControl(in: headers).noStore:
            // The origin now forbids keeping what was stored.
            cache.remove(request.url)
        case .doNotStore:
            break
        }
    }

    /// Forgets what a request with an unsafe method changed (RFC 9111 §4.4).
    private func invalidate(after response: borrowing TransportResponse, method: String, url: URL?) {
        guard !Invalidation.isSafe(method), let url else { return }
        for key in Invalidation.invalidatedKeys(method: method, requestURL: url,
                                                statusCode: response.head.status, responseHeaders: response.head.headerFields) {
            cache.remove(key)
        }
    }
}
