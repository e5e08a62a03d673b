import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One active request of a queue, from `add` until its result is claimed.
///
/// A class, so that the entry table holds one pointer per request (waiting requests can number in
/// the hundreds of thousands) and grows cheaply. Only `QueueState` reads and writes it, under the
/// queue's lock, which makes every access to its fields exclusive: they are
/// `@exclusivity(unchecked)`, as the runtime's check costs two calls and a thread-local lookup
/// per access.
final class Entry {
    enum Phase {
        /// In the waiting list, not started.
        case waiting
        /// Taken from the waiting list; its URL request is being made.
        case preparing
        /// Handed to the transport.
        case running(any TransportTask, URLRequest)
        /// A streamed body under way to its consumer: no timeout, no retry any more.
        case streaming(any TransportTask, URLRequest)
        /// Between attempts, holding no slot: backing off before a retry, or waiting for the
        /// authenticator's refresh.
        case paused(URLRequest)
    }

    let box: any AnyRequestBox
    let priority: RequestPriority
    /// Held weakly: it only names a cancel group.
    weak var owner: AnyObject?
    @exclusivity(unchecked) var phase: Phase = .waiting
    @exclusivity(unchecked) var idObservers: [IDObserver] = []
    /// Observers of the request's updates (``RequestQueue/load(_:priority:owner:handler:)``).
    @exclusivity(unchecked) var updateHandlers: [UpdateHandler] = []
    /// Whether a stored response was shown to its update observers before its result.
    @exclusivity(unchecked) var showedCachedValue = false
    /// The continuation of an `async` `send`, resumed without going through the callback queue.
    let completion: IDObserver?
    /// The attempt to send when a paused request is back in the waiting list.
    @exclusivity(unchecked) var resume: Attempt?
    /// Courier's own temporary body file, removed when the request ends.
    @exclusivity(unchecked) var temporaryFile: URL?
    /// The lane of a durable request that has one (``Lanes``).
    @exclusivity(unchecked) var lane: String?
    @exclusivity(unchecked) var metrics: RequestMetrics

    init(box: any AnyRequestBox, priority: RequestPriority, owner: AnyObject?, completion: IDObserver?,
         metrics: RequestMetrics) {
        self.box = box
        self.priority = priority
        self.owner = owner
        self.completion = completion
        self.metrics = metrics
    }
}
