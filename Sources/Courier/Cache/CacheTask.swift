import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request through the cache layer that the store has something for (or whose caller wants
/// a stored response shown first): answered from the store, or sent on (perhaps conditionally)
/// and its answer stored, with a stored response to fall back on when the rules allow.
final class CacheTask: TransportTask {
    private struct State {
        var inner: (any TransportTask)?
        var cancelled = false
        var answeredBytes: Int64?
    }

    private let layer: CacheLayer
    private let request: TransportRequest
    /// What the layer found for it when it made the task.
    private let found: CacheLayer.Found
    private let completion: @Sendable (Result<TransportResponse, RequestError>) -> Void
    /// Whether the task has answered: held here, not in a ``Once`` (an allocation more per request).
    private let completed = Atomic<Bool>(false)
    /// Its bodies take no other lock, so the lock can be one of the shared stripes.
    private let state = Locked(State(), sharing: LockStripes.next())

    init(layer: CacheLayer, request: TransportRequest, found: CacheLayer.Found,
         completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) {
        self.layer = layer
        self.request = request
        self.found = found
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
        let lookup = found.request
        switch found.decision {
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
            let best = found.stored.isEmpty ? nil : CacheLookup.bestMatch(in: found.stored, for: lookup)
            if let best { showFirst(best) }
            send(lookup: lookup, fallback: best)
        case .unavailable:
            finish(.failure(.notCached(found.url)))
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
        var fields = ConditionalRequest.notModifiedHeaders(of: stored)
        fields["Age"] = String(currentAge(of: stored))
        var response = TransportResponse(head: ResponseHead(status: 304, headerFields: fields, url: found.url), body: Data())
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
        let current = Freshness(of: stored, now: layer.cache.clock(), heuristicLimit: layer.cache.heuristicFreshnessLimit)
        let head = layer.head(of: stored, for: found.url, age: Self.ageField(current.age))
        var response = TransportResponse(head: head, body: stored.body)
        response.source = .cache(freshness)
        // Fresh (so no `no-cache`, which needs validation first): how long it stays so.
        if freshness == .fresh { response.freshFor = max(0, current.lifetime - current.age) }
        return response
    }

    /// Sends the request on: as it is, or with validators for `validating`. `fallback` answers
    /// if the origin fails and the rules allow a stale response; the answer is stored under
    /// `lookup`'s key if the rules allow.
    private func send(lookup: CacheRequest, validating: StoredResponse? = nil, conditionalHeaders: [String: String] = [:],
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

    private func received(_ result: Result<TransportResponse, RequestError>, lookup: CacheRequest, validating: StoredResponse?,
                          fallback: StoredResponse?, requestTime: Double, responseTime: Double) {
        state.withLock { $0.inner = nil }  // it held this task's completion, and this task held it
        let cache = layer.cache
        let response: TransportResponse
        switch result {
        case .failure(let error):
            if case .transportFailed(let failure) = error, let fallback,
               Revalidation.servesStale(fallback, after: .network, requestHeaders: found.request.headers,
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
        if let fallback, Revalidation.servesStale(fallback, after: .status(status), requestHeaders: found.request.headers,
                                                  policy: request.context.cachePolicy, now: responseTime,
                                                  heuristicLimit: cache.heuristicFreshnessLimit) {
            return answer(with: fallback, .stale)
        }
        layer.loaded(response, for: lookup, method: lookup.method, url: found.url, requestTime: requestTime,
                     responseTime: responseTime)
        finish(.success(response))
    }

    private func finish(_ result: Result<TransportResponse, RequestError>) {
        if !completed.exchange(true, ordering: .acquiringAndReleasing) { completion(result) }
    }
}
