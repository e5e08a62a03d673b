import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Sends typed requests and delivers each one's result, exactly once, to its observers.
///
/// ```swift
/// let queue = RequestQueue(baseURL: URL(string: "https://api.example.com"))
/// let id = queue.add(LogInRequest(parameters: credentials))
/// queue.addObserver(for: id) { (result: Result<LogInResponse, RequestError>) in
///     switch result {
///     case .success(let session): print("Welcome", session.name)
///     case .failure(let error): print(error)
///     }
/// }
/// // or, from async code:
/// let session = try await queue.send(LogInRequest(parameters: credentials))
/// ```
///
/// The queue makes URL requests and processes responses on a background Dispatch queue, and
/// calls observers on the configuration's ``RequestQueueConfiguration/callbackQueue``.
/// Every method may be called from any thread, and none of them waits for the network.
///
/// Every added request ends in exactly one result: a response, or a ``RequestError`` (it could
/// not be encoded, failed on the wire, was rejected by validation, or was cancelled). That result
/// reaches each observer registered for its ID once, and each live observer of its response type
/// once. When a queue is released, requests it still holds end with ``RequestError/cancelled``.
public final class RequestQueue: Sendable {
    /// A process-wide queue with the default configuration and no base URL, for apps that need
    /// only one. Its requests use absolute URLs in their `path`.
    public static let shared = RequestQueue()

    /// The configuration the queue was made with.
    public let configuration: RequestQueueConfiguration

    /// The URL that relative request paths are resolved against; `nil` when requests use absolute URLs.
    public let baseURL: URL?

    /// The delegate told about every step of every request. The queue holds it strongly.
    public let delegate: (any RequestQueueDelegate)?

    let state: Locked<QueueState>
    let transport: any Transport
    let builder: URLRequestBuilder
    /// The live ``Resource``s, which writes make stale.
    let resources = ResourceRegistry()
    /// Makes and processes requests; concurrent, so slow decoding never holds up other requests.
    let workQueue: DispatchQueue
    /// Marks the work queue, so that a transport completion already on it is not moved again.
    let workQueueKey = DispatchSpecificKey<Bool>()
    /// Starts waiting requests; serial, so they go on the wire in the order they were added.
    let startQueue: DispatchQueue
    /// Why the session configuration's own headers cannot be sent, if they cannot: every
    /// request then fails with it before anything is sent.
    let configurationHeaderError: RequestError?
    /// The one timer of all the queue's timed work (see ``Timetable``).
    private let alarm: Alarm
    /// The journal of durable requests; nil without ``RequestQueueConfiguration/durability``.
    let durable: DurableJournal?
    /// Whether nothing is held back or gone (see ``ConnectivityGate``): every send reads it.
    let networkQuiet = QuietFlag()

    /// Creates a queue.
    /// - Parameters:
    ///   - configuration: Callback queue, concurrency limit, timeouts and session settings.
    ///     Default: ``RequestQueueConfiguration/default``.
    ///   - delegate: Told about every step of every request; the queue keeps it alive. Default: `nil`.
    ///   - baseURL: What relative request paths are resolved against. Default: `nil`, in which
    ///     case requests must use absolute URLs.
    public convenience init(
        configuration: RequestQueueConfiguration = .default,
        delegate: (any RequestQueueDelegate)? = nil,
        baseURL: URL? = nil
    ) {
        let workQueue = DispatchQueue(label: "Courier.RequestQueue.work", attributes: .concurrent)
        let session = configuration.sessionConfiguration
        let settings = TransportSettings(
            sessionConfiguration: session,
            maximumConnectionsPerHost: max(session.httpMaximumConnectionsPerHost, configuration.maxConcurrentRequests),
            credentials: configuration.credentials, maximumResponseSize: configuration.maximumResponseSize,
            trustedCertificates: configuration.trustedCertificates, tls: configuration.tls, completionQueue: workQueue)
        self.init(configuration: configuration, delegate: delegate, baseURL: baseURL,
                  transport: configuration.transport.make(settings), workQueue: workQueue)
    }

