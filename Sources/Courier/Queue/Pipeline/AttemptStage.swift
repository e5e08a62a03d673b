import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Stage 2: an attempt on the wire. The transport sends it; the queue follows redirects itself.
extension RequestQueue {
    /// Hands an attempt (or one of its redirect hops) to the transport.
    func launch(_ attempt: Attempt, slot: Once) {
        let request = attempt.current
        let task = makeTask(for: attempt, slot: slot)
        let deadline = deadline(of: attempt)
        let attached = state.withLock {
            $0.attach(task, urlRequest: request.urlRequest,
                      temporaryFile: request.bodyFileIsTemporary ? request.bodyFile : nil,
                      deadline: deadline, attempt: attempt.number, to: attempt.id)
        }
        guard attached else {
            // Cancelled meanwhile; its result is already on its way. The unsent task is cancelled
            // so that the transport lets go of it.
            task.cancel()
            if attempt.number == 1 && attempt.redirects == 0 { attempt.original.removeTemporaryFiles() }
            return release(slot)
        }
        // The type is compared first: a failed `as?` of a class costs about 1,000 instructions
        // (the runtime looks for a boxed value), and most tasks are not a participant's.
        if type(of: task) == SharingTransport.Participant.self, let shared = task as? SharingTransport.Participant,
           !shared.isFirst {
            // It holds no connection: its slot goes to the next waiting request, so that any
            // number of identical requests can wait for the one transfer.
            releaseAndStartNext(slot)
        }
        if attempt.redirects == 0 {
            // didSend comes before resume so that it always precedes didReceive.
            delegate?.requestQueue(self, didSend: request.urlRequest)
            attempt.box.didSend(request.urlRequest)
        }
        task.resume()
    }

    /// When the attempt's request times out (uptime, nanoseconds), if this attempt sets it. The
    /// timeout covers the whole request: its deadline is set once, on the first send (or when it
    /// first waits for the network); a durable request's covers each attempt (it may be tried for days).
    func deadline(of attempt: Attempt) -> UInt64? {
        let isFirstSend = attempt.number == 1 && attempt.redirects == 0 && !attempt.retriedAfterRefresh
            || durable != nil && attempt.redirects == 0 && attempt.box.durable != nil
        let timeout = attempt.current.urlRequest.timeoutInterval
        return isFirstSend && timeout > 0 && timeout < 1e9 ? Self.now() &+ UInt64(timeout * 1e9) : nil
    }

    /// The transport's task for an attempt: buffered, or streamed into the request's sink.
    private func makeTask(for attempt: Attempt, slot: Once) -> any TransportTask {
        var request = TransportRequest(urlRequest: attempt.current.urlRequest, bodyFile: attempt.current.bodyFile,
                                       headerFields: attempt.current.headerFields)
        request.context.cachePolicy = attempt.box.cachePolicy
        request.context.sharesTransfer = configuration.sharesIdenticalRequests && attempt.box.sharesIdenticalRequests
        if attempt.box.showsCachedFirst && attempt.number == 1 && attempt.redirects == 0 {
            let weakSelf = WeakRequestQueue(self)
            request.context.cachedFirst = { weakSelf.queue?.showCachedFirst($0, of: attempt) }
        }
        if let sink = attempt.box.sink {
            let receiver = StreamReceiver(sink: sink, queue: self, attempt: attempt, slot: slot)
            let task = transport.makeStreamingTask(for: request, receiver: receiver)
            receiver.attach(task)
            return task
        }
        let weakSelf = WeakRequestQueue(self)
        let completed = Once()
        let workQueueKey = self.workQueueKey
        let workQueue = self.workQueue
        // A durable request's end writes its journal: never on the curl loop's thread.
        let runsOnlyCourierCode = delegate == nil && configuration.authenticator == nil && !attempt.box.isRequestDelegate
            && (durable == nil || attempt.box.durable == nil)
        return transport.makeTask(for: request) { result in
            // The contract says once; a transport that breaks it must not end a request twice.
            guard completed.take() else { return }
            // Finished where it is when that is the work queue (URLSession calls back there), or
            // a hand-over of Courier's curl loop with nothing but Courier's code and a small
            // body's decoding to run; otherwise on the work queue, never on a transport's thread
            // or the caller's: delegates, observers' bookkeeping and large decodes follow.
            if DispatchQueue.getSpecific(key: workQueueKey) != nil
                || (runsOnlyCourierCode && TransportHandOver.isActive && result.isQuickToFinish) {
                weakSelf.queue?.transportDidFinish(attempt, slot: slot, result: result)
            } else {
                workQueue.async { weakSelf.queue?.transportDidFinish(attempt, slot: slot, result: result) }
            }
        }
    }

