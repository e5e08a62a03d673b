import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything a ``RequestQueue`` knows about its requests and observers, guarded by one lock.
///
/// It composes the parts that each keep one concern's invariants — ``EntryTable`` (active
/// requests), ``Admission`` (waiting lists, slots), ``DeferredStart``, ``Timetable`` (deadlines
/// and all other timed work, behind one ``Alarm``), ``CredentialRefresh``, ``ResultRetention``,
/// ``ProgressWatch`` and ``TypeObserverTable`` — and each method below is one atomic step of a
/// request's life. The parts are private: nothing outside writes them. The queue never holds
/// the lock while it calls user code (delegates, parameters' encoders, observers) or a transport.
struct QueueState {
    /// Intervals of the queue's periodic work.
    struct Timing: Sendable {
        /// How often dead type observers are swept while any are registered, in seconds.
        var sweepInterval: Double = 2
        /// How long an observer may keep a request it added from starting, in nanoseconds:
        /// then the watchdog starts it (an observer that adds a request and then waits for it
        /// must not hang). Tests that check what happens within one observer block raise it.
        var deferredStartPatience: UInt64 = 10_000_000
        /// How often observed transfers are read for progress, in nanoseconds.
        var progressPollInterval: UInt64 = 50_000_000
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
        let updateHandlers: [UpdateHandler]
        /// Whether a stored response was shown to update observers before this result.
        let showedCachedValue: Bool
        let temporaryFile: URL?
        let metrics: RequestMetrics
        let progressObservers: [ProgressObserver]
        /// Whether ending it admitted the next request of its lane and claimed a run of the
        /// start loop, which the caller must run.
        var startsNext = false
        /// An older request's kept result that this one's took the place of: held only so that
        /// it is freed with the claim, after the lock (``ResultRetention/ended(_:with:now:)``).
        var displacedResult: AnyResult?
    }

    let timing: Timing
    private let alarm: Alarm
    private var entries = EntryTable<Entry>()
    private var admission: Admission
    private var deferredStart = DeferredStart()
    private var timetable = Timetable()
    private var refresh = CredentialRefresh()
    private var retention: ResultRetention
    private var progress = ProgressWatch()
    private var typeObservers = TypeObserverTable()
    private var lanes = Lanes()
    private var gate = ConnectivityGate()
    private var networkWatchers = NetworkWatchers()
    /// Whether ``gate`` is quiet (nothing held back, nothing gone), read without the lock on
    /// every send; written only here, under it.
    private let quiet: QuietFlag

    init(limit: Int, resultRetentionCount: Int, resultRetentionInterval: Double, timing: Timing, alarm: Alarm,
         quiet: QuietFlag = QuietFlag(), connectivity: Connectivity = Connectivity()) {
        admission = Admission(limit: limit)
        gate = ConnectivityGate(connectivity: connectivity)
        self.quiet = quiet
        retention = ResultRetention(limit: resultRetentionCount, maximumAge: resultRetentionInterval)
        self.timing = timing
        self.alarm = alarm
    }

    // MARK: - Adding and starting

    /// Adds a request to the end of its priority's waiting list. Returns its new ID, and whether
    /// the caller claimed the next run of the start loop and must run it.
    mutating func enqueue(_ box: any AnyRequestBox, priority: RequestPriority, owner: AnyObject?,
                          completion: IDObserver?, updates: UpdateHandler? = nil) -> (RequestID, claimedRun: Bool) {
        let id = insertEntry(box, priority: priority, owner: owner, completion: completion, updates: updates)
        admission.append(id, priority: priority)
        return (id, admission.claimRun())
    }

    /// Adds a request from an observer's delivery block (`scope`), held until the block ends
    /// (``releaseHeld(scope:)``). Returns its new ID, and whether it is the block's first, which
    /// the block must then release when it ends.
    mutating func enqueueHeld(_ box: any AnyRequestBox, priority: RequestPriority, owner: AnyObject?,
                              completion: IDObserver?, updates: UpdateHandler? = nil,
                              scope: ObjectIdentifier, now: UInt64) -> (RequestID, firstOfScope: Bool) {
        let id = insertEntry(box, priority: priority, owner: owner, completion: completion, updates: updates)
        let first = deferredStart.hold(id, priority: priority, scope: scope, now: now)
        // The watchdog releases them if the block has not ended within the patience.
        if first { schedule(.watchDeferredStart, at: now &+ timing.deferredStartPatience) }
        return (id, first)
    }

