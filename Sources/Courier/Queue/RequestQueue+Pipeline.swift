import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The life of a request after `add`, on the queue's background queues:
/// start → prepare → willSend → send → (redirect hops) → response → retry / refresh / finish → deliver.
extension RequestQueue {
    /// Starts waiting requests soon, unless a run of the start loop is already due.
    func scheduleStarts() {
        let limit = concurrencyLimit
        if state.withLock({ $0.requestStart(limit: limit) }) { runStartLoop() }
    }

    /// Runs the start loop on the start queue; the caller has claimed the run (`requestStart`).
    func runStartLoop() {
        let weakSelf = WeakRequestQueue(self)
        startQueue.async { weakSelf.queue?.startWaitingRequests() }
    }

    /// Runs the claimed start loop on the calling thread, inside the start queue, so that the
    /// request goes out without waking another thread (see `DeliveryScope`). The claim means no
    /// other run is due, so the start queue is free and this waits for nothing.
    func runClaimedStartLoopHere() {
        startQueue.sync { startWaitingRequests(onCallingThread: true) }
    }

    /// Looks at the deferred start loop every `deferredStartPatience` while one is deferred.
    func armDeferredStartWatchdog() {
        let weakSelf = WeakRequestQueue(self)
        let patience = deferredStartPatience
        workQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(patience))) {
            guard let queue = weakSelf.queue else { return }
            switch queue.state.withLock({ $0.checkDeferredStart(now: Self.now(), patience: patience) }) {
            case .takeOver: queue.runStartLoop()
            case .lookAgain: queue.armDeferredStartWatchdog()
            case .stop: break
            }
        }
    }

    /// Starts waiting requests while slots are free, one run at a time (the caller holds the
    /// claim from `requestStart`), so requests go on the wire in the order they were added.
    /// On the start queue, or on a caller's thread inside it (`onCallingThread`).
    private func startWaitingRequests(onCallingThread: Bool = false) {
        let limit = concurrencyLimit
        while let start = state.withLock({ $0.nextToStart(limit: limit, onCallingThread: onCallingThread) }) {
            let slot = Slot()
            switch start {
            case .handOff:
                return runStartLoop()
            case .new(let id, let box):
                do {
                    send(Attempt(id: id, box: box, original: try box.prepare(with: builder)), slot: slot)
                } catch {
                    release(slot)
                    fail(id, urlRequest: nil, error: error)
                }
            case .resume(let attempt):
                send(attempt, slot: slot)
            }
        }
    }

    /// Sends an attempt from the builder's request: delegates and the authenticator run again.
    private func send(_ attempt: Attempt, slot: Slot) {
        var attempt = attempt
        attempt.current = attempt.original
        attempt.redirects = 0
        delegate?.requestQueue(self, willSend: &attempt.current.urlRequest)
        attempt.box.willSend(&attempt.current.urlRequest)
        if let authenticator = configuration.authenticator {
            attempt.credentialGeneration = state.withLock { $0.credentialGeneration }
            authenticator.authenticate(&attempt.current.urlRequest)
        }
        do throws(RequestError) {
            if let configurationHeaderError { throw configurationHeaderError }
            // Foundation's setValue drops a value with CR or LF without a word, so delegates
            // cannot inject that way; what they did set is checked for everything else. The
            // builder checked the request's own headers already.
            if delegate != nil || configuration.authenticator != nil || attempt.box.isRequestDelegate {
                for (name, value) in attempt.current.urlRequest.allHTTPHeaderFields ?? [:] {
                    try HeaderValidator.validate(name: name, value: value)
                }
            }
        } catch {
            attempt.original.removeTemporaryFiles()
            release(slot)
            return fail(attempt.id, urlRequest: attempt.current.urlRequest, error: error)
        }
        launch(attempt, slot: slot)
    }

    /// Hands an attempt (or one of its redirect hops) to the transport.
    private func launch(_ attempt: Attempt, slot: Slot) {
        let weakSelf = WeakRequestQueue(self)
        let request = attempt.current
        // URLSession calls back on the queue's own work queue (see URLSessionTransport), so the
        // result is processed there directly; the next request still starts from the start queue,
        // which reuses connections far better than starting inside a completion handler.
        let task = transport.makeTask(for: request.urlRequest, bodyFile: request.bodyFile) { result in
            weakSelf.queue?.transportDidFinish(attempt, slot: slot, result: result)
        }
        // The timeout covers the whole request: its deadline is set once, on the first send.
        let isFirstSend = attempt.number == 1 && attempt.redirects == 0 && !attempt.retriedAfterRefresh
        let timeout = request.urlRequest.timeoutInterval
        let deadline = isFirstSend && timeout > 0 && timeout < 1e9 ? Self.now() &+ UInt64(timeout * 1e9) : nil
        let attachment = state.withLock {
            $0.attach(task, urlRequest: request.urlRequest,
                      temporaryFile: request.bodyFileIsTemporary ? request.bodyFile : nil,
                      deadline: deadline, attempt: attempt.number, to: attempt.id)
        }
        switch attachment {
        case .ended:
            // Cancelled meanwhile; its result is already on its way. The unsent task is cancelled
            // so that the session lets go of it.
            task.cancel()
            if attempt.number == 1 && attempt.redirects == 0 { attempt.original.removeTemporaryFiles() }
            return release(slot)
        case .attached:
            break
        case .attachedArmingTimer(let deadline):
            setTimer(for: deadline)
        }
        if attempt.redirects == 0 {
            // didSend comes before resume so that it always precedes didReceive.
            delegate?.requestQueue(self, didSend: request.urlRequest)
            attempt.box.didSend(request.urlRequest)
        }
        task.resume()
    }

    private func transportDidFinish(_ attempt: Attempt, slot: Slot, result: Result<TransportResponse, RequestError>) {
        let response = try? result.get()
        let active = state.withLock { state in
            state.recordTransfer(attempt.id, bytesSent: attempt.current.bodySize,
                                 bytesReceived: Int64(response?.body.count ?? 0),
                                 statusCode: response?.response.statusCode, redirected: attempt.redirects > 0)
            return state.isActive(attempt.id)
        }
        guard active else { return releaseAndStartNext(slot) }
        if let response {
            switch redirect(attempt, after: response.response) {
            case .follow(let hop): return launch(hop, slot: slot)
            case .tooMany(let count):
                releaseAndStartNext(slot)
                return fail(attempt.id, urlRequest: attempt.current.urlRequest, error: .tooManyRedirects(count))
            case .none: break
            }
        }
        releaseAndStartNext(slot)
        complete(attempt, result: result)
    }

    private enum RedirectStep {
        case none
        case follow(Attempt)
        case tooMany(Int)
    }

    private func redirect(_ attempt: Attempt, after response: HTTPURLResponse) -> RedirectStep {
        guard case .follow(let maximum) = configuration.redirectPolicy,
              var next = Redirects.request(following: response, from: attempt.current.urlRequest,
                                           sensitiveHeaders: configuration.sensitiveHeaders)
        else { return .none }
        guard attempt.redirects < maximum else { return .tooMany(attempt.redirects + 1) }
        if let delegate {
            guard let allowed = delegate.requestQueue(self, shouldRedirect: attempt.current.urlRequest,
                                                      to: next, response: response) else { return .none }
            next = allowed
        }
        var hop = attempt
        hop.redirects += 1
        hop.current.urlRequest = next
        if Redirects.dropsBody(status: response.statusCode, method: attempt.current.urlRequest.httpMethod) {
            hop.current.bodyFile = nil
        }
        return .follow(hop)
    }

    private func complete(_ attempt: Attempt, result: Result<TransportResponse, RequestError>) {
        let id = attempt.id
        let request = attempt.current.urlRequest
        switch result {
        case .failure(let error):
            if case .transportFailed(let urlError) = error, retry(attempt, failure: .transport(urlError.code), error: error) {
                return
            }
            fail(id, urlRequest: request, error: error)
        case .success(let response):
            delegate?.requestQueue(self, didReceive: response.response)
            if let authenticator = configuration.authenticator, !attempt.retriedAfterRefresh,
               authenticator.isAuthenticationFailure(response.response) {
                return awaitCredentials(attempt, authenticator: authenticator)
            }
            switch attempt.box.makeResponse(from: response) {
            case .success(let value):
                finish(id, result: .success(value), urlRequest: request)
            case .failure(let error):
                if case .validationFailed = error, retry(attempt, failure: .status(response.response), error: error) {
                    return
                }
                fail(id, urlRequest: request, error: error)
            }
        }
    }

    // MARK: - Retries

    /// Schedules the next attempt if the retry policy and the deadline allow it.
    private func retry(_ attempt: Attempt, failure: RetryPolicy.RetryableFailure, error: RequestError) -> Bool {
        guard let policy = configuration.retryPolicy,
              let delay = policy.delay(after: attempt.number, method: attempt.original.urlRequest.httpMethod,
                                       failure: failure),
              state.withLock({ $0.pause(attempt) })
        else { return false }
        delegate?.requestQueue(self, willRetry: attempt.current.urlRequest, attempt: attempt.number, after: error)
        var following = attempt
        following.number += 1
        let next = following
        let weakSelf = WeakRequestQueue(self)
        workQueue.asyncAfter(deadline: .now() + delay) {
            guard let queue = weakSelf.queue, queue.state.withLock({ $0.resumeSoon(next) }) else { return }
            queue.scheduleStarts()
        }
        return true
    }

    // MARK: - Credentials refresh

    private func awaitCredentials(_ attempt: Attempt, authenticator: any Authenticator) {
        var retry = attempt
        retry.retriedAfterRefresh = true
        switch state.withLock({ $0.awaitCredentials(attempt) }) {
        case .ended, .parked:
            return
        case .retryNow:
            if state.withLock({ $0.pause(attempt) && $0.resumeSoon(retry) }) { scheduleStarts() }
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
            var resumed = false
            for attempt in waiting {
                var retry = attempt
                retry.retriedAfterRefresh = true
                resumed = state.withLock { $0.resumeSoon(retry) } || resumed
            }
            if resumed { scheduleStarts() }
        case .failure(let error):
            for attempt in waiting {
                fail(attempt.id, urlRequest: attempt.current.urlRequest, error: .authenticationFailed(underlying: error))
            }
        }
    }

    // MARK: - Timeouts

    private func setTimer(for deadline: UInt64) {
        let weakSelf = WeakRequestQueue(self)
        workQueue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline)) {
            weakSelf.queue?.expireDeadlines()
        }
    }

    /// Ends the requests whose timeout has passed.
    private func expireDeadlines() {
        let (expired, nextTimer) = state.withLock { $0.expireDeadlines(now: Self.now()) }
        for id in expired { end(id, with: .timedOut) }
        if let nextTimer { setTimer(for: nextTimer) }
    }

    // MARK: - Ending

    func fail(_ id: RequestID, urlRequest: URLRequest?, error: RequestError) {
        finish(id, result: .failure(error), urlRequest: urlRequest)
    }

    private func finish(_ id: RequestID, result: AnyResult, urlRequest: URLRequest?) {
        let claim = state.withLock { $0.claim(id, result: result, urlRequest: urlRequest, now: Self.now()) }
        if let claim { conclude(claim) }
    }

    /// Tells delegates of a failure, then hands the result to its observers.
    func conclude(_ claim: QueueState.Claim) {
        if case .failure(let error) = claim.result {
            delegate?.requestQueue(self, didFailWith: claim.urlRequest, error: error)
            claim.box.didFail(claim.urlRequest, error: error)
        }
        delegate?.requestQueue(self, didFinishWith: claim.metrics)
        Self.deliver(claim, on: configuration.callbackQueue, state: state)
    }

    /// Hands a result to its observers on the callback queue, then to those that came while it
    /// was on its way; only then is the request finished.
    static func deliver(_ claim: QueueState.Claim, on callbackQueue: DispatchQueue, state: Locked<QueueState>) {
        if let file = claim.temporaryFile {
            try? FileManager.default.removeItem(at: file)
        }
        claim.completion?(claim.result)
        for observer in claim.typeObservers where observer.isDirect { observer.deliver(claim.result) }
        let progress = TransferProgress(bytesSent: claim.metrics.bytesSent, totalBytesToSend: claim.metrics.bytesSent,
                                        bytesReceived: claim.metrics.bytesReceived,
                                        totalBytesToReceive: claim.metrics.bytesReceived)
        guard !claim.idObservers.isEmpty || claim.typeObservers.contains(where: { !$0.isDirect })
                || !claim.progressObservers.isEmpty else {
            // Nobody to tell on the callback queue, unless an observer came meanwhile.
            let late = state.withLock { $0.markDelivered(claim.id) }
            if !late.isEmpty {
                callbackQueue.async { DeliveryScope.run { for observer in late { observer(claim.result) } } }
            }
            return
        }
        callbackQueue.async {
            DeliveryScope.run {
                // The last progress report comes first, so that a progress bar is full before the result.
                for observer in claim.progressObservers { observer.report(progress, force: true) }
                for observer in claim.idObservers { observer(claim.result) }
                for observer in claim.typeObservers where !observer.isDirect { observer.deliver(claim.result) }
                for observer in state.withLock({ $0.markDelivered(claim.id) }) { observer(claim.result) }
            }
        }
    }

    private func release(_ slot: Slot) {
        if slot.take() { state.withLock { $0.releaseSlot() } }
    }

    /// Gives a finished transfer's slot back and claims the start of the next waiting request,
    /// under one lock (this runs once per request).
    private func releaseAndStartNext(_ slot: Slot) {
        guard slot.take() else { return scheduleStarts() }
        let limit = concurrencyLimit
        if state.withLock({ $0.releaseSlot(); return $0.requestStart(limit: limit) }) { runStartLoop() }
    }

    static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }
}

/// A request's claim on one of the queue's concurrency slots, given back exactly once.
final class Slot: Sendable {
    private let released = Atomic<Bool>(false)

    /// Returns true the first time only.
    func take() -> Bool {
        !released.exchange(true, ordering: .acquiringAndReleasing)
    }
}

/// A weak reference that work items and URLSession handlers carry, so that in-flight work
/// never keeps a released queue alive.
struct WeakRequestQueue: Sendable {
    weak var queue: RequestQueue?

    init(_ queue: RequestQueue) {
        self.queue = queue
    }
}