    func transportDidFinish(_ attempt: Attempt, slot: Once, result: Result<TransportResponse, RequestError>) {
        let response = try? result.get()
        // Every hop of a write counts, redirects too, and whether or not the request still waits for it.
        if let response { resources.invalidate(after: response.head, to: attempt.current.urlRequest) }
        // What the network did: told only while something is gone, or when this finds it gone.
        let outcome = ConnectivityGate.Outcome(result)
        let networkOutcome = !networkQuiet.isQuiet || outcome.findsSomethingGone ? outcome : nil
        // A transfer that no redirect follows gives its slot back as it is recorded, under the
        // same lock (one take of the state lock fewer a request); a redirect keeps it for its hop.
        let mayRedirect = response.map { Redirects.isRedirect(status: $0.head.status) } ?? false
        let releasing = !mayRedirect && slot.take()
        let (active, news, startRun) = state.withLock { state in
            // A body the cache answered with was not received (a 304's was empty).
            let received = response?.source == .network ? response?.body.count ?? 0 : 0
            state.recordTransfer(attempt.id, bytesSent: attempt.current.bodySize, bytesReceived: Int64(received),
                                 statusCode: response?.head.status, source: response?.source,
                                 redirected: attempt.redirects > 0, negotiated: response?.negotiated,
                                 networkFailure: response?.networkFailure)
            let news = networkOutcome.flatMap { outcome in
                // A response the cache gave says nothing of the network; a 304 behind it does,
                // and so does the failure a stored response answered in place of.
                let fromNetwork = response.map {
                    $0.source == .network || $0.source == .cache(.revalidated) || $0.networkFailure != nil
                } ?? true
                return fromNetwork ? state.noteNetwork(outcome, of: attempt.id, to: attempt.current.urlRequest.url, now: Self.now()) : nil
            }
            let startRun = releasing && state.releaseSlotAndClaimStartRun()
            return (state.isActive(attempt.id), news, startRun)
        }
        if let news { follow(news) }
        if !mayRedirect {
            startAfterRelease(released: releasing, startRunClaimed: startRun)
            if active { complete(attempt, result: result) }
            return
        }
        guard active else { return releaseAndStartNext(slot) }
        if let response {
            switch redirect(attempt, after: response.head) {
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

    private func redirect(_ attempt: Attempt, after response: ResponseHead) -> RedirectStep {
        guard case .follow(let maximum) = attempt.box.redirectPolicy ?? configuration.redirectPolicy,
              var next = Redirects.request(following: response, from: attempt.current.urlRequest,
                                           sensitiveHeaders: configuration.sensitiveHeaders)
        else { return .none }
        guard attempt.redirects < maximum else { return .tooMany(attempt.redirects + 1) }
        if let delegate {
            guard let allowed = delegate.requestQueue(self, shouldRedirect: attempt.current.urlRequest,
                                                      to: next, response: response.httpURLResponse) else { return .none }
            next = allowed
        }
        var hop = attempt
        hop.redirects += 1
        hop.current.urlRequest = next
        if Redirects.dropsBody(status: response.status, method: attempt.current.urlRequest.httpMethod) {
            hop.current.bodyFile = nil
        }
        return .follow(hop)
    }

    /// Gives a slot back that the request will not use (it failed before it was sent).
    func release(_ slot: Once) {
        if slot.take() { state.withLock { $0.releaseSlot() } }
    }

    /// Gives a finished transfer's slot back and claims the start of the next waiting request,
    /// under one lock (this runs once per request).
    func releaseAndStartNext(_ slot: Once) {
        let released = slot.take()
        startAfterRelease(released: released, startRunClaimed: released && state.withLock { $0.releaseSlotAndClaimStartRun() })
    }

    /// What follows a transfer's slot given back (`released`, with the start loop's run claimed
    /// in the same step or not), or found given back already: the next waiting request starts.
    private func startAfterRelease(released: Bool, startRunClaimed: Bool) {
        if startRunClaimed { runStartLoop() } else if !released { scheduleStarts() }
    }
}

extension Result<TransportResponse, RequestError> {
    /// The largest body the queue decodes on a transport's thread (`TransportHandOver`): 64 KiB of
    /// JSON decode in well under a millisecond, which a transfer waiting on that thread can spare.
    static var quickBodyLimit: Int { 64 << 10 }

    /// A failure, or a response small enough to finish on a transport's thread.
    var isQuickToFinish: Bool {
        guard case .success(let response) = self else { return true }
        return response.body.count <= Self.quickBodyLimit
    }
}

/// Something that happens once: a request's concurrency slot given back, a transport's
/// completion taken.
final class Once: Sendable {
    private let done = Atomic<Bool>(false)

    /// Returns true the first time only.
    func take() -> Bool {
        !done.exchange(true, ordering: .acquiringAndReleasing)
    }
}
