import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Held answers: a test decides when each answer arrives, instead of ordering events by latency.

extension FixtureTransport {
    /// A request whose answer a ``FixtureTransport`` holds back until it is released.
    ///
    /// ```swift
    /// let held = try await fixtures.waitForHeldRequests(2)
    /// print(held[0])              // GET /v1/users/42 (held #1)
    /// fixtures.release(held[1])   // the second request is answered first
    /// ```
    /// Two values are equal when they stand for the same held request of the same transport.
    public struct HeldRequest: Sendable, Hashable, CustomStringConvertible {
        /// The request as sent (after delegates and the authenticator).
        public let request: URLRequest
        /// Its place among the requests this transport has held: 1 for the first.
        public let number: Int
        /// Tells apart the held requests of different transports.
        let holder: ObjectIdentifier

        /// The method, path and query, and the number, as in `GET /v1/users/42 (held #1)`.
        public var description: String {
            "\(FixtureMatch(request: request, body: nil).summary) (held #\(number))"
        }

        public static func == (lhs: HeldRequest, rhs: HeldRequest) -> Bool {
            lhs.number == rhs.number && lhs.holder == rhs.holder
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(number)
            hasher.combine(holder)
        }
    }

    /// Whether answers are held back until ``release(_:)`` or ``releaseAll()``, so that a test
    /// decides when each one arrives. Default: `false`.
    ///
    /// ```swift
    /// fixtures.holdsAnswers = true
    /// let id = queue.add(ProfileRequest(userID: 42))
    /// try fixtures.waitForHeldRequests(1)     // the request is in flight, and stays so
    /// queue.cancel(id)                        // ends it as cancelled; it leaves heldRequests
    /// ```
    /// Setting `true` holds every request sent from then on; setting `false` holds none from then
    /// on (it also ends a rule given to ``holdAnswers(where:)``). Requests already held stay held
    /// until they are released or cancelled. `true` while any rule holds answers.
    ///
    /// A held request has not started: its ``latency``, its fixture's ``Fixture/delay`` and its
    /// simulated transfer start when it is released, and its progress shows nothing moved.
    /// A held request that is cancelled, or that times out, ends at once as it would on the
    /// network. Answers released one after the other reach the queue one at a time, in the order
    /// they were released.
    public var holdsAnswers: Bool {
        get { holds.holdsAnswers }
        set {
            let everything: @Sendable (URLRequest) -> Bool = { _ in true }
            holds.holdAnswers(where: newValue ? everything : nil)
        }
    }

    /// Holds back the answers to the requests `isHeld` picks, from now on, until they are
    /// released; other requests are answered as usual.
    ///
    /// ```swift
    /// fixtures.holdAnswers { $0.url?.path.hasSuffix("/reports/latest") == true }
    /// ```
    /// `isHeld` sees each request as sent, and may run on any thread. It replaces any earlier
    /// rule; `holdsAnswers = false` ends it. See ``holdsAnswers`` for what holding means.
    public func holdAnswers(where isHeld: @escaping @Sendable (URLRequest) -> Bool) {
        holds.holdAnswers(where: isHeld)
    }

    /// The requests whose answers are held, in the order they arrived.
    ///
    /// ```swift
    /// XCTAssertEqual(fixtures.heldRequests.map(\.request.url?.path), ["/v1/users/42"])
    /// ```
    public var heldRequests: [HeldRequest] {
        holds.heldRequests
    }

    /// Lets the answer to `held` go: the request is answered from its fixture (or fails with
    /// ``RequestError/noFixture(request:nearest:)``) as if it had just arrived.
    ///
    /// ```swift
    /// let held = try fixtures.waitForHeldRequests(2)
    /// fixtures.release(held[1])   // answer the second before the first
    /// fixtures.release(held[0])
    /// ```
    /// - Returns: `false` when `held` is no longer held: released already, or cancelled.
    @discardableResult
    public func release(_ held: HeldRequest) -> Bool {
        holds.release(held)
    }

    /// Lets every held answer go, in the order the requests arrived.
    ///
    /// ```swift
    /// fixtures.holdsAnswers = false   // what is sent from now on is answered at once
    /// fixtures.releaseAll()
    /// ```
    /// - Returns: The requests released.
    @discardableResult
    public func releaseAll() -> [HeldRequest] {
        holds.releaseAll()
    }

    /// Blocks until at least `count` requests are held, so that a test waits for an event
    /// rather than for time.
    ///
    /// ```swift
    /// fixtures.holdsAnswers = true
    /// queue.add(ThumbnailRequest(id: 7))
    /// queue.add(ThumbnailRequest(id: 8))
    /// let held = try fixtures.waitForHeldRequests(2)   // both are in flight
    /// ```
    /// - Returns: The held requests at that moment, in the order they arrived.
    /// - Throws: ``FixtureError/heldRequestsTimedOut(expected:held:after:)`` when fewer are held
    ///   after `timeout` seconds (default 10).
    @available(*, noasync, message: "use 'try await waitForHeldRequests(_:timeout:)', which does not block a thread")
    @discardableResult
    public func waitForHeldRequests(_ count: Int, timeout: TimeInterval = 10) throws -> [HeldRequest] {
        let signal = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<[HeldRequest], any Error>?>(nil)
        let waiter = holds.addWaiter(count: count) { result in
            outcome.withLock { $0 = result }
            signal.signal()
        }
        if signal.wait(timeout: .now() + max(0, timeout)) == .timedOut {
            holds.timeOut(waiter, count: count, after: timeout)
            signal.wait()
        }
        return try outcome.withLock { $0! }.get()
    }