    /// - Parameters:
    ///   - sweepInterval: How often dead type observers are swept, in seconds.
    ///   - deferredStartPatience: How long an observer may hold back a start it claimed, in nanoseconds.
    ///   - connectivity: What the queue starts knowing of the network, with its probes' delays.
    init(
        configuration: RequestQueueConfiguration,
        delegate: (any RequestQueueDelegate)?,
        baseURL: URL?,
        transport: any Transport,
        sweepInterval: Double = 2,
        deferredStartPatience: UInt64 = 10_000_000,
        connectivity: Connectivity = Connectivity(),
        workQueue: DispatchQueue = DispatchQueue(label: "Courier.RequestQueue.work", attributes: .concurrent)
    ) {
        self.configuration = configuration
        self.delegate = delegate
        self.baseURL = baseURL
        // The queue's own layers between its stages and the transport: shared transfers, then the
        // cache (so that a shared transfer is looked up and stored once).
        let cached = configuration.cache.map { CacheLayer(transport, cache: $0) as any Transport } ?? transport
        self.transport = configuration.sharesIdenticalRequests ? SharingTransport(cached) : cached
        builder = URLRequestBuilder(baseURL: baseURL, defaultTimeout: configuration.timeoutInterval)
        self.workQueue = workQueue
        workQueue.setSpecific(key: workQueueKey, value: true)
        startQueue = DispatchQueue(label: "Courier.RequestQueue.start", target: workQueue)
        alarm = Alarm(queue: workQueue)
        var timing = QueueState.Timing()
        timing.sweepInterval = sweepInterval
        timing.deferredStartPatience = deferredStartPatience
        state = Locked(QueueState(limit: configuration.maxConcurrentRequests,
                                  resultRetentionCount: configuration.resultRetentionCount,
                                  resultRetentionInterval: configuration.resultRetentionInterval,
                                  timing: timing, alarm: alarm, quiet: networkQuiet, connectivity: connectivity))
        configurationHeaderError = Self.validateHeaders(configuration.sessionConfiguration.httpAdditionalHeaders)
        durable = configuration.durability.map(DurableJournal.init)
        let weakSelf = WeakRequestQueue(self)
        alarm.start { weakSelf.queue?.runDueJobs() }
        if let durable { resumeDurableRequests(durable) }
    }

    private static func validateHeaders(_ headers: [AnyHashable: Any]?) -> RequestError? {
        for (name, value) in headers ?? [:] {
            do {
                try HeaderValidator.validate(name: "\(name)", value: "\(value)")
            } catch {
                return error
            }
        }
        return nil
    }

    deinit {
        alarm.stop()
        // Nothing may capture `self` here, so results are delivered without delegates.
        let (claims, watchers) = state.withLock { ($0.claimAll(result: .failure(.cancelled), now: Self.now()), $0.takeNetworkWatchers()) }
        for watcher in watchers { watcher.finish() }
        // Before the transport lets go: once it has, a queue opened on the folder finds it free.
        durable?.close()
        // Not here: the last reference may go on a transport's own queue, and on Linux
        // invalidating a URLSession from its delegate queue crashes the process.
        let transport = self.transport
        DispatchQueue.global().async { transport.invalidate() }
        for claim in claims {
            claim.task?.cancel()
            // A durable request has not ended: it stays in the journal, for the next opening.
            if durable != nil, claim.box.durable != nil { continue }
            Self.deliver(claim, on: configuration.callbackQueue, state: state)
        }
    }

    // MARK: - Adding and cancelling

    /// Adds a request. It starts as soon as fewer than
    /// ``RequestQueueConfiguration/maxConcurrentRequests`` requests are in flight.
    ///
    /// Returns at once, from any thread. Observe the result with ``addObserver(for:handler:)``,
    /// which gets the result even when the request has already finished.
    /// - Returns: The request's ID, unique in the process.
    /// - Parameters:
    ///   - request: The request.
    ///   - priority: When the concurrency limit holds requests back, higher priorities start
    ///     first; within a priority, the order of adding. Default: `.normal`.
    ///   - owner: An object that names a cancel group for ``cancelAll(ownedBy:)``, held weakly.
    ///     Default: none.
    @discardableResult
    public func add<R: Request>(_ request: R, priority: RequestPriority = .normal, owner: AnyObject? = nil) -> RequestID {
        enqueue(request, priority: priority, owner: owner, completion: nil).0
    }

