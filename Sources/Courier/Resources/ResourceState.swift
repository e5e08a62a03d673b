/// What one ``Resource`` shows and knows, and the rules it changes by: events in, effects out,
/// nothing else touched, so that `ResourceStateTests` check every rule without a queue or a clock.
///
/// Invariants:
/// - at most one load runs (`load`); a request to load while one runs joins it;
/// - `isLoading` is true exactly while a load runs;
/// - a value, once there, is only ever replaced by a newer value, never removed; a failure sets
///   `error` beside it, a success clears `error`;
/// - a cancelled load sets no error;
/// - only a watched resource loads by itself (after invalidation, when its value goes stale, after
///   a failure with the retry's backoff) or sets a timer, at most one (`timerAt`);
/// - updates of a load that is no longer the running one are ignored.
///
/// Not generic, on purpose: the value is held as `any Sendable` and cast where a resource reads
/// it. Generic state in a generic resource is code that looks up its types' metadata at run
/// time at every use (a third of what an observed load cost beyond a `send`).
struct ResourceState: Sendable {
    // Laid out for size (an app may keep thousands): words first, then the narrower fields;
    // times as `Time` (8 bytes where `Double?` takes 16), counters as 32 bits.

    // What the resource shows.
    private(set) var value: (any Sendable)?
    /// The head of the value's response, kept only by resources that read it (pages).
    var head: ResponseHead? { aside?.head }
    private(set) var error: RequestError? {
        get { aside?.error }
        set {
            aside = Aside.make(head: head, error: newValue)
            errorRevision &+= 1
        }
    }
    /// What most resources never keep, in one box: a head takes 40 bytes inline, a
    /// `RequestError` over a hundred, and an app may keep thousands of resources.
    private var aside: Aside?
    var receivedAt: Double? { _receivedAt.seconds }
    private var _receivedAt = Time()

    // What it knows.
    /// Until when the value is fresh for the resource (seconds since 1970).
    var freshUntil: Double? { _freshUntil.seconds }
    private var _freshUntil = Time()
    /// Until when the HTTP cache may answer with the stored response without the origin; a load
    /// before then that must see the origin's data asks with ``CachePolicy/reload``.
    private var storedFreshUntil = Time()
    var retryAt: Double? { _retryAt.seconds }
    private var _retryAt = Time()
    var timerAt: Double? { _timerAt.seconds }
    private var _timerAt = Time()
    /// The running load, kept as its token (0: none) and its request's ID number (0: not yet
    /// added; IDs start at 1): 12 bytes, where `Load?` takes 18.
    private(set) var load: Load? {
        get { loadToken == 0 ? nil : Load(token: Int(loadToken), id: loadID == 0 ? nil : RequestID(rawValue: loadID)) }
        set {
            loadToken = newValue.map { Int32(truncatingIfNeeded: $0.token) } ?? 0
            loadID = newValue?.id?.rawValue ?? 0
        }
    }
    private var loadID: UInt64 = 0
    private var loadToken: Int32 = 0
    /// Count the changes of `value` and `error`, which need not be `Equatable` (wrapping).
    private(set) var valueRevision: UInt32 = 0
    private(set) var errorRevision: UInt32 = 0
    private var nextToken: Int32 = 1
    private var _watchers: Int32 = 0
    private var _failures: Int32 = 0
    var watchers: Int { Int(_watchers) }
    var failures: Int { Int(_failures) }
    private(set) var source: ResponseSource?
    private(set) var isLoading = false
    private(set) var isStale = false
    /// Made stale by a write or by the app: the next load asks the origin.
    private(set) var isInvalidated = false
    /// Invalidated while a load ran, whose answer may predate the write.
    private var invalidatedDuringLoad = false

    init() {}

    /// A time in seconds since 1970, or none (NaN), in 8 bytes.
    private struct Time: Sendable {
        private var raw = Double.nan
        init() {}
        init(_ seconds: Double?) { raw = seconds ?? .nan }
        var seconds: Double? { raw.isNaN ? nil : raw }
    }

    /// The running load: `token` tells its updates from those of earlier loads.
    struct Load: Sendable, Equatable {
        let token: Int
        var id: RequestID?
    }

    enum LoadKind: Sendable {
        /// Only when the value is not fresh.
        case ifNeeded
        /// Now, through the cache as the request's policy says.
        case always
        /// Now, from the origin.
        case origin
    }

