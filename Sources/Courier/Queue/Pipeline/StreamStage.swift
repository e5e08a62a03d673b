import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Stage 2, streamed: an attempt whose body goes to a sink (a ``ResponseStream``, a download).
///
/// Until a response head is accepted the attempt is like any other: a redirect to follow,
/// refused credentials and a status the sink rejects are buffered whole and go through stage 2
/// and 3 as usual (redirects, refresh, validation, retries). An accepted head commits the body
/// to the sink: from then on the request has no timeout and no retry, and its end is the sink's.
extension RequestQueue {
    /// Whether a streamed head may be decided on the transport's thread: without a queue delegate
    /// (told of the head) or an authenticator (asked whether it refuses credentials), the decision
    /// runs no user code, which the transport's thread must never wait for.
    var decidesHeadsWhereTheyArrive: Bool {
        delegate == nil && configuration.authenticator == nil
    }

    /// Decides on a streamed attempt's response head: on the work queue, or where it arrived when
    /// ``decidesHeadsWhereTheyArrive``.
    func streamHeadArrived(_ attempt: Attempt, slot: Once, receiver: StreamReceiver, head: ResponseHead) {
        guard let sink = attempt.box.sink, state.withLock({ $0.isActive(attempt.id) }) else {
            // Ended meanwhile (cancelled, timed out): its task was cancelled with it.
            return receiver.decide(.abandon, head: head)
        }
        if followsRedirect(attempt, after: head) || refusesCredentials(attempt, head: head) || !sink.accepts(head) {
            return receiver.decide(.buffer, head: head)
        }
        guard state.withLock({ $0.commitStream(attempt.id) }) else { return receiver.decide(.abandon, head: head) }
        delegate?.requestQueue(self, didReceive: head)
        receiver.decide(.commit, head: head)
    }

    /// A committed body ended: the sink says what the request's result is.
    func streamDidEnd(_ attempt: Attempt, slot: Once, sink: any ResponseSink, receiver: StreamReceiver, error: RequestError?) {
        state.withLock { state in
            state.recordTransfer(attempt.id, bytesSent: attempt.current.bodySize, bytesReceived: receiver.bytesReceived,
                                 statusCode: receiver.statusCode, source: .network, redirected: attempt.redirects > 0)
        }
        releaseAndStartNext(slot)
        finish(attempt.id, result: sink.close(error), urlRequest: attempt.current.urlRequest)
    }

    /// Whether the queue would follow this response as a redirect (its delegate asked later).
    private func followsRedirect(_ attempt: Attempt, after head: ResponseHead) -> Bool {
        guard case .follow = attempt.box.redirectPolicy ?? configuration.redirectPolicy else { return false }
        return Redirects.request(following: head, from: attempt.current.urlRequest,
                                 sensitiveHeaders: configuration.sensitiveHeaders) != nil
    }

    private func refusesCredentials(_ attempt: Attempt, head: ResponseHead) -> Bool {
        guard let authenticator = configuration.authenticator, !attempt.retriedAfterRefresh else { return false }
        return authenticator.isAuthenticationFailure(head)
    }
}
