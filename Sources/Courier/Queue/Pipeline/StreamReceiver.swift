import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receives one streamed attempt from the transport (see ``TransportStreamReceiver``) and passes
/// it through its ``StreamGate``: heads go to the queue for a decision (on its work queue, or at
/// once when no user code takes part); the body goes to the request's sink, or is buffered for
/// the queue; the end goes to the queue's work queue, once.
///
/// Sink writes happen under the receiver's lock, so that chunks held during a decision reach the
/// sink before any that arrive after it, on transports that keep delivering meanwhile.
final class StreamReceiver: TransportStreamReceiver {
    /// How much of a body the queue handles whole (a redirect's, an error's) is kept.
    static let bufferedBodyLimit = 1 << 20

    private struct State {
        var gate = StreamGate(bufferedBodyLimit: StreamReceiver.bufferedBodyLimit)
        var task: (any TransportTask)?
        var bytesReceived: Int64 = 0
    }

    private let state = Locked(State())
    private let sink: any ResponseSink
    private let queue: WeakRequestQueue
    private let attempt: Attempt
    private let slot: Once
    private let workQueue: DispatchQueue
    private let workQueueKey: DispatchSpecificKey<Bool>

    init(sink: any ResponseSink, queue: RequestQueue, attempt: Attempt, slot: Once) {
        self.sink = sink
        self.queue = WeakRequestQueue(queue)
        self.attempt = attempt
        self.slot = slot
        workQueue = queue.workQueue
        workQueueKey = queue.workQueueKey
    }

    /// The task delivering to this receiver; set before it is resumed.
    func attach(_ task: any TransportTask) {
        state.withLock { $0.task = task }
    }

    func transportDidReceive(_ response: HTTPURLResponse) {
        transportDidReceive(ResponseHead(response))
    }

    func transportDidReceive(_ response: ResponseHead) {
        guard state.withLock({ $0.gate.receiveHead(response) }) else { return }
        // Decided here, on the transport's thread, when no user code takes part in the decision:
        // the first chunk then goes straight to the sink, without a hop, a hold and a pause.
        if let queue = queue.queue, queue.decidesHeadsWhereTheyArrive {
            return queue.streamHeadArrived(attempt, slot: slot, receiver: self, head: response)
        }
        onWorkQueue { queue in queue.streamHeadArrived(self.attempt, slot: self.slot, receiver: self, head: response) }
    }

    func transportDidReceive(_ chunk: Data) -> TransportDemand {
        let (demand, stop) = state.withLock { state -> (TransportDemand, (any TransportTask)?) in
            switch state.gate.receiveChunk(chunk) {
            case .hold: return (.pause, nil)
            case .buffered, .drop: return (.more, nil)
            case .forward:
                state.bytesReceived += Int64(chunk.count)
                switch sink.write(chunk) {
                case .more: return (.more, nil)
                case .pause: return (.pause, nil)
                // The sink keeps its failure as the body's end; stopping the transfer brings that end.
                case .fail: return (.pause, state.task)
                }
            }
        }
        stop?.cancel()
        return demand
    }

    func transportDidComplete(_ error: RequestError?) {
        let end = state.withLock { state in
            // The task may hold this receiver (the curl transport's does): letting go of it at the
            // end breaks that cycle. A decision still to come needs it no more.
            state.task = nil
            return state.gate.receiveEnd(error)
        }
        act(on: end)
    }

    /// The queue's decision on the head. On commit the sink opens first: a sink that cannot
    /// (a file that cannot be created) ends the request with its error instead.
    func decide(_ decision: StreamGate.Decision, head: ResponseHead) {
        var decision = decision
        var openError: RequestError?
        var sinkFull = false
        var sinkFailed = false
        var paused = false
        let (end, task) = state.withLock { state -> (StreamGate.EndStep?, (any TransportTask)?) in
            let task = state.task
            if decision == .commit {
                openError = sink.open(head, resumeTransfer: { task?.resumeDelivery() })
                if openError != nil { decision = .abandon }
            }
            let (held, end) = state.gate.decide(decision)
            // Held chunks asked the transport to pause (the gate holds only while deciding).
            paused = state.gate.heldAny
            for chunk in held where !sinkFailed {
                state.bytesReceived += Int64(chunk.count)
                switch sink.write(chunk) {
                case .more: sinkFull = false
                case .pause: sinkFull = true
                case .fail: sinkFailed = true
                }
            }
            return (end, task)
        }
        if let openError {
            task?.cancel()
            // Failing runs the request's delegate hooks: never on the transport's thread.
            let attempt = self.attempt
            onWorkQueue { queue in queue.fail(attempt.id, urlRequest: attempt.current.urlRequest, error: openError) }
        }
        if sinkFailed { task?.cancel() }
        if let end {
            act(on: end)
        } else if paused, decision == .buffer || (decision == .commit && !sinkFull && !sinkFailed) {
            // Held chunks paused the transfer; a full sink asks for more itself once it is read.
            task?.resumeDelivery()
        }
    }

    /// Bytes handed to the sink.
    var bytesReceived: Int64 {
        state.withLock { $0.bytesReceived }
    }

    /// The status of the response head, once one arrived.
    var statusCode: Int? {
        state.withLock { $0.gate.head?.status }
    }

    private func act(on end: StreamGate.EndStep) {
        switch end {
        case .waitForDecision:
            return
        case .failed(let error):
            onWorkQueue { queue in queue.transportDidFinish(self.attempt, slot: self.slot, result: .failure(error)) }
        case .response(let head, let body):
            onWorkQueue { queue in
                queue.transportDidFinish(self.attempt, slot: self.slot, result: .success(TransportResponse(head: head, body: body)))
            }
        case .streamEnded(let error):
            onWorkQueue { queue in queue.streamDidEnd(self.attempt, slot: self.slot, sink: self.sink, receiver: self, error: error) }
        case .released:
            onWorkQueue { queue in queue.releaseAndStartNext(self.slot) }
        }
    }

    /// Runs `work` on the queue's work queue: at once when already there (URLSession calls back
    /// there), else asynchronously.
    private func onWorkQueue(_ work: @escaping @Sendable (RequestQueue) -> Void) {
        let queue = self.queue
        if DispatchQueue.getSpecific(key: workQueueKey) != nil {
            if let queue = queue.queue { work(queue) }
        } else {
            workQueue.async { if let queue = queue.queue { work(queue) } }
        }
    }
}