    /// Adds a request; if it may start now, starts it from the start queue. From an observer on a
    /// background callback queue it is held until that observer's block ends, then started there
    /// (`DeliveryScope`).
    /// - Returns: The ID, and whether the caller must run the claimed start loop itself
    ///   (only when `startsHere` and not on the main thread).
    func enqueue<R: Request>(_ request: R, priority: RequestPriority = .normal, owner: AnyObject? = nil,
                             completion: IDObserver?, startsHere: Bool = false) -> (RequestID, mustStart: Bool) {
        enqueue(box: RequestBox(request: request), priority: priority, owner: owner, completion: completion, startsHere: startsHere)
    }

    /// Adds a request in its box (a buffered request's, or a stream's with its sink).
    func enqueue(box: any AnyRequestBox, priority: RequestPriority, owner: AnyObject?,
                 completion: IDObserver?, updates: UpdateHandler? = nil, startsHere: Bool = false) -> (RequestID, mustStart: Bool) {
        if let scope = DeliveryScope.current {
            // From an observer: held until the observer's block ends, then started on this thread.
            let (id, first) = state.withLock {
                $0.enqueueHeld(box, priority: priority, owner: owner, completion: completion, updates: updates,
                               scope: ObjectIdentifier(scope), now: Self.now())
            }
            if first { scope.releaseWhenDone(self) }
            return (id, false)
        }
        // One lock: add, and claim the start loop.
        let (id, claimedRun) = state.withLock {
            $0.enqueue(box, priority: priority, owner: owner, completion: completion, updates: updates)
        }
        guard claimedRun else { return (id, false) }
        if startsHere, !DeliveryScope.isMainThread { return (id, true) }
        runStartLoop()
        return (id, false)
    }

    /// Cancels a request. Its observers get ``RequestError/cancelled``.
    ///
    /// Safe at any time: a waiting request never reaches the network; a request in flight is
    /// stopped; a finished request, or an ID this queue does not know, is left as it is.
    public func cancel(_ id: RequestID) {
        end(id, with: .cancelled)
    }

    /// Cancels every request of the queue, waiting or in flight.
    public func cancelAll() {
        cancelAll { _ in true }
    }

    /// Cancels every request whose response type is `type`.
    public func cancelAll<R: Sendable>(ofType type: R.Type) {
        let wanted = ObjectIdentifier(type)
        cancelAll { $0.box.responseType == wanted }
    }

    /// Cancels every request added with `owner` (see ``add(_:priority:owner:)``).
    public func cancelAll(ownedBy owner: AnyObject) {
        cancelAll { $0.owner === owner }
    }

    private func cancelAll(where isIncluded: (Entry) -> Bool) {
        end(state.withLock { $0.claimAll(result: .failure(.cancelled), now: Self.now(), where: isIncluded) })
    }

    /// Ends a request from outside its pipeline (cancelled, timed out), stopping its task.
    func end(_ id: RequestID, with error: RequestError) {
        guard let claim = state.withLock({ $0.claim(id, result: .failure(error), urlRequest: nil, now: Self.now()) }) else { return }
        end([claim])
    }

    /// Whether a request has ended and its result has been handed to its observers.
    ///
    /// `false` from ``add(_:priority:owner:)`` until the result was delivered; `true` afterwards. Also `true` for
    /// an ID this queue does not track (one from another queue).
    public func isFinished(_ id: RequestID) -> Bool {
        state.withLock { $0.isFinished(id) }
    }

    // MARK: - Observers

