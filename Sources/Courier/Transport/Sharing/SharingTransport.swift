import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Lets identical requests in flight share one transfer: a layer of the queue's between its
/// stages and the cache (so a shared transfer is also looked up and stored once).
///
/// Identical means the same method (`GET` or `HEAD`, without a body), URL, header fields (the
/// ones the queue's delegates and authenticator set included, so different credentials never
/// share), cache policy, and way of delivery; and both requests allow sharing
/// (``TransportContext/sharesTransfer``). Streams never share. Each participant is answered
/// once with the shared result (the queue then makes each caller's own response from it);
/// a participant that is cancelled leaves, answered with ``RequestError/cancelled``, and the
/// transfer goes on for the others; when the last one leaves, the transfer is cancelled.
final class SharingTransport: Transport {
    struct Key: Hashable {
        let method: String
        let url: String
        let headers: [String: String]
        let policy: CachePolicy
        let cachedFirst: Bool
    }

    struct Waiter {
        let completion: @Sendable (Result<TransportResponse, RequestError>) -> Void
        let cachedFirst: (@Sendable (TransportResponse) -> Void)?
    }

    let inner: any Transport
    typealias Table = SharedTransferTable<Key, Waiter, any TransportTask>
    typealias Ticket = Table.Ticket

    private let table = Locked(Table())

    init(_ inner: any Transport) {
        self.inner = inner
    }

    /// Open shared transfers and their participants, for tests that must know that every
    /// identical request has joined before the server answers.
    var sharing: (transfers: Int, participants: Int) { table.withLock { ($0.count, $0.participantCount) } }

    func makeTask(for request: TransportRequest,
                  completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) -> any TransportTask {
        guard let key = Self.key(for: request) else { return inner.makeTask(for: request, completion: completion) }
        let answer = Answer(completion)
        let waiter = Waiter(completion: { answer.deliver($0) }, cachedFirst: request.context.cachedFirst)
        let (ticket, isFirst) = table.withLock { $0.join(key, waiter: waiter) }
        let participant = Participant(transport: self, ticket: ticket, isFirst: isFirst, answer: answer)
        guard isFirst else { return participant }
        var shared = request
        if shared.context.cachedFirst != nil {
            shared.context.cachedFirst = { [weak self] response in self?.deliverCachedFirst(response, transfer: ticket.transfer) }
        }
        let task = inner.makeTask(for: shared) { [weak self] result in
            self?.finish(ticket.transfer, with: result)
        }
        switch table.withLock({ $0.setTask(task, for: ticket.transfer) }) {
        case .hold: break
        case .start: task.resume()
        case .cancel: task.cancel()
        }
        return participant
    }

    func makeStreamingTask(for request: TransportRequest, receiver: any TransportStreamReceiver) -> any TransportTask {
        inner.makeStreamingTask(for: request, receiver: receiver)
    }

    func invalidate() {
        inner.invalidate()
    }

    /// The sharing key of a request, or nil when it must have a transfer of its own.
    static func key(for request: TransportRequest) -> Key? {
        guard request.context.sharesTransfer, request.bodyFile == nil else { return nil }
        let urlRequest = request.urlRequest
        let method = urlRequest.httpMethod ?? "GET"
        guard method == "GET" || method == "HEAD", urlRequest.httpBody == nil, urlRequest.httpBodyStream == nil,
              let url = urlRequest.url?.absoluteString else { return nil }
        // Names as set: requests that spell one name differently do not share, which is harmless.
        return Key(method: method, url: url, headers: urlRequest.allHTTPHeaderFields ?? [:], policy: request.context.cachePolicy,
                   cachedFirst: request.context.cachedFirst != nil)
    }

    private func finish(_ transfer: Int, with result: Result<TransportResponse, RequestError>) {
        for waiter in table.withLock({ $0.finish(transfer) }) { waiter.completion(result) }
    }

    private func deliverCachedFirst(_ response: TransportResponse, transfer: Int) {
        for waiter in table.withLock({ $0.waiters(of: transfer) }) { waiter.cachedFirst?(response) }
    }

    fileprivate func start(_ ticket: Ticket) {
        table.withLock { $0.start(ticket) }?.resume()
    }

    fileprivate func leave(_ ticket: Ticket) {
        let (waiter, task) = table.withLock { $0.leave(ticket) }
        task?.cancel()
        waiter?.completion(.failure(.cancelled))
    }

    fileprivate func task(of ticket: Ticket) -> (any TransportTask)? {
        table.withLock { $0.task(of: ticket) }
    }

    /// A participant's answer, held until the participant is resumed: a transfer that others
    /// started can end between a participant's joining and its `resume()`, and the transport
    /// contract lets nothing complete before `resume()` (the queue marks the request as running
    /// in between; an answer that came first was overwritten by that mark, and the request waited
    /// for its timeout).
    ///
    /// Invariant: the completion is called at most once, and never before `resume()`.
    fileprivate final class Answer: Sendable {
        private let completion: @Sendable (Result<TransportResponse, RequestError>) -> Void
        private let state = Locked<(resumed: Bool, pending: Result<TransportResponse, RequestError>?)>((false, nil))

        init(_ completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) {
            self.completion = completion
        }

        /// The transfer's result: passed on now if the participant was resumed, else kept for then.
        func deliver(_ result: Result<TransportResponse, RequestError>) {
            let now = state.withLock { state -> Bool in
                guard !state.resumed else { return true }
                state.pending = result
                return false
            }
            if now { completion(result) }
        }

        /// Marks the participant resumed; true when a result was waiting (and is now passed on).
        func resume() -> Bool {
            let pending = state.withLock { state -> Result<TransportResponse, RequestError>? in
                state.resumed = true
                defer { state.pending = nil }
                return state.pending
            }
            guard let pending else { return false }
            completion(pending)
            return true
        }
    }

    /// One participant's handle on a shared transfer: starting starts the transfer if nobody
    /// has (or passes on its answer if it has ended already); cancelling leaves it.
    final class Participant: TransportTask {
        private let transport: SharingTransport
        fileprivate let ticket: Ticket
        private let answer: Answer
        /// Whether it opened the transfer; the others hold no connection of their own, so the
        /// queue gives their concurrency slots back at once.
        let isFirst: Bool

        fileprivate init(transport: SharingTransport, ticket: Ticket, isFirst: Bool, answer: Answer) {
            self.transport = transport
            self.ticket = ticket
            self.isFirst = isFirst
            self.answer = answer
        }

        /// The shared transfer's task, once seen: the transfer leaves the table when it ends,
        /// before the queue has claimed the result, and progress read in between must stay at
        /// the final counts, not drop to zero.
        private let sharedTask = Locked<(any TransportTask)?>(nil)

        func resume() {
            if !answer.resume() { transport.start(ticket) }
        }

        func cancel() { transport.leave(ticket) }

        var progress: TransferProgress {
            if let task = transport.task(of: ticket) {
                sharedTask.withLock { $0 = task }
                return task.progress
            }
            return sharedTask.withLock { $0 }?.progress ?? TransferProgress()
        }
    }
}
