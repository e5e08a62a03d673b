import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Stage 4: a request ends exactly once (its result claimed from the state), delegates are told,
/// and the result reaches its observers on the callback queue. A request ended from outside its
/// pipeline (cancelled, timed out) takes the same way, after its task is stopped.
extension RequestQueue {
    func fail(_ id: RequestID, urlRequest: URLRequest?, error: RequestError) {
        finish(id, result: .failure(error), urlRequest: urlRequest)
    }

    func finish(_ id: RequestID, result: AnyResult, urlRequest: URLRequest?) {
        let claim = state.withLock { $0.claim(id, result: result, urlRequest: urlRequest, now: Self.now()) }
        if let claim { conclude(claim) }
    }

    /// Ends requests claimed from outside their pipeline (cancelled, timed out): stops their
    /// tasks, then delivers from the work queue, never on the caller's thread.
    func end(_ claims: [QueueState.Claim]) {
        guard !claims.isEmpty else { return }
        for claim in claims { claim.task?.cancel() }
        let weakSelf = WeakRequestQueue(self)
        let callbackQueue = configuration.callbackQueue
        let state = self.state
        workQueue.async {
            for claim in claims {
                guard let queue = weakSelf.queue else {
                    // The queue went meanwhile: its results go without delegates, each of them; a
                    // durable one not at all (it is not journaled as ended: the next opening sends it).
                    if claim.box.durable == nil { Self.deliver(claim, on: callbackQueue, state: state) }
                    continue
                }
                queue.conclude(claim)
            }
        }
    }

    /// Tells delegates of a failure, then hands the result to its observers.
    func conclude(_ claim: QueueState.Claim) {
        if claim.startsNext { runStartLoop() }
        // A durable request's result is journaled before anyone hears of it.
        var ended: (@Sendable (_ seen: Bool) -> Void)?
        if let durable, let record = claim.box.durable {
            recordDurableResult(claim, record)
            ended = durable.beginDelivery(of: record.journalID)
        }
        // A stream that failed or was cancelled after its head ended with a `StreamedResponse`
        // saying so: a failure for the delegates all the same.
        if let error = claim.result.endingError {
            delegate?.requestQueue(self, didFailWith: claim.urlRequest, error: error)
            claim.box.didFail(claim.urlRequest, error: error)
        }
        delegate?.requestQueue(self, didFinishWith: claim.metrics)
        Self.deliver(claim, on: configuration.callbackQueue, state: state, ended: ended)
    }

    /// Hands a result to its observers on the callback queue, then to those that came while it
    /// was on its way; only then is the request finished. `ended` is called once, when the
    /// delivery is over, saying whether any observer got the result (a durable request's journal
    /// notes it).
    static func deliver(_ claim: QueueState.Claim, on callbackQueue: DispatchQueue, state: Locked<QueueState>,
                        ended: (@Sendable (_ seen: Bool) -> Void)? = nil) {
        if let file = claim.temporaryFile {
            try? FileManager.default.removeItem(at: file)
        }
        // The closures take what they use: capturing the whole claim would copy it (a reference
        // to retain and release for each of its fields).
        let result = claim.result
        if let completion = claim.completion { TransportHandOver.atEnd { completion(result) } }
        let update = claim.finalUpdate
        for observer in claim.typeObservers where observer.isDirect { observer.deliver(update) }
        for handler in claim.updateHandlers where handler.isDirect { handler.deliver(update) }
        let progress = TransferProgress(bytesSent: claim.metrics.bytesSent, totalBytesToSend: claim.metrics.bytesSent,
                                        bytesReceived: claim.metrics.bytesReceived,
                                        totalBytesToReceive: claim.metrics.bytesReceived)
        guard !claim.idObservers.isEmpty || claim.updateHandlers.contains(where: { !$0.isDirect })
                || claim.typeObservers.contains(where: { !$0.isDirect })
                || !claim.progressObservers.isEmpty else {
            // Nobody to tell on the callback queue, unless an observer came meanwhile.
            let late = state.withLock { $0.markDelivered(claim.id) }
            if !late.isEmpty {
                TransportHandOver.async(on: callbackQueue) {
                    DeliveryScope.run { for observer in late { observer(result) } }
                    ended?(true)
                }
            } else {
                ended?(claim.completion != nil || !claim.typeObservers.isEmpty || !claim.updateHandlers.isEmpty)
            }
            return
        }
        TransportHandOver.async(on: callbackQueue) {
            DeliveryScope.run {
                // The last progress report comes first, so that a progress bar is full before the result.
                for observer in claim.progressObservers { observer.report(progress, force: true) }
                for observer in claim.idObservers { observer(claim.result) }
                for handler in claim.updateHandlers where !handler.isDirect { handler.deliver(update) }
                for observer in claim.typeObservers where !observer.isDirect { observer.deliver(update) }
                for observer in state.withLock({ $0.markDelivered(claim.id) }) { observer(claim.result) }
            }
            ended?(true)
        }
    }

    static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }
}

/// A weak reference that work items and transport handlers carry, so that in-flight work
/// never keeps a released queue alive.
struct WeakRequestQueue: Sendable {
    weak var queue: RequestQueue?

    init(_ queue: RequestQueue) {
        self.queue = queue
    }
}

extension QueueState.Claim {
    /// The result as the final ``ResponseUpdate``, with where it came from.
    var finalUpdate: AnyUpdate {
        let failed = if case .failure = result { true } else { false }
        return AnyUpdate(id: id, result: result, source: failed ? nil : metrics.source, isFinal: true,
                         cachedValueStands: failed && showedCachedValue)
    }
}
