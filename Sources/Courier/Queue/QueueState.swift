import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything a ``RequestQueue`` knows about its requests and observers, guarded by one lock.
///
/// Each method is one atomic step of a request's life; the queue never holds the lock while it
/// calls user code (delegates, parameters' encoders, observers) or URLSession.
struct QueueState {
    enum Phase {
        /// In the waiting list, not started.
        case waiting
        /// Taken from the waiting list; its URL request is being made.
        case preparing
        /// Handed to the transport.
        case running(any TransportTask, URLRequest)
        /// Between attempts, holding no slot: backing off before a retry, or waiting for the
        /// authenticator's refresh.
        case paused(URLRequest)
    }

    /// One active request. A class, so that the entries table holds one pointer per request
    /// (waiting requests can number in the hundreds of thousands) and grows cheaply.
    final class Entry {
        let box: any AnyRequestBox
        let priority: RequestPriority
        /// Held weakly: it only names a cancel group.
        weak var owner: AnyObject?
        var phase: Phase = .waiting
        var idObservers: [IDObserver] = []
        /// The continuation of an `async` `send`, resumed without going through the callback queue.
        let completion: IDObserver?
        /// The attempt to resume when a paused request is back in the waiting list.
        var resume: Attempt?
        /// Courier's own temporary body file, removed when the request ends.
        var temporaryFile: URL?
        var metrics: RequestMetrics
        var progressObservers: [ProgressObserver] = []

        init(box: any AnyRequestBox, priority: RequestPriority, owner: AnyObject?, completion: IDObserver?,
             metrics: RequestMetrics) {
            self.box = box
            self.priority = priority
            self.owner = owner
            self.completion = completion
            self.metrics = metrics
        }
    }

    /// A request's terminal result, taken out of the state exactly once, with everyone to tell.
    struct Claim: Sendable {
        let id: RequestID
        let result: AnyResult
        let box: any AnyRequestBox
        let urlRequest: URLRequest?
        let task: (any TransportTask)?
        let idObservers: [IDObserver]
        let typeObservers: [TypeObserver]
        let completion: IDObserver?
        let temporaryFile: URL?
        let metrics: RequestMetrics
        let progressObservers: [ProgressObserver]
    }

    private(set) var entries = EntryTable<Entry>()
    /// The waiting requests, one first-in-first-out list per priority.
    private var waiting = [WaitingList](repeating: WaitingList(), count: RequestPriority.allCases.count)
    private(set) var inFlight = 0
    /// Requests whose result is taken but not yet handed to their observers.
    /// With the observers added while the result was on its way, called right after the others.
    private var undelivered: [RequestID: [IDObserver]] = [:]
    var typeObservers = TypeObserverTable()
    private var results: RecentResults
    /// Whether a run of the start loop is scheduled or running, so that bursts of `add`
    /// schedule one run rather than one each.
    private var startScheduled = false

    /// Claims the right to schedule the start loop; false when a run is already due.
    mutating func requestStart(limit: Int) -> Bool {
        // Nothing waiting: no run (a wasted thread wake-up per finished request otherwise).
        guard inFlight < limit, !startScheduled, waiting.contains(where: { $0.count > 0 }) else { return false }
        startScheduled = true
        return true
    }

    /// When the claimed run was left to the end of an observer's delivery block (`DeliveryScope`),
    /// so that the watchdog can take it over from a block that does not end.
    private var deferredStartSince: UInt64?
    private var deferredStartWatchdogArmed = false

    /// Leaves the claimed run to a delivery block; true when the watchdog must be armed.
    mutating func deferStart(now: UInt64) -> Bool {
        deferredStartSince = now
        defer { deferredStartWatchdogArmed = true }
        return !deferredStartWatchdogArmed
    }

    /// Takes a deferred run back when its block ends; false when the watchdog took it first.
    mutating func takeDeferredStart() -> Bool {
        defer { deferredStartSince = nil }
        return deferredStartSince != nil
    }

    enum DeferredStartCheck {
        /// A block has held the run for longer than the patience: run it elsewhere.
        case takeOver
        /// A run is deferred but only recently: look again later.
        case lookAgain
        /// Nothing deferred: the watchdog stops until the next deferral.
        case stop
    }