    /// Adds a durable request under the ID its journal keeps, behind the requests of its lane,
    /// if any; a request whose next attempt is due later (one added before a restart) waits until
    /// then. Returns whether the caller claimed the next run of the start loop and must run it.
    mutating func enqueueDurable(_ box: any AnyRequestBox, id: RequestID, lane: String?, now: UInt64) -> Bool {
        let entry = Entry(box: box, priority: .normal, owner: nil, completion: nil,
                          metrics: RequestMetrics(id: id, addedAt: box.durable?.addedAt ?? Date()))
        entry.lane = lane
        entries.insert(entry, for: id)
        if let lane, !lanes.add(id, to: lane) { return false }
        admitDurable(id, entry, now: now)
        return admission.claimRun()
    }

    /// Admits a durable request to the waiting list, or, when its next attempt is due later,
    /// holds it paused until then.
    private mutating func admitDurable(_ id: RequestID, _ entry: Entry, now: UInt64) {
        if let record = entry.box.durable {
            let wait = record.nextAttemptAt.timeIntervalSinceNow
            if wait > 0 {
                entry.phase = .paused(record.prepared.urlRequest)
                schedule(.resume(Attempt(id: id, box: entry.box, original: record.prepared)), at: now &+ UInt64(wait * 1e9))
                return
            }
        }
        admission.append(id, priority: entry.priority)
    }

    private mutating func insertEntry(_ box: any AnyRequestBox, priority: RequestPriority, owner: AnyObject?,
                                      completion: IDObserver?, updates: UpdateHandler?) -> RequestID {
        // The ID is drawn under the lock so that IDs and the order of adding agree.
        let id = RequestID.next()
        let entry = Entry(box: box, priority: priority, owner: owner, completion: completion,
                          metrics: RequestMetrics(id: id, addedAt: Date()))
        if let updates { entry.updateHandlers.append(updates) }
        entries.insert(entry, for: id)
        return id
    }

    /// Claims the next run of the start loop; false when one is due already, or none is needed.
    mutating func claimStartRun() -> Bool {
        admission.claimRun()
    }

    /// Puts the requests a delivery block held into the waiting lists when the block ends.
    /// Returns whether the caller claimed the next run of the start loop (false too when the
    /// watchdog released them first).
    mutating func releaseHeld(scope: ObjectIdentifier) -> Bool {
        admit(deferredStart.release(scope: scope))
    }

    /// The watchdog's look at held requests: those of a block that has not ended within the
    /// patience join the waiting lists. Returns whether the caller claimed a run of the start loop.
    mutating func watchDeferredStart(now: UInt64) -> Bool {
        let (released, lookAgainAt) = deferredStart.releaseOverdue(now: now, patience: timing.deferredStartPatience)
        if let lookAgainAt { schedule(.watchDeferredStart, at: lookAgainAt) }
        return admit(released)
    }

