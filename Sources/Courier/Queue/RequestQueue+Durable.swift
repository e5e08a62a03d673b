import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Durable requests (#22): journaled before `addDurably` returns, resumed by the next queue opened
// on the same folder, one result each across restarts. The journal is written at four points:
// add (append), a retry (markAttempt), the end (recordResult, before observers are told), and
// once an observer got the result (DurableJournal.beginDelivery). A queue without durability never comes here.

extension RequestQueue {
    /// Opens a queue with a journal of durable requests, or says at once why the journal cannot
    /// be used; the requests an earlier run left pending are sent again, under their IDs.
    ///
    /// ```swift
    /// var configuration = RequestQueueConfiguration.default
    /// configuration.durability = Durability(folder: Durability.standardFolder(named: "api"),
    ///                                       responseTypes: [Message.self])
    /// let queue = try RequestQueue.open(configuration: configuration, baseURL: api)
    /// ```
    /// A static function rather than a throwing initializer: the queue's initializer does not
    /// throw (most queues touch no disk), and Swift cannot overload it on throwing alone. A queue
    /// made with ``init(configuration:delegate:baseURL:)`` and durability opens the journal too, but
    /// keeps the error to itself until ``addDurably(_:lane:key:)`` throws it.
    /// - Parameters:
    ///   - configuration: As for ``init(configuration:delegate:baseURL:)``, with
    ///     ``RequestQueueConfiguration/durability`` set (without it this is that initializer).
    ///   - delegate: Told about every step of every request. Default: `nil`.
    ///   - baseURL: What relative request paths are resolved against. Default: `nil`.
    /// - Throws: ``JournalError`` when the journal's folder cannot be created or written, another
    ///   queue or process holds it, or its file is damaged (nothing is replayed from it).
    public static func open(
        configuration: RequestQueueConfiguration,
        delegate: (any RequestQueueDelegate)? = nil,
        baseURL: URL? = nil
    ) throws(JournalError) -> RequestQueue {
        let queue = RequestQueue(configuration: configuration, delegate: delegate, baseURL: baseURL)
        if case .failure(let error) = queue.durable?.opened { throw error }
        return queue
    }

    /// Adds a request that survives the app's end: it is journaled to disk and flushed before
    /// this returns, then sent as ``add(_:priority:owner:)`` sends it, retried across failures
    /// and restarts until it has a final result or ``Durability/limits`` end it.
    ///
    /// ```swift
    /// let id = try queue.addDurably(SendMessage(text: "On my way"), lane: "chat-42")
    /// queue.addObserver(for: id) { (result: Result<Message, RequestError>) in … }
    /// ```
    /// Every attempt carries the same `Idempotency-Key` header (made once and journaled), so the
    /// server can tell a replay from a new write.
    ///
    /// Give the write a `key` of the app's own (a message's ID in the app's database, stored
    /// before it adds) when the app must add it again after a crash without knowing whether the
    /// first add went through: adding with a key the journal holds returns that request's ID
    /// and adds nothing, so the write goes out once. The key is the `Idempotency-Key` sent; a key
    /// the request sets in its own header fields counts as its `key`.
    /// ```swift
    /// let id = try queue.addDurably(SendMessage(text: draft.text), lane: "chat-42", key: draft.id.uuidString)
    /// ```
    /// The ID stays valid across restarts: an observer added for it in a later run gets the
    /// result (made into the type registered in ``Durability/responseTypes``), and once an
    /// observer got it the journal notes it as seen (a result being delivered when the app is
    /// killed is given again in the next run, under the same ID). Requests of one `lane` are sent
    /// one at a time, in the order they were added, also after a restart; other lanes and
    /// ordinary requests go on meanwhile.
    ///
    /// The journal keeps what the request's builder made (method, URL, header fields, body bytes
    /// or a copy of its body file); delegates and the authenticator run again for every attempt.
    /// After a restart, the request's own validation and decoding are those of its registered
    /// response type, with the queue's ``RequestQueueConfiguration/decoding``.
    /// - Parameters:
    ///   - request: The request.
    ///   - lane: The lane whose requests go one at a time, in order. Default: `nil`, none.
    ///   - key: The write's own key, which makes adding it again return its ID (while the journal
    ///     holds it: until its result was seen and purged). Default: `nil`, a key made by the queue.
    /// - Returns: The request's ID, a durable one (``RequestID/isDurable``); for a `key` the
    ///   journal holds already, the ID of the request added with it (its request and lane stand).
    /// - Throws: ``JournalError`` at once, with nothing sent: the queue has no durability
    ///   (``JournalError/Kind/notConfigured``), the request cannot be journaled (a body stream,
    ///   parameters that do not encode: ``JournalError/Kind/requestNotJournalable``), or the
    ///   journal cannot be written (disk full, read-only, bounds reached).
    @discardableResult
    public func addDurably<R: Request>(_ request: R, lane: String? = nil, key: String? = nil) throws(JournalError) -> RequestID {
        let journal = try configuredJournal()
        let box = RequestBox(request: request)
        let prepared: PreparedRequest
        do {
            prepared = try builder.prepare(request)
        } catch {
            throw JournalError(.requestNotJournalable, path: journal.path, detail: "its parameters cannot be encoded: \(error)")
        }
        defer { prepared.removeTemporaryFiles() }
        let journalRequest = try DurableRecord.journalRequest(prepared, lane: lane, responseType: box.responseTypeName,
                                                              path: journal.path)
        let id = RequestID.nextDurable()
        let ownKey = journalRequest.headerFields[DurableRecord.idempotencyKeyField]
        if let key, let ownKey, key != ownKey {
            throw JournalError(.requestNotJournalable, path: journal.path,
                               detail: "its key \(key.debugDescription) differs from its own Idempotency-Key \(ownKey.debugDescription)")
        }
        let appKey = key ?? ownKey
        if let appKey {
            do {
                guard !appKey.isEmpty else { throw RequestError.invalidHeader(name: DurableRecord.idempotencyKeyField, reason: "it is empty") }
                try HeaderValidator.validate(name: DurableRecord.idempotencyKeyField, value: appKey)
            } catch {
                throw JournalError(.requestNotJournalable, path: journal.path,
                                   detail: "its key \(appKey.debugDescription) cannot be sent as the Idempotency-Key: \(error)")
            }
        }
        let entry = try journal.append(journalRequest, requestID: String(id.rawValue), key: appKey)
        guard entry.requestID == String(id.rawValue) else {
            // Added before under this key: that request is the write.
            guard let raw = UInt64(entry.requestID), let existing = RequestID(durableRawValue: raw) else {
                throw JournalError(.corrupt, path: journal.path, detail: "the request with key \(appKey ?? "") has the ID \(entry.requestID)")
            }
            return existing
        }
        let record = DurableRecord(entry, timeout: prepared.urlRequest.timeoutInterval)
        let durableBox = DurableBox(record: record, live: box, maker: nil, responseTypeName: box.responseTypeName)
        if state.withLock({ $0.enqueueDurable(durableBox, id: id, lane: lane, now: Self.now()) }) { runStartLoop() }
        return id
    }

    /// The durable requests that have not ended, in the order they were added: this run's and
    /// those an earlier run left, whether waiting, under way or between attempts.
    ///
    /// ```swift
    /// for pending in try queue.pendingDurableRequests() {
    ///     print(pending.id, pending.lane ?? "-", pending.attempts)
    /// }
    /// ```
    /// Read from the journal, on the caller's thread (a query of the journal's file: not for
    /// every frame of an animation). Cancel one with ``cancel(_:)``: it ends, and leaves the journal.
    /// - Throws: ``JournalError`` when the queue has no durability
    ///   (``JournalError/Kind/notConfigured``) or the journal cannot be read.
    public func pendingDurableRequests() throws(JournalError) -> [PendingDurableRequest] {
        return try configuredJournal().pending().compactMap(PendingDurableRequest.init)
    }

    /// The journal of durable requests, for the public calls that need one.
    /// - Throws: ``JournalError/Kind/notConfigured`` without durability; the journal's error when
    ///   it cannot be opened.
    private func configuredJournal() throws(JournalError) -> Journal {
        guard let durable else {
            throw JournalError(.notConfigured, path: "", detail: "its configuration's durability is nil")
        }
        return try durable.journal()
    }

    /// Adds the requests an earlier run left pending, in the order they were added, under their IDs.
    func resumeDurableRequests(_ durable: DurableJournal) {
        let types = durable.durability.responseTypes
        for entry in durable.pendingAtOpen {
            let record = DurableRecord(entry, timeout: configuration.timeoutInterval)
            let typeName = entry.request.responseType
            let box = DurableBox(record: record, live: nil, maker: types[typeName], responseTypeName: typeName)
            guard let raw = UInt64(entry.requestID), let id = RequestID(durableRawValue: raw) else {
                // Not an ID a queue made: a journal written otherwise. Ended, never sent under a made-up ID.
                let failure = JournaledFailure(kind: .other, text: "its journal ID \(entry.requestID) is not a durable request ID")
                _ = try? durable.journal().recordResult(entry.requestID, .failure(failure.encoded))
                continue
            }
            if state.withLock({ $0.enqueueDurable(box, id: id, lane: entry.request.lane, now: Self.now()) }) { runStartLoop() }
        }
    }

    /// Records a durable request's final result in the journal, before anyone is told. When the
    /// journal cannot take it, the app is still told (it must get a result); the request then
    /// stays pending in the journal and is sent again, with its key, after a restart.
    func recordDurableResult(_ claim: QueueState.Claim, _ record: DurableRecord) {
        guard let journal = try? durable?.journal() else { return }
        _ = try? journal.recordResult(record.journalID, DurableJournal.outcome(of: claim.result))
    }

    /// Whether a durable attempt that failed is tried again: as the retry policy says (the
    /// queue's, or the default one), whatever its method, until the durability's attempts or age
    /// run out, counted across restarts. The attempt and the next one's time go to the journal.
    func retryDurably(_ attempt: Attempt, _ record: DurableRecord, failure: RetryPolicy.RetryableFailure) -> TimeInterval? {
        guard let durable, let journal = try? durable.journal() else { return nil }
        let limits = durable.durability.limits
        let policy = configuration.retryPolicy ?? .default
        let attempts = record.priorAttempts + attempt.number
        guard let delay = policy.delay(after: attempts, method: nil, failure: failure, anyMethod: true,
                                       attempts: limits.attempts) else { return nil }
        let next = Date().addingTimeInterval(delay)
        guard next < record.addedAt.addingTimeInterval(limits.age) else { return nil }
        do {
            try journal.markAttempt(record.journalID, nextAttemptAt: next)
        } catch {
            // Retried all the same: only the count a later run starts from is behind.
        }
        return delay
    }

    /// Gives a new type observer the journaled results of its type that no observer has seen
    /// (durable requests that ended in an earlier run, or in this one with nobody watching), and
    /// notes each as seen once the observer got it. Results this queue is delivering now are left
    /// to that delivery.
    func deliverJournaledResults(to observer: TypeObserver, typeName: String, in durable: DurableJournal) {
        let callbackQueue = configuration.callbackQueue
        let decoding = configuration.decoding
        let weakSelf = WeakRequestQueue(self)
        workQueue.async {
            guard let journal = try? durable.journal(), let kept = try? journal.results(undeliveredOnly: true) else { return }
            for result in kept {
                guard let raw = UInt64(result.requestID), let id = RequestID(durableRawValue: raw),
                      weakSelf.queue?.state.withLock({ $0.isFinished(id) }) ?? true,
                      let entry = try? journal.entry(result.requestID), entry.request.responseType == typeName else { continue }
                let ended = durable.beginDelivery(of: result.requestID)
                let made = durable.result(of: result.outcome, entry: entry, decoding: decoding)
                callbackQueue.async {
                    let active = observer.isActive
                    DeliveryScope.run {
                        observer.deliver(AnyUpdate(id: id, result: made, source: nil, isFinal: true, cachedValueStands: false))
                    }
                    ended(active && DurableJournal.gives(made))
                }
            }
        }
    }

    /// Gives an observer of a durable request that this queue no longer holds (one added before
    /// a restart, or ended long ago) its result from the journal, and notes it as delivered.
    func observeJournaledResult(of id: RequestID, in durable: DurableJournal, observer: @escaping IDObserver) {
        let callbackQueue = configuration.callbackQueue
        let decoding = configuration.decoding
        let journalID = String(id.rawValue)
        // Begun now, so that the journal outlives the queue until the result is noted as seen.
        let ended = durable.beginDelivery(of: journalID)
        workQueue.async {
            let result: AnyResult
            do throws(JournalError) {
                let journal = try durable.journal()
                if let kept = try journal.result(journalID) {
                    result = durable.result(of: kept.outcome, entry: try journal.entry(journalID), decoding: decoding)
                } else {
                    result = .failure(.resultUnavailable(id))
                }
            } catch {
                result = .failure(.failedBeforeRestart("its result cannot be read from the journal: \(error)"))
            }
            callbackQueue.async {
                DeliveryScope.run { observer(result) }
                ended(DurableJournal.gives(result))
            }
        }
    }
}