    /// The watchdog's look at the deferred run.
    mutating func checkDeferredStart(now: UInt64, patience: UInt64) -> DeferredStartCheck {
        guard let since = deferredStartSince else {
            deferredStartWatchdogArmed = false
            return .stop
        }
        guard now &- since >= patience else { return .lookAgain }
        deferredStartSince = nil
        deferredStartWatchdogArmed = false
        return .takeOver
    }

    /// Requests with progress observers, and whether a poll of their progress is scheduled.
    private var progressWatched: Set<RequestID> = []
    var progressPollScheduled = false
    /// Whether a sweep of dead type observers is scheduled.
    var sweepScheduled = false
    private var deadlines = Deadlines()
    /// The earliest deadline a timer is set for.
    private var armedDeadline: UInt64?
    /// Bumped by each successful credentials refresh.
    private(set) var credentialGeneration = 0
    /// Whether the authenticator is refreshing, and the attempts waiting for it.
    private var isRefreshing = false
    private var awaitingRefresh: [Attempt] = []

    init(resultRetentionCount: Int, resultRetentionInterval: Double) {
        results = RecentResults(limit: resultRetentionCount, maximumAge: resultRetentionInterval)
    }

    /// Adds a request to the end of its priority's waiting list and returns its new ID.
    mutating func enqueue(_ box: any AnyRequestBox, priority: RequestPriority, owner: AnyObject?,
                          completion: IDObserver?) -> RequestID {
        // The ID is drawn under the lock so that waiting order and ID order agree.
        let id = RequestID.next()
        entries.insert(Entry(box: box, priority: priority, owner: owner, completion: completion,
                             metrics: RequestMetrics(id: id, addedAt: Date())), for: id)
        waiting[priority.rawValue].append(id)
        return id
    }

    var waitingCount: Int { waiting.reduce(0) { $0 + $1.count } }

    /// Sizes of the per-request tables, for tests that check they stay bounded.
    var bookkeeping: (active: Int, waiting: Int, undelivered: Int, recentResults: Int, deadlines: Int) {
        (entries.count, waitingCount, undelivered.count, results.count, deadlines.count)
    }

    /// The next waiting ID, highest priority first.
    private mutating func popWaiting() -> RequestID? {
        for priority in RequestPriority.allCases.reversed() {
            if let id = waiting[priority.rawValue].popFirst() { return id }
        }
        return nil
    }

    enum Start {
        /// A new request: make its URL request.
        case new(RequestID, any AnyRequestBox)
        /// A request coming back after a pause: send this attempt.
        case resume(Attempt)
        /// The next request writes its body to disk, which must not happen on the calling
        /// thread: the run goes on from the start queue (the request stays first in line).
        case handOff
    }

    /// Takes the next waiting request and a slot for it, if fewer than `limit` are in flight.
    /// Ends the start loop's run (clearing the scheduled flag) when it returns nil.
    /// - Parameter onCallingThread: The run is on a caller's thread (an observer's or `send`'s),
    ///   not on the start queue: a request whose preparation writes a body file is handed off.
    mutating func nextToStart(limit: Int, onCallingThread: Bool = false) -> Start? {
        guard inFlight < limit else {
            startScheduled = false
            return nil
        }
        while let id = popWaiting() {
            // A request cancelled while waiting has no entry left: skip it.
            guard let entry = entries[id], case .waiting = entry.phase else { continue }
            if onCallingThread, entry.resume == nil, entry.box.preparesSlowly {
                waiting[entry.priority.rawValue].prepend(id)
                return .handOff
            }
            let resume = entry.resume
            entry.phase = .preparing
            entry.resume = nil
            inFlight += 1
            return resume.map { .resume($0) } ?? .new(id, entry.box)
        }
        startScheduled = false
        return nil
    }

    /// Takes a running request out of its slot until ``resumeSoon(_:)`` puts it back.
    /// Returns false when it ended meanwhile.
    mutating func pause(_ attempt: Attempt) -> Bool {
        guard entries[attempt.id] != nil else { return false }
        entries[attempt.id]?.phase = .paused(attempt.current.urlRequest)
        return true
    }