    private mutating func admit(_ held: [DeferredStart.Held]) -> Bool {
        guard !held.isEmpty else { return false }
        // Those cancelled meanwhile have no entry left: they never join a line.
        for request in held where entries[request.id] != nil {
            admission.append(request.id, priority: request.priority)
        }
        return admission.claimRun()
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

    /// The next waiting request of the claimed run, with a slot for it; nil ends the run.
    /// - Parameter onCallingThread: The run is on a caller's thread (an observer's or `send`'s),
    ///   not on the start queue: a request whose preparation writes a body file is handed off.
    mutating func nextToStart(onCallingThread: Bool = false) -> Start? {
        let table = entries
        let next = admission.next { id in
            // A request cancelled while waiting has no entry left, or ended and came back.
            guard let entry = table[id], case .waiting = entry.phase else { return .skip }
            return onCallingThread && entry.resume == nil && entry.box.preparesSlowly ? .handOff : .start
        }
        switch next {
        case nil: return nil
        case .handOff: return .handOff
        case .start(let id):
            let entry = table[id]!
            let resume = entry.resume
            entry.phase = .preparing
            entry.resume = nil
            return resume.map { .resume($0) } ?? .new(id, entry.box)
        }
    }

    /// Gives a slot back.
    mutating func releaseSlot() {
        admission.releaseSlot()
    }

    /// Gives a slot back and claims the next run of the start loop, in one step (this runs once
    /// per request).
    mutating func releaseSlotAndClaimStartRun() -> Bool {
        admission.releaseSlot()
        return admission.claimRun()
    }

    // MARK: - Attempts

    /// Marks a prepared request as running, with its deadline (uptime in nanoseconds) if any.
    /// Returns false when it ended meanwhile (it was cancelled): then it must not be sent.
    mutating func attach(_ task: any TransportTask, urlRequest: URLRequest, temporaryFile: URL?,
                         deadline: UInt64?, attempt: Int, to id: RequestID) -> Bool {
        guard let entry = entries[id] else { return false }
        entry.phase = .running(task, urlRequest)
        entry.metrics.attempts = attempt
        if entry.metrics.startedAt == nil { entry.metrics.startedAt = Date() }
        if let temporaryFile { entry.temporaryFile = temporaryFile }
        // One set while it waited for the network stays: the timeout covers the wait.
        if let deadline, !timetable.hasDeadline(id) { schedule(.deadline(id), at: deadline) }
        return true
    }

    /// Marks a running request's body as its consumer's: its timeout no longer applies. Returns
    /// false when it ended meanwhile.
    mutating func commitStream(_ id: RequestID) -> Bool {
        guard let entry = entries[id], case .running(let task, let urlRequest) = entry.phase else { return false }
        entry.phase = .streaming(task, urlRequest)
        return true
    }

    /// Ends a request whose timeout passed, unless its streamed body is under way.
    /// The transfer of a durable request's attempt under way, if that is what `id` is doing.
    func runningDurableTask(_ id: RequestID) -> (any TransportTask)? {
        guard let entry = entries[id], entry.box.durable != nil, case .running(let task, _) = entry.phase else { return nil }
        return task
    }

    mutating func claimExpired(_ id: RequestID, now: UInt64) -> Claim? {
        if let entry = entries[id], case .streaming = entry.phase { return nil }
        return claim(id, result: .failure(.timedOut), urlRequest: nil, now: now)
    }

    /// Adds one transfer (an attempt or a redirect hop) to a request's metrics.
    mutating func recordTransfer(_ id: RequestID, bytesSent: Int64, bytesReceived: Int64, statusCode: Int?,
                                 source: ResponseSource?, redirected: Bool, negotiated: NegotiatedVersions? = nil,
                                 networkFailure: URLError? = nil) {
        guard let entry = entries[id] else { return }
        if source != nil { entry.metrics.networkFailure = networkFailure }
        if let negotiated {
            entry.metrics.httpVersion = negotiated.http
            entry.metrics.tlsVersion = negotiated.tls
        }
        entry.metrics.bytesSent += bytesSent
        entry.metrics.bytesReceived += bytesReceived
        if let statusCode { entry.metrics.statusCode = statusCode }
        if let source { entry.metrics.source = source }
        if redirected { entry.metrics.redirects += 1 }
    }

    /// Holds a request that will be sent again, out of any slot, until ``resume(_:)``.
    /// Returns false when it ended meanwhile.
    mutating func pause(_ attempt: Attempt) -> Bool {
        guard let entry = entries[attempt.id] else { return false }
        entry.phase = .paused(attempt.current.urlRequest)
        // A durable request's timeout is its attempt's: the next attempt sets its own.
        if entry.lane != nil || entry.box.durable != nil { timetable.cancelDeadline(of: attempt.id) }
        return true
    }

    /// Resumes a paused request as `attempt` once its backoff has passed (`due`, uptime in nanoseconds).
    mutating func scheduleResume(_ attempt: Attempt, at due: UInt64) {
        schedule(.resume(attempt), at: due)
    }

    /// Puts a paused request first in the waiting list, to be sent as `attempt`. Returns whether
    /// the caller must run the start loop (false too when the request ended meanwhile).
    mutating func resume(_ attempt: Attempt) -> Bool {
        guard let entry = entries[attempt.id], case .paused = entry.phase else { return false }
        entry.phase = .waiting
        entry.resume = attempt
        admission.prepend(attempt.id, priority: entry.priority)
        return admission.claimRun()
    }

    // MARK: - Credentials refresh

    /// The authenticator's credentials generation, for an attempt about to be sent.
    var credentialGeneration: Int { refresh.generation }

    enum RefreshDecision: Equatable {
        /// Newer credentials exist already: `retry` is waiting; run the start loop if true.
        case retried(startRun: Bool)
        /// It waits for the refresh in progress.
        case waiting
        /// It waits; the caller must start the refresh.
        case startRefresh
        /// It ended meanwhile.
        case ended
    }

    /// Takes a request whose credentials the server refused, to be sent again as `retry` once
    /// credentials are fresh.
    mutating func credentialsRefused(_ attempt: Attempt, retry: Attempt) -> RefreshDecision {
        guard pause(attempt) else { return .ended }
        switch refresh.refused(attempt) {
        case .retryNow: return .retried(startRun: resume(retry))
        case .wait: return .waiting
        case .startRefresh: return .startRefresh
        }
    }

    /// Ends the refresh; returns the attempts that waited for it.
    mutating func finishRefresh(succeeded: Bool) -> [Attempt] {
        refresh.finish(succeeded: succeeded)
    }

    // MARK: - Timed work

    /// Takes the jobs that are due, and arms the alarm for the next one.
    mutating func takeDueJobs(now: UInt64) -> [Timetable.Job] {
        let (jobs, next) = timetable.takeDue(now: now)
        if let next { alarm.arm(at: next) }
        return jobs
    }

    private mutating func schedule(_ job: Timetable.Job, at due: UInt64) {
        if let armAt = timetable.schedule(job, at: due) { alarm.arm(at: armAt) }
    }

    // MARK: - Ending

    func isActive(_ id: RequestID) -> Bool {
        entries[id] != nil
    }

    func isFinished(_ id: RequestID) -> Bool {
        entries[id] == nil && !retention.isDelivering(id)
    }

    /// Ends a request with `result`, unless it has already ended. This is the one place a
    /// request ends, which is what makes every result exactly-once.
    mutating func claim(_ id: RequestID, result: AnyResult, urlRequest: URLRequest?, now: UInt64) -> Claim? {
        guard let entry = entries.remove(id) else { return nil }
        timetable.cancelDeadline(of: id)
        if !gate.isQuiet || gate.heldAttempts > 0 { _ = carryOut(gate.forget(id, now: now), now: now) }
        var task: (any TransportTask)?
        var sentRequest = urlRequest
        switch entry.phase {
        case .running(let runningTask, let runningRequest), .streaming(let runningTask, let runningRequest):
            task = runningTask
            sentRequest = sentRequest ?? runningRequest
        case .paused(let pausedRequest):
            sentRequest = sentRequest ?? pausedRequest
            refresh.forget(id)
        case .waiting, .preparing:
            break
        }
        // A body already under way says what the end means for it (a stream's ending).
        var result = entry.box.sink?.settle(result) ?? result
        var metrics = entry.metrics
        metrics.finishedAt = Date()
        // A made value carries its metrics from here on, for observers of a ``Reply``.
        if case .success(let success) = result, var made = success as? MadeValue {
            made.metrics = metrics
            result = .success(made)
        }
        let displaced = retention.ended(id, with: result, now: now)
        var claim = Claim(id: id, result: result, box: entry.box, urlRequest: sentRequest, task: task,
                          idObservers: entry.idObservers, typeObservers: typeObservers.active(for: entry.box.responseType),
                          completion: entry.completion, updateHandlers: entry.updateHandlers,
                          showedCachedValue: entry.showedCachedValue, temporaryFile: entry.temporaryFile, metrics: metrics,
                          progressObservers: progress.forget(id), displacedResult: displaced)
        // The next request of its lane may go now.
        if let lane = entry.lane, let next = lanes.end(id, in: lane), let nextEntry = entries[next] {
            admitDurable(next, nextEntry, now: now)
            claim.startsNext = admission.claimRun()
        }
        return claim
    }

    /// Ends at once every request for which `isIncluded` holds (all by default), oldest first.
    mutating func claimAll(result: AnyResult, now: UInt64, where isIncluded: (Entry) -> Bool = { _ in true }) -> [Claim] {
        entries.ids(where: isIncluded).compactMap { claim($0, result: result, urlRequest: nil, now: now) }
    }

    /// Marks a result as delivered; returns the observers that came while it was on its way.
    mutating func markDelivered(_ id: RequestID) -> [IDObserver] {
        retention.delivered(id)
    }

    // MARK: - Connectivity

    /// Lets an attempt go out, or holds it, paused and out of any slot, until the app resumes or
    /// its origin is back (``ConnectivityGate``); `waits` when it waits for the network. Returns
    /// false when it is held, or ended meanwhile: the caller gives its slot back.
    /// - Parameter deadline: When its timeout ends it while it waits (uptime, nanoseconds), if
    ///   it has none yet.
    mutating func admitToNetwork(_ attempt: Attempt, waits: Bool, deadline: UInt64?) -> Bool {
        guard let url = attempt.current.urlRequest.url, let origin = Connectivity.Origin(url),
              !gate.isProbe(attempt.id), !gate.admits(origin, waits: waits) else { return true }
        guard let entry = entries[attempt.id], pause(attempt) else { return false }
        if let deadline, !timetable.hasDeadline(attempt.id) { schedule(.deadline(attempt.id), at: deadline) }
        gate.hold(attempt, to: origin, waits: waits, added: entry.metrics.addedAt)
        return false
    }

    /// What the queue must do after a connectivity event, outside the lock.
    struct NetworkNews {
        /// Run the start loop: attempts that waited go again.
        var startRun = false
        /// Tell the resources: these origins, or the network (`nil`), came back.
        var cameBack: [Connectivity.Origin?] = []
    }

    /// Tells connectivity how a transfer of `id` to `url` ended.
    mutating func noteNetwork(_ outcome: ConnectivityGate.Outcome, of id: RequestID, to url: URL?, now: UInt64) -> NetworkNews {
        guard let url, let origin = Connectivity.Origin(url) else { return NetworkNews() }
        return carryOut(gate.note(outcome, origin: origin, id: id, now: now), now: now)
    }

    enum NetworkHold {
        /// Held until its origin or the network is back.
        case held
        /// Its origin came back meanwhile: it is first in line again; run the start loop if true.
        case again(startRun: Bool)
        /// It ended meanwhile.
        case ended
    }

    /// Holds a waiting request whose attempt found the network or its origin gone, instead of
    /// retrying it: not counted as an attempt.
    mutating func holdForNetwork(_ attempt: Attempt) -> NetworkHold {
        guard let entry = entries[attempt.id], pause(attempt) else { return .ended }
        guard let url = attempt.current.urlRequest.url, let origin = Connectivity.Origin(url),
              !gate.admits(origin, waits: true) else { return .again(startRun: resume(attempt)) }
        gate.hold(attempt, to: origin, waits: true, added: entry.metrics.addedAt)
        return .held
    }

    /// A probe's timer fired.
    mutating func probeTimerFired(_ target: Connectivity.Target, now: UInt64) -> NetworkNews {
        carryOut(gate.probeTimerFired(target, now: now), now: now)
    }

    /// The app's pause: no attempt starts until ``resumeNetwork(now:)``.
    mutating func pauseNetwork(now: UInt64) {
        _ = carryOut(gate.pause(), now: now)
    }

    mutating func resumeNetwork(now: UInt64) -> NetworkNews {
        carryOut(gate.resume(now: now), now: now)
    }

    func networkStatus(now: UInt64) -> NetworkStatus {
        gate.status(now: now)
    }

    mutating func watchNetwork(_ continuation: AsyncStream<NetworkStatus>.Continuation, token: UInt64, now: UInt64) {
        networkWatchers.add(continuation, token: token, current: gate.status(now: now))
    }

    mutating func unwatchNetwork(_ token: UInt64) {
        networkWatchers.remove(token)
    }

    /// The watchers, taken out for the queue's end.
    mutating func takeNetworkWatchers() -> [AsyncStream<NetworkStatus>.Continuation] {
        networkWatchers.takeAll()
    }

    /// Sets the gate's probe timers, puts the attempts it released first in line (oldest first)
    /// and tells the watchers of a change.
    private mutating func carryOut(_ step: ConnectivityGate.Step, now: UInt64) -> NetworkNews {
        for (target, due) in step.timers { schedule(.probe(target), at: due) }
        var news = NetworkNews(cameBack: step.cameBack)
        for attempt in step.released.reversed() { news.startRun = resume(attempt) || news.startRun }
        if step.statusChanged { networkWatchers.tell(gate.status(now: now)) }
        quiet.set(gate.isQuiet)
        return news
    }

    // MARK: - Observers

    enum ObserverRegistration {
        case registered
        case deliverNow(AnyResult)
    }

    /// Registers an ID observer, or returns what it must be told at once.
    mutating func addObserver(_ observer: @escaping IDObserver, for id: RequestID,
                              expecting type: ObjectIdentifier, typeName: () -> String, now: UInt64) -> ObserverRegistration {
        if let entry = entries[id] {
            // A durable request of an unregistered type ends with a failure any observer can take.
            guard entry.box.responseType == type || entry.box.responseType == ObjectIdentifier(UnregisteredResponseType.self) else {
                return .deliverNow(.failure(.responseTypeMismatch(expected: typeName(), actual: entry.box.responseTypeName)))
            }
            entry.idObservers.append(observer)
            return .registered
        }
        switch retention.observe(id, with: observer, now: now) {
        case .joined: return .registered
        case .kept(let result): return .deliverNow(result)
        case .unavailable: return .deliverNow(.failure(.resultUnavailable(id)))
        }
    }

    /// Notes that an active request's stored response is being shown before its result; returns
    /// who to show it to (its update observers, and the type observers that want updates), or nil
    /// when the request ended meanwhile.
    mutating func showCachedValue(_ id: RequestID) -> (handlers: [UpdateHandler], typeObservers: [TypeObserver])? {
        guard let entry = entries[id] else { return nil }
        entry.showedCachedValue = true
        return (entry.updateHandlers, typeObservers.active(for: entry.box.responseType).filter(\.wantsUpdates))
    }

    /// Adds a progress observer; false when the request is not active (it ended, or is unknown).
    mutating func addProgressObserver(_ observer: ProgressObserver, for id: RequestID, now: UInt64) -> Bool {
        guard entries[id] != nil else { return false }
        progress.watch(id, with: observer)
        schedule(.pollProgress, at: now &+ timing.progressPollInterval)
        return true
    }

    /// The running tasks whose progress is observed, with their observers; the next poll is
    /// scheduled while any are observed.
    mutating func pollProgress(now: UInt64) -> [(any TransportTask, [ProgressObserver])] {
        guard !progress.isEmpty else { return [] }
        schedule(.pollProgress, at: now &+ timing.progressPollInterval)
        let table = entries
        return progress.watched.compactMap { id, observers in
            guard let entry = table[id] else { return nil }
            let task: any TransportTask
            switch entry.phase {
            case .running(let running, _), .streaming(let running, _): task = running
            case .waiting, .preparing, .paused: return nil
            }
            return (task, observers)
        }
    }

    /// Adds an observer of every result of a response type, with the sweep of dead ones scheduled.
    mutating func addTypeObserver(_ observer: TypeObserver, for type: ObjectIdentifier, now: UInt64) {
        typeObservers.add(observer, for: type)
        schedule(.sweepObservers, at: now &+ UInt64(timing.sweepInterval * 1e9))
    }

    mutating func removeTypeObservers(type: ObjectIdentifier?, owner: AnyObject) {
        typeObservers.remove(type: type, owner: owner)
    }

    /// Drops type observers whose owner is gone, releasing their handlers; sweeps again later
    /// while any are left.
    mutating func sweepTypeObservers(now: UInt64) {
        typeObservers.sweep()
        if typeObservers.count > 0 { schedule(.sweepObservers, at: now &+ UInt64(timing.sweepInterval * 1e9)) }
    }

    // MARK: - Sizes, for tests

    /// Whether a request is between attempts: backing off, or waiting for credentials.
    func isPaused(_ id: RequestID) -> Bool {
        guard let entry = entries[id], case .paused = entry.phase else { return false }
        return true
    }

    /// How many attempts wait for the network or the app's resume (``ConnectivityGate``).
    var heldForNetwork: Int { gate.heldAttempts }

    /// How many type observers the queue holds, dead or alive.
    var typeObserverCount: Int { typeObservers.count }

    /// Sizes of the per-request tables, for tests that check they stay bounded.
    var bookkeeping: (active: Int, waiting: Int, undelivered: Int, recentResults: Int, deadlines: Int) {
        (entries.count, admission.waitingCount + deferredStart.count + lanes.waitingCount + gate.heldAttempts,
         retention.undeliveredCount, retention.keptCount, timetable.deadlines)
    }
}
