import Foundation
import Observation

/// What a screen shows of one request: its value, where the value came from and when, whether a
/// load is running, the last error beside the last good value. `Observable`, so that SwiftUI
/// redraws when it changes; the same on Linux with `withObservationTracking`.
///
/// ```swift
/// struct ProfileScreen: View {
///     @State private var profile = RequestQueue.shared.resource(ProfileRequest(userID: 42))
///
///     var body: some View {
///         Group {
///             switch profile.phase {
///             case .idle, .loading: ProgressView()
///             case .loaded(let user): ProfileView(user: user, stale: profile.isStale)
///             case .failed(let error): ErrorView(error)
///             }
///         }
///         .refreshable { await profile.refresh() }
///         .task { await profile.watch() }
///     }
/// }
/// ```
/// Get one from ``RequestQueue/resource(_:options:)``, which hands out one resource per request
/// for as long as someone holds it. Its properties change only on its context
/// (``ResourceOptions/updatesOn``, the main actor by default), all of a change at once; they may be
/// read from any thread. A resource nobody holds any more cancels its load and its timers.
public final class Resource<R: Request>: Observable, Sendable {
    /// The type of the value: the request's response type.
    public typealias Value = R.ResponseType

    /// The request the resource loads.
    public let request: R
    /// Its options.
    public var options: ResourceOptions { key.options }

    private let queue: RequestQueue
    /// Its state under a lock shared with other resources, and its observers' registrar, made
    /// when first read: thousands may live at once.
    private let storage: ResourceCore
    /// Its key in the queue's registry, which holds the options (shared: an app may keep
    /// thousands of resources).
    private let key: ResourceRegistry.Key

    init(request: R, queue: RequestQueue, key: ResourceRegistry.Key) {
        self.request = request
        self.queue = queue
        self.key = key
        let options = key.options
        storage = ResourceCore(ResourceStorage(state: ResourceState()))
        options.updatesOn.mark()
    }

    deinit {
        // Nobody holds the resource: its load and timer go with it.
        let (id, timer) = storage.withLock { ($0.state.load?.id, $0.timer) }
        if let id { queue.cancel(id) }
        timer?.cancel()
        queue.resources.remove(key)
    }

    // MARK: - What it shows

    /// The last value loaded, or `nil` before the first. A failure later keeps it.
    public var value: Value? { read(.value) { $0.value as? Value } }

    /// Where ``value`` came from: the network, or the queue's cache and how; `nil` without a value.
    public var source: ResponseSource? { read(.source) { $0.source } }

    /// The head of the response ``value`` came from, kept only when the options ask for it
    /// (the pages of a ``PagedResource``, which find the next page in it): a head holds its
    /// URL and every field, about a kilobyte, and an app may keep thousands of resources.
    var head: ResponseHead? { read(.head) { $0.head } }

    /// When ``value`` arrived; `nil` without a value.
    public var updatedAt: Date? { read(.updatedAt) { $0.receivedAt.map(Date.init(timeIntervalSince1970:)) } }

    /// Why the last load failed; `nil` once a load succeeds. A cancelled load sets none.
    public var error: RequestError? { read(.error) { $0.error } }

    /// Whether a load is running (the first, or a refresh of a value shown meanwhile).
    public var isLoading: Bool { read(.isLoading) { $0.isLoading } }

    /// Whether ``value`` is past its freshness, or was made stale by a write or ``invalidate()``.
    /// A value shown from the cache while a load runs is stale.
    ///
    /// A watched resource (``watch()``) changes it, and tells its observers, when the freshness
    /// runs out; an unwatched one sets no timer for that (an app may keep thousands of
    /// resources), so its observers hear of it with its next change, and reading it is always right.
    public var isStale: Bool {
        let now = options.clock.now()
        return read(.isStale) { $0.isStale || ($0.value != nil && !$0.isFresh(at: now)) }
    }

    /// Where the resource stands: see ``ResourcePhase``.
    public var phase: ResourcePhase<Value> {
        // Under the name of the value and the error, which a change of `isLoading` changes too
        // when it changes the phase (see `ResourceChanges`).
        storage.read(.value) { $0.state.phase(as: Value.self) }
    }