    /// Puts a paused request at the front of the waiting list, to be sent as `attempt`.
    /// Returns false when it ended meanwhile.
    mutating func resumeSoon(_ attempt: Attempt) -> Bool {
        guard let entry = entries[attempt.id], case .paused = entry.phase else { return false }
        entries[attempt.id]?.phase = .waiting
        entries[attempt.id]?.resume = attempt
        waiting[entry.priority.rawValue].prepend(attempt.id)
        return true
    }

    enum RefreshDecision {
        /// Credentials were refreshed since this attempt was sent: send it again now.
        case retryNow
        /// Parked until the refresh in progress ends.
        case parked
        /// Parked; the caller must start the refresh.
        case startRefresh
        /// It ended meanwhile.
        case ended
    }

    /// Parks a request whose credentials were refused, unless newer credentials exist already.
    mutating func awaitCredentials(_ attempt: Attempt) -> RefreshDecision {
        guard entries[attempt.id] != nil else { return .ended }
        if attempt.credentialGeneration < credentialGeneration { return .retryNow }
        entries[attempt.id]?.phase = .paused(attempt.current.urlRequest)
        awaitingRefresh.append(attempt)
        defer { isRefreshing = true }
        return isRefreshing ? .parked : .startRefresh
    }

    /// Ends the refresh; returns the attempts that waited for it.
    mutating func finishRefresh(succeeded: Bool) -> [Attempt] {
        isRefreshing = false
        if succeeded { credentialGeneration += 1 }
        defer { awaitingRefresh = [] }
        return awaitingRefresh
    }

    mutating func releaseSlot() {
        inFlight -= 1
    }

    enum Attachment {
        /// It ended meanwhile (cancelled): do not send it.
        case ended
        case attached
        /// Attached, and a timer must be set for this deadline, now the earliest.
        case attachedArmingTimer(UInt64)
    }

    /// Marks a prepared request as running, with its deadline (uptime in nanoseconds) if any.
    mutating func attach(_ task: any TransportTask, urlRequest: URLRequest, temporaryFile: URL?,
                         deadline: UInt64?, attempt: Int, to id: RequestID) -> Attachment {
        guard entries[id] != nil else { return .ended }
        entries[id]?.phase = .running(task, urlRequest)
        entries[id]?.metrics.attempts = attempt
        if entries[id]?.metrics.startedAt == nil { entries[id]?.metrics.startedAt = Date() }
        if let temporaryFile { entries[id]?.temporaryFile = temporaryFile }
        guard let deadline else { return .attached }
        deadlines.insert(deadline, for: id)
        deadlines.purge(liveCount: entries.count) { entries[$0] != nil }
        if let armed = armedDeadline, armed <= deadline { return .attached }
        armedDeadline = deadline
        return .attachedArmingTimer(deadline)
    }

    /// The running requests whose deadline has passed, and the next deadline to set a timer for.
    mutating func expireDeadlines(now: UInt64) -> (expired: [RequestID], nextTimer: UInt64?) {
        if let armed = armedDeadline, armed <= now { armedDeadline = nil }
        // Whatever it is doing: running, backing off before a retry, or waiting for credentials.
        let expired = deadlines.popExpired(now: now).filter { entries[$0] != nil }
        guard let next = deadlines.earliest, armedDeadline.map({ next < $0 }) ?? true else {
            return (expired, nil)
        }
        armedDeadline = next
        return (expired, next)
    }

    /// Adds one transfer (an attempt or a redirect hop) to a request's metrics.
    mutating func recordTransfer(_ id: RequestID, bytesSent: Int64, bytesReceived: Int64, statusCode: Int?, redirected: Bool) {
        guard entries[id] != nil else { return }
        entries[id]?.metrics.bytesSent += bytesSent
        entries[id]?.metrics.bytesReceived += bytesReceived
        if let statusCode { entries[id]?.metrics.statusCode = statusCode }
        if redirected { entries[id]?.metrics.redirects += 1 }
    }

    func isActive(_ id: RequestID) -> Bool {
        entries[id] != nil
    }

    func isFinished(_ id: RequestID) -> Bool {
        entries[id] == nil && undelivered[id] == nil
    }