    /// Registers a handler for one request's result, called once on the callback queue.
    ///
    /// If the request has already finished, the handler gets the kept result (see
    /// ``RequestQueueConfiguration/resultRetentionCount``); so adding the observer right after
    /// ``add(_:priority:owner:)`` never misses a result.
    /// ```swift
    /// let id = queue.add(ProfileRequest(userID: 42))
    /// queue.addObserver(for: id) { (result: Result<Profile, RequestError>) in … }
    /// // or the value with its status, header fields and metrics:
    /// queue.addObserver(for: id) { (result: Result<Reply<Profile>, RequestError>) in … }
    /// ```
    ///
    /// A durable request's observer (``addDurably(_:lane:key:)``) gets its result in a later run of
    /// the app too, from the journal, made into the type registered in
    /// ``Durability/responseTypes``; once an observer got it, the journal notes it as delivered,
    /// and it is not given to an observer of a later run again.
    /// - Parameters:
    ///   - id: The request's ID, from ``add(_:priority:owner:)`` or ``addDurably(_:lane:key:)``.
    ///   - handler: Called once with the result. If `R` is neither the request's response type
    ///     nor a ``Reply`` of it, it gets ``RequestError/responseTypeMismatch(expected:actual:)``.
    public func addObserver<R: Sendable>(
        for id: RequestID,
        handler: @escaping @Sendable (Result<R, RequestError>) -> Void
    ) {
        let observer: IDObserver = { handler($0.typed(as: R.self)) }
        let registration = state.withLock {
            $0.addObserver(observer, for: id, expecting: ObjectIdentifier(expectedValueType(of: R.self)),
                           typeName: { String(reflecting: expectedValueType(of: R.self)) }, now: Self.now())
        }
        if case .deliverNow(.failure(.resultUnavailable)) = registration, id.isDurable, let durable {
            return observeJournaledResult(of: id, in: durable, observer: observer)
        }
        if case .deliverNow(let result) = registration {
            // A durable result kept from this run: noted as seen once the observer got it.
            let ended = id.isDurable ? durable?.beginDelivery(of: String(id.rawValue)) : nil
            configuration.callbackQueue.async {
                DeliveryScope.run { observer(result) }
                ended?(DurableJournal.gives(result))
            }
        }
    }

    /// Registers a handler for every result of response type `R`, for as long as `owner` lives.
    ///
    /// The queue holds `owner` weakly: once it is deallocated the handler is no longer called
    /// and is released soon after, without waiting for another response of that type. Capture
    /// the owner weakly in the handler, or it can never be deallocated.
    /// ```swift
    /// queue.addObserver(ownedBy: self) { [weak self] (result: Result<Profile, RequestError>) in
    ///     self?.show(result)
    /// }
    /// ```
    /// Types are told apart by identity, not by name: two types named `Profile` in different
    /// modules have separate observers.
    ///
    /// On a queue with ``RequestQueueConfiguration/durability``, the observer also gets the
    /// results of durable requests of type `R` that no observer has seen yet (those of an
    /// earlier run of the app, kept in the journal), once each, and the journal notes them as seen.
    public func addObserver<R: Sendable>(
        ownedBy owner: AnyObject,
        handler: @escaping @Sendable (Result<R, RequestError>) -> Void
    ) {
        let observer = TypeObserver(owner: owner) { handler($0.result.typed(as: R.self)) }
        state.withLock { $0.addTypeObserver(observer, for: ObjectIdentifier(R.self), now: Self.now()) }
        if let durable { deliverJournaledResults(to: observer, typeName: String(reflecting: R.self), in: durable) }
    }

    /// Removes the observers of response type `R` registered with `owner`. Results already on
    /// their way to the callback queue are not delivered to them either.
    public func removeObservers<R: Sendable>(forType type: R.Type, ownedBy owner: AnyObject) {
        state.withLock { $0.removeTypeObservers(type: ObjectIdentifier(type), owner: owner) }
    }

    /// Removes every type observer registered with `owner`.
    public func removeObservers(ownedBy owner: AnyObject) {
        state.withLock { $0.removeTypeObservers(type: nil, owner: owner) }
    }

    /// Drops type observers whose owner is gone, releasing their handlers (for tests).
    func sweepDeadObservers() {
        state.withLock { $0.sweepTypeObservers(now: Self.now()) }
    }

    /// Sizes of the queue's per-request tables (for tests).
    var bookkeeping: (active: Int, waiting: Int, undelivered: Int, recentResults: Int, deadlines: Int) {
        state.withLock { $0.bookkeeping }
    }

    /// How many type observers the queue holds, dead or alive (for tests).
    var typeObserverCount: Int {
        state.withLock { $0.typeObserverCount }
    }
}