    // MARK: - What it does

    /// Loads unless the value is fresh; joins a load that is running.
    public func loadIfNeeded() {
        change { $0.requestLoad(.ifNeeded, now: $1) }
    }

    /// Loads now, whatever the value's freshness; joins a load that is running. Before the first
    /// value, a response the cache holds is shown at once, then the fresh one.
    public func load() {
        change { $0.requestLoad(.always, now: $1) }
    }

    /// Loads from the origin (``CachePolicy/reload``) and returns when the load ends; joins a
    /// load that is running. What pull-to-refresh wants. Its outcome is in ``value`` and ``error``.
    public func refresh() async {
        _ = await waitForLoad(.origin)
    }

    /// The value, loading it first unless it is fresh.
    ///
    /// ```swift
    /// let user = try await profile.fetch()
    /// ```
    /// - Throws: The load's error; ``RequestError/cancelled`` when the calling task is cancelled
    ///   (the load goes on for the resource).
    public func fetch() async throws(RequestError) -> Value {
        try await waitForLoad(.ifNeeded).get()
    }

    /// Marks the value stale: the next ``loadIfNeeded()`` loads from the origin, and a watched
    /// resource loads at once. A load that is running is not stopped, but its answer counts as
    /// stale. Writes through the queue invalidate the resources of their URLs by themselves.
    public func invalidate() {
        change { $0.invalidate(now: $1) }
    }

    /// Cancels the running load, if any; the value stays and no error is set.
    public func cancel() {
        change { state, _ in state.cancel() }
    }

    /// Keeps the resource fresh while the calling task runs: loads it unless its value is fresh,
    /// then loads again when a write or ``invalidate()`` makes it stale, when its freshness runs
    /// out, and after a failure (``ResourceOptions/retry``). Returns when the task is cancelled.
    ///
    /// ```swift
    /// .task { await profile.watch() }          // SwiftUI: for as long as the view shows
    /// ```
    /// Several callers may watch one resource; it stops when the last one stops.
    public func watch() async {
        let watching = ResourceWatching()
        change { $0.watch(now: $1) }
        await withTaskCancellationHandler {
            await withCheckedContinuation { watching.wait($0) }
        } onCancel: {
            watching.end()
        }
        change { $0.unwatch(now: $1) }
    }

    // MARK: - Changes

    private func read<T>(_ property: ResourceObservation.Property, _ get: (ResourceState) -> T) -> T {
        storage.read(property) { get($0.state) }
    }

    /// Applies an event on the context: at once when the caller is there (and no change is
    /// under way), otherwise later there.
    private func change(then: (@Sendable (ResourceState) -> Void)? = nil,
                        _ event: @escaping @Sendable (inout ResourceState, Double) -> [ResourceState.Effect]) {
        let context = options.updatesOn
        if context.isCurrent, apply(event, then: then, unlessChanging: true) { return }
        context.async { self.apply(event, then: then) }
    }

    /// Runs on the context only, one at a time: the event changes the state, its effects run
    /// (an answer that comes while they do, as a fresh hit in memory does, changes the state
    /// too), then observers are told, once: `willSet` and `didSet` of what changed, as for
    /// `@Observable` properties (through ``ResourceCore``). A load the cache answers at
    /// once is one change, from one value to the next, and never shows as loading. With
    /// `unlessChanging`, a change under way (the caller is its observer) leaves the event
    /// unapplied: false.
    @discardableResult
    private func apply(_ event: (inout ResourceState, Double) -> [ResourceState.Effect],
                       then: ((ResourceState) -> Void)?, unlessChanging: Bool = false) -> Bool {
        let now = options.clock.now()
        let begun = storage.withLock { storage -> (ResourceMarks, [ResourceState.Effect])? in
            if unlessChanging, storage.changing { return nil }
            storage.changing = true
            storage.effectsThread = ResourceStorage.currentThread
            return (storage.state.marks, event(&storage.state, now))
        }
        guard let (old, effects) = begun else { return false }
        for effect in effects { run(effect, now: now) }
        storage.endEffects(since: old)
        let (afterChange, state) = storage.withLock { storage in
            storage.changing = false
            defer { storage.afterChange = [] }
            return (storage.afterChange, then == nil ? nil : storage.state)
        }
        for work in afterChange { options.updatesOn.async(work) }
        if let then, let state { then(state) }
        return true
    }