    /// When a value stops being fresh: for the resource, and for the HTTP cache.
    struct Freshness: Sendable, Equatable {
        var until: Double
        var storedUntil: Double
    }

    /// A value that came: where from, with the head of its response, and how long it stays fresh.
    struct Arrival: Sendable {
        var value: any Sendable
        var source: ResponseSource?
        var head: ResponseHead?
        var freshness: Freshness
        /// The failure a stored value was answered in place of (``RequestMetrics/networkFailure``):
        /// the value is shown, and the load counts as failed (the error beside it, a retry).
        var failure: RequestError?
    }

    enum Effect: Sendable, Equatable {
        /// Send the request; `policy` nil keeps the request's own cache policy.
        case send(token: Int, policy: CachePolicy?)
        case cancel(RequestID)
        case setTimer(at: Double)
        case clearTimer
    }

    /// What observers see of the state (``ResourceChanges``).
    var marks: ResourceMarks {
        ResourceMarks(valueRevision: valueRevision, errorRevision: errorRevision, receivedAt: receivedAt, source: source,
                      isStale: isStale, isLoading: isLoading, hasValue: value != nil)
    }

    /// What the state holds by reference (its value, its head and error), for a caller that
    /// changes it under a lock others share to release outside that lock: a value's `deinit` is
    /// the app's code.
    var references: (value: (any Sendable)?, aside: AnyObject?) { (value, aside) }

    /// The phase, with the value as the resource's type (which it always is: a resource's
    /// request makes it).
    func phase<Value>(as type: Value.Type) -> ResourcePhase<Value> {
        if let value = value as? Value { return .loaded(value) }
        if isLoading { return .loading }
        if let error { return .failed(error) }
        return .idle
    }

    /// Whether the value may be shown without loading.
    func isFresh(at now: Double) -> Bool {
        guard value != nil, !isInvalidated, let freshUntil else { return false }
        return now < freshUntil
    }

    // MARK: - Events

    mutating func requestLoad(_ kind: LoadKind, now: Double) -> [Effect] {
        guard load == nil else { return [] }
        if kind == .ifNeeded, isFresh(at: now) { return [] }
        let token = Int(nextToken)
        nextToken = nextToken == .max ? 1 : nextToken + 1
        load = Load(token: token)
        isLoading = true
        _retryAt = Time()
        // Stale for the resource (a stale time shorter than the response's own) while the cache
        // would still answer with the very same stored response: only the origin has anything newer.
        let onlyOriginIsNewer = !isFresh(at: now) && (storedFreshUntil.seconds.map { now < $0 } ?? false)
        let policy: CachePolicy? = kind == .origin || isInvalidated || onlyOriginIsNewer ? .reload : nil
        return [.send(token: token, policy: policy)] + timerEffects(now: now)
    }

    /// The load's request was added with `id`.
    mutating func started(_ token: Int, id: RequestID) {
        guard load?.token == token else { return }
        load?.id = id
    }

    /// A stored response shown while the load goes on.
    mutating func showStored(_ token: Int, _ arrival: Arrival, now: Double) -> [Effect] {
        guard load?.token == token else { return [] }
        take(arrival, now: now)
        return timerEffects(now: now)
    }

    /// The load ended; after a failure a watched resource tries again by `retry`, its options'
    /// rule (an argument, not a field: every resource would keep a copy).
    mutating func finished(_ token: Int, with result: Result<Arrival, RequestError>, retry: ResourceOptions.Retry?,
                           now: Double) -> [Effect] {
        guard load?.token == token else { return [] }
        load = nil
        isLoading = false
        let invalidatedMeanwhile = invalidatedDuringLoad
        invalidatedDuringLoad = false
        switch result {
        case .success(let arrival):
            if let failure = arrival.failure {
                // A stored value answered in place of a failed request: shown, with the failure.
                count(failure, retry: retry, now: now)
                isInvalidated = isInvalidated || invalidatedMeanwhile
            } else {
                if error != nil { error = nil }
                _failures = 0
                isInvalidated = invalidatedMeanwhile
            }
            take(arrival, now: now)
        case .failure(.cancelled):
            // The app's (or the last watcher's) choice: nothing loads again by itself.
            isInvalidated = isInvalidated || invalidatedMeanwhile
            return timerEffects(now: now)
        case .failure(let failure):
            count(failure, retry: retry, now: now)
            isInvalidated = isInvalidated || invalidatedMeanwhile
        }
        if value != nil, !isFresh(at: now) { isStale = true }
        if watchers > 0, isInvalidated, retryAt == nil, error == nil || invalidatedMeanwhile {
            return requestLoad(.always, now: now)
        }
        return timerEffects(now: now)
    }

