import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The stages of a request's life after `add`, one file each, in order:
// 1. PrepareStage: start when a slot is free; make the URL request; the delegates' `willSend`,
//    the authenticator and header checks;
// 2. AttemptStage: hand it to the transport, follow redirects;
// 3. OutcomeStage: validate and decode the response; retry, or refresh credentials;
// 4. DeliveryStage: end the request exactly once, tell delegates, hand the result to observers.
// TimedWork runs what the queue's one timer says is due (timeouts, backoffs, polls, sweeps).

extension RequestQueue {
    /// Starts waiting requests soon, unless a run of the start loop is already due.
    func scheduleStarts() {
        if state.withLock({ $0.claimStartRun() }) { runStartLoop() }
    }

    /// Runs the start loop on the start queue; the caller has claimed the run.
    func runStartLoop() {
        let weakSelf = WeakRequestQueue(self)
        startQueue.async { weakSelf.queue?.startWaitingRequests() }
    }

    /// Runs the claimed start loop on the calling thread, inside the start queue, so that the
    /// request goes out without waking another thread (see `DeliveryScope`). The claim means no
    /// other run is due, so the start queue is free, or about to be.
    func runClaimedStartLoopHere() {
        startQueue.sync { startWaitingRequests(onCallingThread: true) }
    }

    /// Puts the requests a delivery block held into the waiting lists when the block ends, and
    /// runs the start loop here if that claimed it.
    func releaseHeldRequests(of scope: DeliveryScope) {
        if state.withLock({ $0.releaseHeld(scope: ObjectIdentifier(scope)) }) { runClaimedStartLoopHere() }
    }

    /// Starts waiting requests while slots are free, one run at a time (the caller holds the
    /// claim), so requests go on the wire in the order they were added. On the start queue, or
    /// on a caller's thread inside it (`onCallingThread`).
    private func startWaitingRequests(onCallingThread: Bool = false) {
        while let start = state.withLock({ $0.nextToStart(onCallingThread: onCallingThread) }) {
            let slot = Once()
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

    /// Sends an attempt from the builder's request: delegates and the authenticator run again
    /// for every attempt, so a retry carries fresh credentials.
    func send(_ attempt: Attempt, slot: Once) {
        // Held while the app has paused the queue, or while its origin is gone and it waits for it.
        if !networkQuiet.isQuiet, !state.withLock({ $0.admitToNetwork(attempt, waits: waitsForNetwork(attempt),
                                                                      deadline: attempt.box.durable == nil ? deadline(of: attempt) : nil) }) {
            return releaseAndStartNext(slot)
        }
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
}
