import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request through the cache layer that goes to the origin with a stored response at hand:
/// to validate it, to revalidate it in the background after answering with it, or to fall back
/// on (or show first); or that fails because the store has nothing and the request may not go.
/// Its answer is stored when the rules allow.
final class CacheTask: TransportTask {
    /// What the task does, from what the lookup decided.
    enum Work {
        /// Answer with the stale response now and revalidate it in the background (RFC 5861 §3),
        /// or, for a caller shown it first, answer with the revalidated one.
        case staleWhileRevalidate(StoredResponse, conditionalHeaders: [String: String])
        /// Send the request with these validators for the stored response.
        case validate(StoredResponse, conditionalHeaders: [String: String])
        /// Send the request as it is, with the stored response that may stand in if the origin
        /// fails (and be shown first), if any.
        case load(fallback: StoredResponse?)
        /// Fail with ``RequestError/notCached(_:)``.
        case unavailable
    }

    private struct State {
        var inner: (any TransportTask)?
        var cancelled = false
        var answeredBytes: Int64?
    }

    private let layer: CacheLayer
    private let request: TransportRequest
    /// The request as the cache's rules see it.
    private let lookup: CacheRequest
    /// Its URL.
    private let url: URL
    private let work: Work
    private let completion: @Sendable (Result<TransportResponse, RequestError>) -> Void
    /// Whether the task has answered: held here, not in a ``Once`` (an allocation more per request).
    private let completed = Atomic<Bool>(false)
    /// Its bodies take no other lock, so the lock can be one of the shared stripes.
    private let state = Locked(State(), sharing: LockStripes.next())

    init(layer: CacheLayer, request: TransportRequest, lookup: CacheRequest, url: URL, work: Work,
         completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) {
        self.layer = layer
        self.request = request
        self.lookup = lookup
        self.url = url
        self.work = work
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
        switch work {
        case .staleWhileRevalidate(let response, let conditionalHeaders):
            // A caller shown the stored response first wants the fresh one as its answer.
            if request.context.cachedFirst != nil {
                showFirst(response)
                return send(validating: response, conditionalHeaders: conditionalHeaders, fallback: response)
            }
            answer(with: response, .stale)
            layer.revalidateInBackground(request, lookup: lookup, stored: response, conditionalHeaders: conditionalHeaders)
        case .validate(let response, let conditionalHeaders):
            showFirst(response)
            send(validating: response, conditionalHeaders: conditionalHeaders, fallback: response)
        case .load(let fallback):
            if let fallback { showFirst(fallback) }
            send(fallback: fallback)
        case .unavailable:
            finish(.failure(.notCached(url)))
        }
    }

    /// Hands a stored response to a caller that asked to see it before the network answers.
    private func showFirst(_ stored: StoredResponse) {
        guard let cachedFirst = request.context.cachedFirst else { return }
        cachedFirst(layer.response(answeringWith: stored, .stale, url: url))
    }

    /// Answers with a stored response; `failure` is the transport's, when the stored response
    /// stands in for a request that could not reach the origin.
    private func answer(with stored: StoredResponse, _ freshness: CacheFreshness, inPlaceOf failure: URLError? = nil) {
        state.withLock { $0.answeredBytes = Int64(stored.body.count) }
        var response = layer.response(answeringWith: stored, freshness, url: url)
        response.networkFailure = failure
        finish(.success(response))
    }

    /// Sends the request on: as it is, or with validators for `validating`. `fallback` answers
    /// if the origin fails and the rules allow a stale response; the answer is stored if the
    /// rules allow.
    private func send(validating: StoredResponse? = nil, conditionalHeaders: [String: String] = [:],
                      fallback: StoredResponse? = nil) {
        var outgoing = request
        outgoing.context.cachedFirst = nil
        for (name, value) in conditionalHeaders { outgoing.urlRequest.setValue(value, forHTTPHeaderField: name) }
        let clock = layer.cache.clock
        let requestTime = clock()
        let task = layer.inner.makeTask(for: outgoing) { [self] result in
            received(result, validating: validating, fallback: fallback,
                     requestTime: requestTime, responseTime: clock())
        }
        let cancelled = state.withLock { state in
            state.inner = task
            return state.cancelled
        }
        if cancelled { return finish(.failure(.cancelled)) }
        task.resume()
    }

    private func received(_ result: Result<TransportResponse, RequestError>, validating: StoredResponse?,
                          fallback: StoredResponse?, requestTime: Double, responseTime: Double) {
        state.withLock { $0.inner = nil }  // it held this task's completion, and this task held it
        let cache = layer.cache
        let response: TransportResponse
        switch result {
        case .failure(let error):
            if case .transportFailed(let failure) = error, let fallback,
               Revalidation.servesStale(fallback, after: .network, requestHeaders: lookup.headers,
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
                return send(fallback: fallback)
            }
            cache.store(freshened)
            return answer(with: freshened, .revalidated)
        }
        if let fallback, Revalidation.servesStale(fallback, after: .status(status), requestHeaders: lookup.headers,
                                                  policy: request.context.cachePolicy, now: responseTime,
                                                  heuristicLimit: cache.heuristicFreshnessLimit) {
            return answer(with: fallback, .stale)
        }
        layer.loaded(response, for: lookup, method: lookup.method, url: url, requestTime: requestTime,
                     responseTime: responseTime)
        finish(.success(response))
    }

    private func finish(_ result: Result<TransportResponse, RequestError>) {
        if !completed.exchange(true, ordering: .acquiringAndReleasing) { completion(result) }
    }
}