    private func run(_ effect: ResourceState.Effect, now: Double) {
        switch effect {
        case .send(let token, let policy):
            send(token: token, policy: policy)
        case .cancel(let id):
            queue.cancel(id)
        case .setTimer(let due):
            let timer = options.clock.schedule(due - now, options.updatesOn) { [weak self] in
                self?.change { $0.timerFired(now: $1) }
            }
            storage.withLock { storage in defer { storage.timer = timer }; return storage.timer }?.cancel()
        case .clearTimer:
            storage.withLock { storage in defer { storage.timer = nil }; return storage.timer }?.cancel()
        }
    }

    private func send(token: Int, policy: CachePolicy?) {
        let (showsStored, afterFailure) = storage.withLock { ($0.state.value == nil, $0.state.failures > 0) }
        // A load after a failure waits while its origin is gone, rather than failing again: it
        // goes (as the queue's probe, if it is the oldest waiting) when the origin is back.
        let box = RequestBox(request: request, showsCachedFirst: showsStored, policyOverride: policy,
                             offlineOverride: afterFailure ? .wait : nil)
        // Direct: the update hops to the context here, not through the callback queue as well.
        let updates = UpdateHandler(deliver: { [weak self] update in self?.received(update, token: token) }, isDirect: true)
        // Started here (the context, which waits for nothing else meanwhile) rather than by waking
        // the start queue, as `send` starts on its caller's thread; never on the main thread.
        let (id, mustStart) = queue.enqueue(box: box, priority: options.priority, owner: nil, completion: nil, updates: updates,
                                            startsHere: true)
        storage.withLock { $0.state.started(token, id: id) }
        if mustStart { queue.runClaimedStartLoopHere() }
    }

    /// An update of the load `token`, on any thread; applied on the context: in the change that
    /// sent the request when it comes while that change runs (the cache answered at once),
    /// otherwise later.
    private func received(_ update: AnyUpdate, token: Int) {
        let outcome: Result<ResourceState.Arrival, RequestError>
        switch update.result {
        case .success(let made as MadeValue):
            guard made.value is Value else { return }
            outcome = .success(.init(value: made.value, source: update.source, head: options.keepsHead ? made.head : nil,
                                     freshness: freshness(of: made),
                                     failure: made.metrics?.networkFailure.map(RequestError.transportFailed)))
        case .success:
            return
        case .failure(let error):
            outcome = .failure(error)
        }
        let isFinal = update.isFinal
        if !isFinal, case .failure = outcome { return }   // before its end, a load shows only values
        let retry = options.retry
        let now = options.clock.now()
        // Answered at once, while this resource's change sends the request: part of that change.
        let here = storage.withLock { storage -> (effects: [ResourceState.Effect], waiters: Waiters, released: Held)? in
            guard storage.isRunningEffectsHere else { return nil }
            let ending = isFinal && storage.state.load?.token == token
            let released = storage.state.references
            let effects = storage.state.take(outcome, isFinal: isFinal, of: token, retry: retry, now: now)
            return (effects, ending ? storage.takeWaiters() : [:], released)
        }
        if let here {
            // What the change replaced (the old value) is released here, outside the lock others share.
            withExtendedLifetime(here.released) {}
            for effect in here.effects { run(effect, now: now) }
            if !here.waiters.isEmpty {
                let result = outcome.map(\.value)
                for waiter in here.waiters.values { waiter.resume(returning: result) }
            }
            return
        }
        let work: @Sendable () -> Void = {
            let ending = isFinal && self.storage.withLock { $0.state.load?.token == token }
            self.apply({ $0.take(outcome, isFinal: isFinal, of: token, retry: retry, now: $1) }, then: nil)
            if ending { self.resumeWaiters(with: outcome.map(\.value)) }
        }
        // During a change, after it: its observers, told at its end, see each change in turn.
        let later = storage.withLock { storage in
            if storage.changing { storage.afterChange.append(work) }
            return !storage.changing
        }
        if later { options.updatesOn.async(work) }
    }