    /// An update of the load `token`: its end (`isFinal`), or a stored response shown while it
    /// goes on (a success only).
    mutating func take(_ update: Result<Arrival, RequestError>, isFinal: Bool, of token: Int,
                       retry: ResourceOptions.Retry?, now: Double) -> [Effect] {
        if isFinal { return finished(token, with: update, retry: retry, now: now) }
        guard case .success(let arrival) = update else { return [] }
        return showStored(token, arrival, now: now)
    }

    /// A write, or the app, made the value stale.
    mutating func invalidate(now: Double) -> [Effect] {
        isInvalidated = true
        if value != nil { isStale = true }
        if load != nil {
            invalidatedDuringLoad = true
            return []
        }
        return watchers > 0 ? requestLoad(.always, now: now) : timerEffects(now: now)
    }

    /// Someone started watching.
    mutating func watch(now: Double) -> [Effect] {
        _watchers += 1
        guard watchers == 1 else { return [] }
        return requestLoad(.ifNeeded, now: now) + (load == nil ? timerEffects(now: now) : [])
    }

    /// Someone stopped watching.
    mutating func unwatch(now: Double) -> [Effect] {
        _watchers = max(0, _watchers - 1)
        if watchers == 0 { _retryAt = Time() }
        return timerEffects(now: now)
    }

    /// The timer set by ``Effect/setTimer(at:)`` fired.
    mutating func timerFired(now: Double) -> [Effect] {
        _timerAt = Time()
        if value != nil, !isFresh(at: now) { isStale = true }
        guard watchers > 0, load == nil else { return timerEffects(now: now) }
        if let retryAt, now >= retryAt { return requestLoad(.always, now: now) }
        if value != nil, isStale, retryAt == nil, error == nil { return requestLoad(.ifNeeded, now: now) }
        return timerEffects(now: now)
    }

    /// The network, or the resource's origin, came back (the queue saw an answer after finding
    /// it gone): a watched resource whose last load failed, or whose value went stale, loads now
    /// rather than at its retry's time.
    mutating func reconnected(now: Double) -> [Effect] {
        guard watchers > 0, load == nil else { return [] }
        if value != nil, !isFresh(at: now) { isStale = true }
        guard error != nil || isStale || isInvalidated else { return [] }
        return requestLoad(.always, now: now)
    }

    /// The app cancels the running load.
    func cancel() -> [Effect] {
        guard let id = load?.id else { return [] }
        return [.cancel(id)]
    }

    // MARK: - Rules

    private mutating func take(_ arrival: Arrival, now: Double) {
        value = arrival.value
        valueRevision &+= 1
        source = arrival.source
        aside = Aside.make(head: arrival.head, error: error)
        _receivedAt = Time(now)
        _freshUntil = Time(arrival.freshness.until)
        storedFreshUntil = Time(arrival.freshness.storedUntil)
        isStale = !isFresh(at: now)
    }

    /// A load failed: the error is shown, and a watched resource retries after its backoff.
    private mutating func count(_ failure: RequestError, retry: ResourceOptions.Retry?, now: Double) {
        error = failure
        _failures = _failures == .max ? _failures : _failures + 1
        if watchers > 0, let retry { _retryAt = Time(now + retry.delay(after: failures)) }
    }

    /// The one timer of a watched resource: its next retry, or when its fresh value goes stale.
    /// An unwatched resource sets none (thousands may live; their staleness is read when asked).
    private mutating func timerEffects(now: Double) -> [Effect] {
        var due: Double?
        if watchers > 0, load == nil, let retryAt { due = retryAt }
        if watchers > 0, value != nil, !isStale, let freshUntil, freshUntil > now { due = min(due ?? freshUntil, freshUntil) }
        guard due != timerAt else { return [] }
        _timerAt = Time(due)
        return [due.map { .setTimer(at: $0) } ?? .clearTimer]
    }
}

/// A resource's head and error, held by reference; `nil` rather than a box of neither.
private final class Aside: Sendable {
    let head: ResponseHead?
    let error: RequestError?

    private init(_ head: ResponseHead?, _ error: RequestError?) {
        self.head = head
        self.error = error
    }

    static func make(head: ResponseHead?, error: RequestError?) -> Aside? {
        head == nil && error == nil ? nil : Aside(head, error)
    }
}
