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
    }
    init(_ inner: any Transport, cache: ResponseCache) {
        self.inner = inner
        self.cache = cache
    }

    func makeTask(for request: TransportRequest,
                  completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) -> any TransportTask {
        CacheTask(layer: self, request: request, completion: completion)
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

    // MARK: - Stale-while-revalidate

    /// Revalidates a stored response that was just served stale, unless its key is being
    /// revalidated already; the answer only updates the store.
    fileprivate func revalidateInBackground(_ request: TransportRequest, lookup: CacheRequest, stored: StoredResponse,
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
    fileprivate func head(of stored: StoredResponse, for url: URL, age: Int) -> ResponseHead {
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
    fileprivate func store(_ response: TransportResponse, for request: CacheRequest, requestTime: Double,
                           responseTime: Double) {
        let headers = response.head.headerFields
        let key = request.url
        let requestHeaders = request.headers
        switch Storability.decide(request: request, statusCode: response.head.status, responseHeaders: headers) {
        case .store(let bindsCredentials):
            guard let secondaryKey = Vary(of: headers).secondaryKey(for: requestHeaders) else { return }
            cache.store(StoredResponse(
                url: key, statusCode: response.head.status, headers: headers, body: response.body,
                requestTime: requestTime, responseTime: responseTime, secondaryKey: secondaryKey,
                credentialKey: bindsCredentials ? Storability.credentialKey(requestHeaders: requestHeaders) : nil))
        case .doNotStore(.noStore) where CacheHeaders.cacheControl(in: headers).noStore:
            // The origin now forbids keeping what was stored.
            cache.remove(key)
        case .doNotStore:
            break
        }
    }

    /// Forgets what a request with an unsafe method changed (RFC 9111 §4.4).
    fileprivate func invalidate(after response: TransportResponse, to request: TransportRequest) {
        let method = request.urlRequest.httpMethod ?? "GET"
        guard !Invalidation.isSafe(method), let url = request.urlRequest.url else { return }
        for key in Invalidation.invalidatedKeys(method: method, requestURL: url,
                                                statusCode: response.head.status, responseHeaders: response.head.headerFields) {
            cache.remove(key)
        }
    }
}

/// One request through the cache layer: answered from the store, or sent on (perhaps
/// conditionally) and its answer stored.
private final class CacheTask: TransportTask {
    private struct State {
        var inner: (any TransportTask)?
        var cancelled = false
        var answeredBytes: Int64?
    }

    private let layer: CacheLayer
    private let request: TransportRequest
    /// The request's fields, which the lookup and the storing both read (a `URLRequest` makes a
    /// new dictionary each time it is asked).
    private let requestHeaders: [String: String]
    private let completion: @Sendable (Result<TransportResponse, RequestError>) -> Void
    /// Whether the task has answered: held here, not in a ``Once`` (an allocation more per request).
    private let completed = Atomic<Bool>(false)
    /// Its bodies take no other lock, so the lock can be one of the shared stripes.
    private let state = Locked(State(), sharing: LockStripes.next())

    init(layer: CacheLayer, request: TransportRequest,
         completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) {
        self.layer = layer
        self.request = request
        requestHeaders = request.urlRequest.allHTTPHeaderFields ?? [:]
        self.completion = completion
    }

    var progress: TransferProgress {
        let (inner, answered) = state.withLock { ($0.inner, $0.answeredBytes) }
        if let answered { return TransferProgress(bytesReceived: answered, totalBytesToReceive: answered) }
        return inner?.progress ?? TransferProgress()
    }

    func cancel() {
        let inner = state.withLock { state in
            state.cancelled = true
            return state.inner
        }
        // The inner task answers with cancelled; without one, this does.
        if let inner { inner.cancel() } else { finish(.failure(.cancelled)) }
    }

    func resume() {
        let urlRequest = request.urlRequest
        let cache = layer.cache
        guard let url = urlRequest.url, let key = CacheKey.make(for: url) else { return send(lookup: nil) }
        let lookup = CacheRequest(method: urlRequest.httpMethod ?? "GET", url: key, headers: requestHeaders)
        let now = cache.clock()
        let stored = lookup.method == "GET" ? cache.responses(for: key, matching: lookup, now: now) : []
        let policy = request.context.cachePolicy
        let decision = CacheLookup.decide(stored: stored, request: lookup, policy: policy, now: now,
                                          heuristicLimit: cache.heuristicFreshnessLimit)
        switch decision {
        case .fresh(let response):
            answer(with: response, .fresh)
        case .stale(let response):
            answer(with: response, .stale)
        case .notModified(let response, let freshness):
            answer(notModified: response, freshness)
        case .staleWhileRevalidate(let response, let conditionalHeaders):
            // A caller shown the stored response first wants the fresh one as its answer.
            if request.context.cachedFirst != nil {
                showFirst(response)
                return send(lookup: lookup, validating: response, conditionalHeaders: conditionalHeaders, fallback: response)
            }
            answer(with: response, .stale)
            layer.revalidateInBackground(request, lookup: lookup, stored: response, conditionalHeaders: conditionalHeaders)
        case .validate(let response, let conditionalHeaders):
            showFirst(response)
            send(lookup: lookup, validating: response, conditionalHeaders: conditionalHeaders, fallback: response)
        case .load:
            // What the policy or stale-if-error may still fall back on, or show first.
            let best = stored.isEmpty ? nil : CacheLookup.bestMatch(in: stored, for: lookup)
            if let best { showFirst(best) }
            send(lookup: lookup, fallback: best)
        case .unavailable:
            finish(.failure(.notCached(url)))
        }
    }

    /// Hands a stored response to a caller that asked to see it before the network answers.
    private func showFirst(_ stored: StoredResponse) {
        guard let cachedFirst = request.context.cachedFirst else { return }
        cachedFirst(makeResponse(stored, .stale))
    }

    /// Answers with a stored response; `failure` is the transport's, when the stored response
    /// stands in for a request that could not reach the origin.
    private func answer(with stored: StoredResponse, _ freshness: CacheFreshness, inPlaceOf failure: URLError? = nil) {
        state.withLock { $0.answeredBytes = Int64(stored.body.count) }
        var response = makeResponse(stored, freshness)
        response.networkFailure = failure
        finish(.success(response))
    }

    /// Answers the app's own conditional request with a `304` made from `stored`, without a body.
    private func answer(notModified stored: StoredResponse, _ freshness: CacheFreshness) {
        let url = request.urlRequest.url ?? URL(string: stored.url)!
        var fields = ConditionalRequest.notModifiedHeaders(of: stored)
        fields["Age"] = String(currentAge(of: stored))
        var response = TransportResponse(head: ResponseHead(status: 304, headerFields: fields, url: url), body: Data())
        response.source = .cache(freshness)
        finish(.success(response))
    }

    /// The current age of `stored` in whole seconds, rounded down, as an `Age` field writes it
    /// (RFC 9111 §5.1); at most 2^31.
    private func currentAge(of stored: StoredResponse) -> Int {
        Self.ageField(Freshness(of: stored, now: layer.cache.clock(), heuristicLimit: layer.cache.heuristicFreshnessLimit).age)
    }

    private static func ageField(_ age: Double) -> Int {
        Int(min(max(0, age), 2_147_483_648).rounded(.down))
    }

    private func makeResponse(_ stored: StoredResponse, _ freshness: CacheFreshness) -> TransportResponse {
        let url = request.urlRequest.url ?? URL(string: stored.url)!
        let current = Freshness(of: stored, now: layer.cache.clock(), heuristicLimit: layer.cache.heuristicFreshnessLimit)
        let head = layer.head(of: stored, for: url, age: Self.ageField(current.age))
        var response = TransportResponse(head: head, body: stored.body)
        response.source = .cache(freshness)
        // Fresh (so no `no-cache`, which needs validation first): how long it stays so.
        if freshness == .fresh { response.freshFor = max(0, current.lifetime - current.age) }
        return response
    }

    /// Sends the request on: as it is, or with validators for `validating`. `fallback` answers
    /// if the origin fails and the rules allow a stale response; the answer is stored under
    /// `lookup`'s key, when there is one, if the rules allow.
    private func send(lookup: CacheRequest?, validating: StoredResponse? = nil, conditionalHeaders: [String: String] = [:],
                      fallback: StoredResponse? = nil) {
        var outgoing = request
        outgoing.context.cachedFirst = nil
        for (name, value) in conditionalHeaders { outgoing.urlRequest.setValue(value, forHTTPHeaderField: name) }
        let clock = layer.cache.clock
        let requestTime = clock()
        let task = layer.inner.makeTask(for: outgoing) { [self] result in
            received(result, lookup: lookup, validating: validating, fallback: fallback,
                     requestTime: requestTime, responseTime: clock())
        }
        let cancelled = state.withLock { state in
            state.inner = task
            return state.cancelled
        }
        if cancelled { return finish(.failure(.cancelled)) }
        task.resume()
    }

    private func received(_ result: Result<TransportResponse, RequestError>, lookup: CacheRequest?, validating: StoredResponse?,
                          fallback: StoredResponse?, requestTime: Double, responseTime: Double) {
        state.withLock { $0.inner = nil }  // it held this task's completion, and this task held it
        let cache = layer.cache
        let response: TransportResponse
        switch result {
        case .failure(let error):
            if case .transportFailed(let failure) = error, let fallback,
               Revalidation.servesStale(fallback, after: .network, requestHeaders: requestHeaders,
                                        policy: request.context.cachePolicy, now: responseTime,
                                        heuristicLimit: cache.heuristicFreshnessLimit) {
                return answer(with: fallback, .stale, inPlaceOf: failure)
            }
            return finish(.failure(error))
        case .success(let received):
            response = received
        }
        let status = response.head.status
        if let validating, status == 304 {
            guard let freshened = Revalidation.freshened(validating, with: response.head.headerFields,
                                                         requestTime: requestTime, responseTime: responseTime) else {
                // The 304 speaks of another response than the one stored: ask again, without validators.
                return send(lookup: lookup, fallback: fallback)
            }
            cache.store(freshened)
            return answer(with: freshened, .revalidated)
        }
        if let fallback, Revalidation.servesStale(fallback, after: .status(status), requestHeaders: requestHeaders,
                                                  policy: request.context.cachePolicy, now: responseTime,
                                                  heuristicLimit: cache.heuristicFreshnessLimit) {
            return answer(with: fallback, .stale)
        }
        if let lookup {
            layer.store(response, for: lookup, requestTime: requestTime, responseTime: responseTime)
        }
        layer.invalidate(after: response, to: request)
        finish(.success(response))
    }

    private func finish(_ result: Result<TransportResponse, RequestError>) {
        if !completed.exchange(true, ordering: .acquiringAndReleasing) { completion(result) }
    }
}