    private typealias Waiters = [UInt32: CheckedContinuation<Result<any Sendable, RequestError>, Never>]
    private typealias Held = (value: (any Sendable)?, aside: AnyObject?)

    /// When a value that arrives now stops being fresh: by ``ResourceOptions/staleAfter`` or by
    /// its HTTP freshness (RFC 9111 §4.2, as the cache computes it); `no-cache` and `no-store`
    /// make it stale at once.
    private func freshness(of made: MadeValue) -> ResourceState.Freshness {
        let now = options.clock.now()
        let storedUntil = made.freshFor.map { now + $0 } ?? storedFreshness(of: made.head, now: now)
        return .init(until: options.staleAfter.map { now + $0.seconds } ?? storedUntil, storedUntil: storedUntil)
    }

    /// Until when the HTTP cache may answer with `head`'s response, computed from its fields:
    /// for an answer of the network, or of the cache after validation.
    private func storedFreshness(of head: ResponseHead, now: Double) -> Double {
        let headers = head.headerFields
        let directives = CacheHeaders.cacheControl(in: headers)
        var storedUntil = now
        if directives.noCache == nil, !directives.noStore {
            let stored = StoredResponse(url: "", statusCode: head.status, headers: headers, body: Data(), requestTime: now,
                                        responseTime: now, secondaryKey: [], credentialKey: nil)
            let limit = queue.configuration.cache?.heuristicFreshnessLimit ?? ResponseCache.defaultHeuristicFreshnessLimit
            let http = Freshness(of: stored, now: now, heuristicLimit: limit, directives: directives)
            storedUntil = now + max(0, http.lifetime - http.age)
        }
        return storedUntil
    }

    // MARK: - Waiting for a load

    private func waitForLoad(_ kind: ResourceState.LoadKind) async -> Result<Value, RequestError> {
        await waitForLoadedValue(kind).flatMap { value in
            // Always a `Value`: the request makes it (see `received`).
            (value as? Value).map { .success($0) } ?? .failure(.cancelled)
        }
    }

    private func waitForLoadedValue(_ kind: ResourceState.LoadKind) async -> Result<any Sendable, RequestError> {
        let key = storage.withLock { storage in defer { storage.nextWaiter &+= 1 }; return storage.nextWaiter }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                storage.withLock { $0.waiters[key] = continuation }
                change(then: { [weak self] state in
                    // Nothing to wait for: the value is fresh.
                    guard state.load == nil else { return }
                    let result: Result<any Sendable, RequestError> = state.value.map { .success($0) } ?? .failure(state.error ?? .cancelled)
                    self?.resume(key, with: result)
                }) { $0.requestLoad(kind, now: $1) }
            }
        } onCancel: {
            resume(key, with: .failure(.cancelled))
        }
    }

    /// Whether anything has read the resource, which makes its observation registrar (tests).
    var hasObservationRegistrar: Bool { storage.hasRegistrar }

    /// Callers waiting for the load to end (tests).
    var waiterCount: Int { storage.withLock { $0.waiters.count } }

    private func resume(_ key: UInt32, with result: Result<any Sendable, RequestError>) {
        storage.withLock { $0.waiters.removeValue(forKey: key) }?.resume(returning: result)
    }

    private func resumeWaiters(with result: Result<any Sendable, RequestError>) {
        let waiters = storage.withLock { $0.takeWaiters() }
        for waiter in waiters.values { waiter.resume(returning: result) }
    }
}

extension Resource: AnyResource {
    func reconnected() {
        change { $0.reconnected(now: $1) }
    }
}
