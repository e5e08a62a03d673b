import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One streamed attempt's way from the transport to its sink: the queue decides on each response
/// head (on its work queue, or where the head arrived) whether the body goes to the sink or is
/// buffered like any response
/// (a redirect, refused credentials, a rejected status); chunks that arrive meanwhile are held.
///
/// Invariants, checked by `StreamGateTests`:
/// - every chunk is held, buffered, forwarded or dropped, in order; held chunks are forwarded
///   (commit) or buffered (buffer) before any later chunk;
/// - a held chunk asks the transport to pause, so that the wait for a decision costs one chunk
///   on a transport that can pause;
/// - a buffered body keeps at most `bufferedBodyLimit` bytes (the rest is dropped: it is only a
///   redirect's or an error's body);
/// - the transport's end produces exactly one action, at once or when the decision comes.
struct StreamGate {
    enum Phase: Equatable {
        case awaitingHead, deciding, buffering, committed, ended
    }

    enum Decision: Equatable {
        /// The body goes to the sink.
        case commit
        /// The response is buffered and handled as a whole (redirect, credentials, failure).
        case buffer
        /// The request ended meanwhile: nothing more is wanted.
        case abandon
    }

    enum ChunkStep: Equatable {
        /// Keep it for the decision; pause the transport.
        case hold
        /// Part of a buffered response.
        case buffered
        /// Hand it to the sink.
        case forward
        /// Nobody wants it.
        case drop
    }

    /// What the transport's end, or a decision that found it, means.
    enum EndStep {
        /// Nothing yet: the decision will tell.
        case waitForDecision
        /// The request failed (or ended without a head) before its body was anyone's: the queue
        /// treats it as any failed transfer (retries apply).
        case failed(RequestError)
        /// A whole response for the queue to handle (redirect, refresh, validation).
        case response(ResponseHead, Data)
        /// The sink's body ended: `nil` when complete.
        case streamEnded(RequestError?)
        /// Abandoned: only the slot is to be given back.
        case released
    }

    let bufferedBodyLimit: Int
    private(set) var phase = Phase.awaitingHead
    private(set) var head: ResponseHead?
    private var held: [Data] = []
    /// Whether a chunk was ever held: the transport was then asked to pause.
    private(set) var heldAny = false
    private var body = Data()
    /// The transport's end, when it came while a decision was pending.
    private var pendingEnd: RequestError??

    init(bufferedBodyLimit: Int) {
        self.bufferedBodyLimit = bufferedBodyLimit
    }

    /// A response head; true when the queue must decide on it.
    mutating func receiveHead(_ response: ResponseHead) -> Bool {
        guard phase == .awaitingHead else { return false }
        head = response
        phase = .deciding
        return true
    }

    mutating func receiveChunk(_ chunk: Data) -> ChunkStep {
        switch phase {
        case .deciding:
            held.append(chunk)
            heldAny = true
            return .hold
        case .buffering:
            keep(chunk)
            return .buffered
        case .committed:
            return .forward
        case .awaitingHead, .ended:
            return .drop
        }
    }

    mutating func receiveEnd(_ error: RequestError?) -> EndStep {
        switch phase {
        case .awaitingHead:
            phase = .ended
            return .failed(error ?? .transportFailed(URLError(.badServerResponse, userInfo: [
                NSLocalizedDescriptionKey: "the transport ended the transfer without a response head",
            ])))
        case .deciding:
            pendingEnd = .some(error)
            return .waitForDecision
        case .buffering:
            phase = .ended
            if let error { return .failed(error) }
            return .response(head!, body)
        case .committed:
            phase = .ended
            return .streamEnded(error)
        case .ended:
            return .released
        }
    }

    /// Applies the queue's decision. Returns the held chunks to hand to the sink now (commit
    /// only), and the end to act on if the transport ended meanwhile.
    mutating func decide(_ decision: Decision) -> (forward: [Data], end: EndStep?) {
        guard phase == .deciding else { return ([], nil) }
        let chunks = held
        held = []
        switch decision {
        case .commit:
            phase = .committed
            return (chunks, pendingEnd.map { receiveEnd($0) })
        case .buffer:
            phase = .buffering
            for chunk in chunks { keep(chunk) }
            return ([], pendingEnd.map { receiveEnd($0) })
        case .abandon:
            phase = .ended
            return ([], pendingEnd.map { _ in .released })
        }
    }

    private mutating func keep(_ chunk: Data) {
        let room = bufferedBodyLimit - body.count
        if room > 0 { body.append(chunk.prefix(room)) }
    }
}
