import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Stage 3: what a transfer's outcome means. A response is validated and made into the response
/// type; a failure or a refused response may be retried after a backoff, and refused credentials
/// are refreshed once for every request refused meanwhile.
extension RequestQueue {
    func complete(_ attempt: Attempt, result: Result<TransportResponse, RequestError>) {
        let id = attempt.id
        let request = attempt.current.urlRequest
        switch result {
        case .failure(let error):
            if case .cancelled = error, attempt.box.durable != nil, durable?.takeTimedOut(id) == true {
                // A durable attempt stopped at its deadline (TimedWork): tried again while the limits allow.
                if retry(attempt, failure: .attemptTimedOut, error: .timedOut) { return }
                return fail(id, urlRequest: request, error: .timedOut)
            }
            if case .transportFailed(let urlError) = error {
                if holdsForNetwork(attempt, after: urlError.code) { return }
                if retry(attempt, failure: .transport(urlError.code), error: error) { return }
            }
            fail(id, urlRequest: request, error: error)
        case .success(let response):
            delegate?.requestQueue(self, didReceive: response.head)
            if let authenticator = configuration.authenticator, !attempt.retriedAfterRefresh,
               authenticator.isAuthenticationFailure(response.head) {
                return refreshCredentials(for: attempt, authenticator: authenticator)
            }
            switch attempt.box.makeResponse(from: response, decoding: configuration.decoding) {
            case .success(let value):
                finish(id, result: .success(value), urlRequest: request)
            case .failure(let error):
                if case .validationFailed = error, retry(attempt, failure: .status(response.head), error: error) {
                    return
                }
                fail(id, urlRequest: request, error: error)
            }
        }
    }

    // MARK: - Connectivity

    /// Whether the attempt waits for the network and its origin (``OfflinePolicy/wait``, or a
    /// durable request within its age limit).
    func waitsForNetwork(_ attempt: Attempt) -> Bool {
        if let durable, let record = attempt.box.durable {
            return Date() < record.addedAt.addingTimeInterval(durable.durability.limits.age)
        }
        return (attempt.box.whileOffline ?? configuration.whileOffline) == .wait
    }

    /// Holds a request that waits for the network when its attempt found the network or its
    /// origin gone: it goes again when they are back, and the attempt does not count.
    private func holdsForNetwork(_ attempt: Attempt, after code: URLError.Code) -> Bool {
        guard Connectivity.meansNoNetwork(code) || Connectivity.meansUnreachable(code), waitsForNetwork(attempt) else {
            return false
        }
        switch state.withLock({ $0.holdForNetwork(attempt) }) {
        case .held, .ended, .again(startRun: false): return true
        case .again(startRun: true):
            runStartLoop()
            return true
        }
    }

    // MARK: - Retries

    /// Schedules the next attempt if the retry policy allows it (the deadline still ends the
    /// request during the backoff).
    private func retry(_ attempt: Attempt, failure: RetryPolicy.RetryableFailure, error: RequestError) -> Bool {
        let delay: TimeInterval
        if durable != nil, let record = attempt.box.durable {
            guard let durableDelay = retryDurably(attempt, record, failure: failure) else { return false }
            delay = durableDelay
        } else {
            guard let policy = configuration.retryPolicy,
                  let policyDelay = policy.delay(after: attempt.number, method: attempt.original.urlRequest.httpMethod,
                                                 failure: failure)
            else { return false }
            delay = policyDelay
        }
        guard state.withLock({ $0.pause(attempt) }) else { return false }
        // Told before the backoff starts, so that it always precedes the next attempt's willSend.
        delegate?.requestQueue(self, willRetry: attempt.current.urlRequest, attempt: attempt.number, after: error)
        var next = attempt
        next.number += 1
        let due = Self.now() &+ UInt64(max(0, delay) * 1e9)
        state.withLock { $0.scheduleResume(next, at: due) }
        return true
    }

    /// Sends an attempt again once its backoff has passed (the timer's `.resume` job).
    func resumeAfterBackoff(_ attempt: Attempt) {
        if state.withLock({ $0.resume(attempt) }) { runStartLoop() }
    }

    // MARK: - Credentials refresh

    private func refreshCredentials(for attempt: Attempt, authenticator: any Authenticator) {
        var retry = attempt
        retry.retriedAfterRefresh = true
        switch state.withLock({ $0.credentialsRefused(attempt, retry: retry) }) {
        case .ended, .waiting:
            return
        case .retried(let startRun):
            if startRun { runStartLoop() }
        case .startRefresh:
            let weakSelf = WeakRequestQueue(self)
            Task {
                let outcome: Result<Void, any Error>
                do {
                    try await authenticator.refresh()
                    outcome = .success(())
                } catch {
                    outcome = .failure(error)
                }
                weakSelf.queue?.finishRefresh(outcome)
            }
        }
    }

    private func finishRefresh(_ outcome: Result<Void, any Error>) {
        let succeeded = if case .success = outcome { true } else { false }
        let waiting = state.withLock { $0.finishRefresh(succeeded: succeeded) }
        switch outcome {
        case .success:
            var startRun = false
            for attempt in waiting {
                var retry = attempt
                retry.retriedAfterRefresh = true
                startRun = state.withLock { $0.resume(retry) } || startRun
            }
            if startRun { runStartLoop() }
        case .failure(let error):
            for attempt in waiting {
                fail(attempt.id, urlRequest: attempt.current.urlRequest, error: .authenticationFailed(underlying: error))
            }
        }
    }
}