    /// Waits, without blocking a thread, until at least `count` requests are held.
    ///
    /// ```swift
    /// fixtures.holdsAnswers = true
    /// let task = Task { try await queue.send(ProfileRequest(userID: 42)) }
    /// try await fixtures.waitForHeldRequests(1)   // the request is in flight
    /// ```
    /// - Returns: The held requests at that moment, in the order they arrived.
    /// - Throws: ``FixtureError/heldRequestsTimedOut(expected:held:after:)`` when fewer are held
    ///   after `timeout` seconds (default 10); `CancellationError` when the task is cancelled.
    @discardableResult
    public func waitForHeldRequests(_ count: Int, timeout: TimeInterval = 10) async throws -> [HeldRequest] {
        let holds = self.holds
        let waiter = holds.reserveWaiter()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                holds.addWaiter(waiter, count: count) { continuation.resume(with: $0) }
                if Task.isCancelled { holds.fail(waiter, with: CancellationError()) }
                DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) {
                    holds.timeOut(waiter, count: count, after: timeout)
                }
            }
        } onCancel: {
            holds.fail(waiter, with: CancellationError())
        }
    }
}

/// The held answers of one ``FixtureTransport``, and the tests waiting for them.
final class AnswerHolds: Sendable {
    typealias HeldRequest = FixtureTransport.HeldRequest
    typealias WaiterResult = Result<[HeldRequest], any Error>

    private struct Entry {
        let held: HeldRequest
        let task: ObjectIdentifier
        /// Starts the answer on its way.
        let answer: @Sendable () -> Void
    }

    private struct Waiter {
        let number: Int
        let count: Int
        let resume: @Sendable (WaiterResult) -> Void
    }

    private struct State {
        var rule: (@Sendable (URLRequest) -> Bool)?
        var entries: [Entry] = []
        var heldSoFar = 0
        var waiters: [Waiter] = []
        var waitersSoFar = 0

        /// Takes out the waiters that have as many held requests as they wait for.
        mutating func satisfiedWaiters() -> [(Waiter, [HeldRequest])] {
            let held = entries.map(\.held)
            let ready = waiters.filter { $0.count <= held.count }
            waiters.removeAll { $0.count <= held.count }
            return ready.map { ($0, held) }
        }
    }

    private let state = Locked(State())
    /// Released answers go out from here, one at a time, in the order they were released.
    let releases = DispatchQueue(label: "Courier.FixtureTransport.releases")

    var holdsAnswers: Bool {
        state.withLock { $0.rule != nil }
    }

    func holdAnswers(where rule: (@Sendable (URLRequest) -> Bool)?) {
        state.withLock { $0.rule = rule }
    }

    var heldRequests: [HeldRequest] {
        state.withLock { $0.entries.map(\.held) }
    }

    /// Whether the test's rule holds `request`. Runs the rule, so never call it inside a lock.
    func wantsHeld(_ request: URLRequest) -> Bool {
        guard let rule = state.withLock({ $0.rule }) else { return false }
        return rule(request)
    }

    /// Holds `request` of `task`; `answer` starts it on its way when it is released. Returns what
    /// to run once the caller's own lock is unlocked: it wakes the waiters this hold satisfies.
    func hold(_ request: URLRequest, task: ObjectIdentifier,
              answer: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let ready = state.withLock { state in
            state.heldSoFar += 1
            let held = HeldRequest(request: request, number: state.heldSoFar, holder: ObjectIdentifier(self))
            state.entries.append(Entry(held: held, task: task, answer: answer))
            return state.satisfiedWaiters()
        }
        return { for (waiter, held) in ready { waiter.resume(.success(held)) } }
    }

    /// Forgets the held request of `task` (cancelled), without answering it.
    func drop(_ task: ObjectIdentifier) {
        state.withLock { $0.entries.removeAll { $0.task == task } }
    }

    func release(_ held: HeldRequest) -> Bool {
        let entry = state.withLock { state -> Entry? in
            guard let index = state.entries.firstIndex(where: { $0.held == held }) else { return nil }
            return state.entries.remove(at: index)
        }
        entry?.answer()
        return entry != nil
    }

    func releaseAll() -> [HeldRequest] {
        let entries = state.withLock { state in
            defer { state.entries = [] }
            return state.entries
        }
        for entry in entries { entry.answer() }
        return entries.map(\.held)
    }

    /// A number for a waiter that is added later, so that it can be cancelled before it is added.
    func reserveWaiter() -> Int {
        state.withLock { state in
            state.waitersSoFar += 1
            return state.waitersSoFar
        }
    }

    /// Calls `resume` once, with the held requests as soon as at least `count` are held (at once
    /// when they are), or with an error from ``fail(_:with:)`` or ``timeOut(_:count:after:)``.
    @discardableResult
    func addWaiter(_ number: Int? = nil, count: Int, resume: @escaping @Sendable (WaiterResult) -> Void) -> Int {
        let number = number ?? reserveWaiter()
        let ready = state.withLock { state in
            state.waiters.append(Waiter(number: number, count: count, resume: resume))
            return state.satisfiedWaiters()
        }
        for (waiter, held) in ready { waiter.resume(.success(held)) }
        return number
    }

    /// Ends a waiter with `error`, unless it has ended already.
    func fail(_ number: Int, with error: any Error) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.number == number }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.resume(.failure(error))
    }

    /// Ends a waiter that waited `timeout` seconds in vain, naming what is held.
    func timeOut(_ number: Int, count: Int, after timeout: TimeInterval) {
        let held = heldRequests.map(\.description)
        fail(number, with: FixtureError.heldRequestsTimedOut(expected: count, held: held, after: timeout))
    }
}