    /// Ends a request with `result`, unless it has already ended. This is the one place a
    /// request ends, which is what makes every result exactly-once.
    mutating func claim(_ id: RequestID, result: AnyResult, urlRequest: URLRequest?, now: UInt64) -> Claim? {
        guard let entry = entries.remove(id) else { return nil }
        var task: (any TransportTask)?
        var sentRequest = urlRequest
        switch entry.phase {
        case .running(let runningTask, let runningRequest):
            task = runningTask
            sentRequest = sentRequest ?? runningRequest
        case .paused(let pausedRequest):
            sentRequest = sentRequest ?? pausedRequest
            awaitingRefresh.removeAll { $0.id == id }
        case .waiting, .preparing:
            break
        }
        results.insert(result, for: id, now: now)
        var metrics = entry.metrics
        metrics.finishedAt = Date()
        let typeObservers = typeObservers.active(for: entry.box.responseType)
        undelivered[id] = []
        progressWatched.remove(id)
        return Claim(id: id, result: result, box: entry.box, urlRequest: sentRequest, task: task,
                     idObservers: entry.idObservers, typeObservers: typeObservers, completion: entry.completion,
                     temporaryFile: entry.temporaryFile, metrics: metrics, progressObservers: entry.progressObservers)
    }

    /// Marks a result as delivered; returns the observers that came while it was on its way.
    mutating func markDelivered(_ id: RequestID) -> [IDObserver] {
        undelivered.removeValue(forKey: id) ?? []
    }

    enum ObserverRegistration {
        case registered
        case deliverNow(AnyResult)
    }

    /// Registers an ID observer, or returns what it must be told at once.
    mutating func addObserver(_ observer: @escaping IDObserver, for id: RequestID,
                              expecting type: ObjectIdentifier, typeName: () -> String, now: UInt64) -> ObserverRegistration {
        if let entry = entries[id] {
            guard entry.box.responseType == type else {
                return .deliverNow(.failure(.responseTypeMismatch(expected: typeName(), actual: entry.box.responseTypeName)))
            }
            entries[id]?.idObservers.append(observer)
            return .registered
        }
        if undelivered[id] != nil {
            // Ended but not yet delivered: join the delivery, after the delegates.
            undelivered[id]?.append(observer)
            return .registered
        }
        if let result = results.result(for: id, now: now) { return .deliverNow(result) }
        return .deliverNow(.failure(.resultUnavailable(id)))
    }

    /// Adds a progress observer; false when the request is not active (it ended, or is unknown).
    mutating func addProgressObserver(_ observer: ProgressObserver, for id: RequestID) -> Bool {
        guard entries[id] != nil else { return false }
        entries[id]?.progressObservers.append(observer)
        progressWatched.insert(id)
        return true
    }

    /// The running tasks whose progress is observed, with their observers.
    func watchedTransfers() -> [(any TransportTask, [ProgressObserver])] {
        progressWatched.compactMap { id in
            guard let entry = entries[id], case .running(let task, _) = entry.phase else { return nil }
            return (task, entry.progressObservers)
        }
    }

    var hasProgressObservers: Bool { !progressWatched.isEmpty }

    /// Ends at once every request for which `isIncluded` holds (all by default), oldest first.
    mutating func claimAll(result: AnyResult, now: UInt64, where isIncluded: (Entry) -> Bool = { _ in true }) -> [Claim] {
        let ids = entries.ids(where: isIncluded)
        return ids.compactMap { claim($0, result: result, urlRequest: nil, now: now) }
    }
}

/// The waiting requests, first in first out, with O(1) appends and removals from the front.
struct WaitingList {
    private var ids: [RequestID] = []
    private var head = 0

    var count: Int { ids.count - head }

    mutating func append(_ id: RequestID) {
        ids.append(id)
    }

    /// Puts an ID first, for a request coming back from a pause (a retry).
    mutating func prepend(_ id: RequestID) {
        if head > 0 {
            head -= 1
            ids[head] = id
        } else {
            ids.insert(id, at: 0)
        }
    }

    mutating func popFirst() -> RequestID? {
        guard head < ids.count else { return nil }
        let id = ids[head]
        head += 1
        if head == ids.count {
            ids.removeAll(keepingCapacity: ids.count < 4096)
            head = 0
        } else if head > 4096, head * 2 > ids.count {
            ids.removeFirst(head)
            head = 0
        }
        return id
    }
}
