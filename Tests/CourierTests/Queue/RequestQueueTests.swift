import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import XCTest
@testable import Courier

/// The queue's semantics, against a stub transport: no network.
final class RequestQueueTests: XCTestCase {

    // MARK: - Results

    func testDecodableResponseReachesIDObserver() throws {
        // Given a server that answers with JSON
        let transport = StubTransport { _ in .json(#"{"message":"hello"}"#) }
        let queue = makeQueue(transport: transport)

        // When a request is added and observed by ID
        let id = queue.add(PathRequest<Greeting>("/greeting"))
        let result = try XCTUnwrap(self.result(of: id, on: queue, as: Greeting.self))

        // Then the observer gets the decoded response, and the URL was resolved against the base URL
        XCTAssertEqual(try result.get(), Greeting(message: "hello"))
        XCTAssertEqual(transport.started.map { $0.url?.absoluteString }, ["https://api.example.com/v1/greeting"])
        XCTAssertEqual(transport.started.first?.httpMethod, "GET")
    }

    func testObserverAddedAfterFinishGetsKeptResult() async throws {
        // Given a request that has already finished
        let transport = StubTransport { _ in .json(#"{"message":"late"}"#) }
        let queue = makeQueue(transport: transport)
        let id = queue.add(PathRequest<Greeting>("/greeting"))
        let finished = expectation(description: "first observer")
        queue.addObserver(for: id) { (_: Result<Greeting, RequestError>) in finished.fulfill() }
        await fulfillment(of: [finished], timeout: 30)
        TestQueues.callbacks.sync {}   // the delivery block, which marks it finished, has ended
        XCTAssertTrue(queue.isFinished(id))
        XCTAssertEqual(transport.started.count, 1)

        // When an observer is added only now
        let delivered = expectation(description: "late observer")
        let results = Recorder<Result<Greeting, RequestError>>()
        queue.addObserver(for: id) { (result: Result<Greeting, RequestError>) in
            results.append(result)
            delivered.fulfill()
        }
        await fulfillment(of: [delivered], timeout: 30)

        // Then it still gets the result, once
        TestQueues.callbacks.sync {}
        XCTAssertEqual(results.count, 1)
        XCTAssertEqual(try results.all.first?.get(), Greeting(message: "late"))
    }

    func testEvictedResultIsReportedUnavailable() async throws {
        // Given a queue that keeps only one finished result
        let transport = StubTransport { _ in .json(#"{"message":"x"}"#) }
        let queue = makeQueue(transport: transport, retentionCount: 1)
        let first = queue.add(PathRequest<Greeting>("/one"))
        let firstDone = expectation(description: "first result")
        queue.addObserver(for: first) { (_: Result<Greeting, RequestError>) in firstDone.fulfill() }
        await fulfillment(of: [firstDone], timeout: 30)
        TestQueues.callbacks.sync {}   // its delivery has ended: from now on its result is only kept, and can be evicted
        _ = try await queue.send(PathRequest<Greeting>("/two"))

        // When an observer asks for the evicted result
        let unavailable = expectation(description: "late observer")
        let late = Recorder<Result<Greeting, RequestError>>()
        queue.addObserver(for: first) { (result: Result<Greeting, RequestError>) in late.append(result); unavailable.fulfill() }
        await fulfillment(of: [unavailable], timeout: 30)
        let result = try XCTUnwrap(late.all.first)

        // Then it is told so, rather than waiting forever
        guard case .failure(.resultUnavailable(let id)) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(id, first)
        XCTAssertTrue(String(describing: RequestError.resultUnavailable(id)).contains("\(first)"))
    }

    func testValidationFailureCarriesStatusAndBody() throws {
        // Given a server that answers 404 with a body
        let transport = StubTransport { _ in .status(404, body: Data("no such user".utf8)) }
        let queue = makeQueue(transport: transport)

        // When a request is observed
        let id = queue.add(PathRequest<Greeting>("/users/7"))
        let result = try XCTUnwrap(self.result(of: id, on: queue, as: Greeting.self))

        // Then it fails validation with the status and the body, and says the status
        guard case .failure(let error) = result, case .validationFailed(let response, let body) = error else {
            return XCTFail("expected a validation failure, got \(result)")
        }
        XCTAssertEqual(response.statusCode, 404)
        XCTAssertEqual(body.string, "no such user")
        XCTAssertEqual(error.statusCode, 404)
        XCTAssertTrue(error.description.contains("status 404"), error.description)
        XCTAssertTrue(error.description.contains("no such user"), error.description)
    }

    func testMalformedJSONNamesTypeAndPath() throws {
        // Given a body whose field has the wrong type
        let transport = StubTransport { _ in .json(#"{"message": 12}"#) }
        let queue = makeQueue(transport: transport)

        // When it is decoded
        let id = queue.add(PathRequest<Greeting>("/greeting"))
        let result = try XCTUnwrap(self.result(of: id, on: queue, as: Greeting.self))

        // Then the error names the type and the coding path
        guard case .failure(let error) = result, case .serializationFailed(let type, _) = error else {
            return XCTFail("expected a serialisation failure, got \(result)")
        }
        XCTAssertTrue(type.hasSuffix("Greeting"), type)
        XCTAssertTrue(error.description.contains("Greeting"), error.description)
        XCTAssertTrue(error.description.contains("message"), error.description)
    }

    func testEmptyResponseAcceptsNoContent() throws {
        let transport = StubTransport { _ in .status(204) }
        let queue = makeQueue(transport: transport)
        let id = queue.add(PathRequest<EmptyResponse>("/ping", method: .head))
        let result = try XCTUnwrap(self.result(of: id, on: queue, as: EmptyResponse.self))
        XCTAssertEqual(try result.get(), EmptyResponse())
    }

    func testTransportErrorsMapToTypedErrors() throws {
        // Given a transport that fails in three ways
        let transport = StubTransport { request in
            switch request.url?.path {
            case "/v1/refused": .failure(.cannotConnectToHost)
            case "/v1/slow": .failure(.timedOut)
            default: .failure(.cancelled)
            }
        }
        let queue = makeQueue(transport: transport)

        // When requests fail on the wire
        let refused = try XCTUnwrap(result(of: queue.add(PathRequest<EmptyResponse>("/refused")), on: queue, as: EmptyResponse.self))
        let slow = try XCTUnwrap(result(of: queue.add(PathRequest<EmptyResponse>("/slow")), on: queue, as: EmptyResponse.self))
        let cancelled = try XCTUnwrap(result(of: queue.add(PathRequest<EmptyResponse>("/other")), on: queue, as: EmptyResponse.self))

        // Then each gets its own error kind
        guard case .failure(.transportFailed(let urlError)) = refused else { return XCTFail("got \(refused)") }
        XCTAssertEqual(urlError.code, .cannotConnectToHost)
        XCTAssertTrue(RequestError.transportFailed(urlError).description.contains("cannot connect"))
        guard case .failure(.timedOut) = slow else { return XCTFail("got \(slow)") }
        guard case .failure(.cancelled) = cancelled else { return XCTFail("got \(cancelled)") }
    }

    func testRelativePathWithoutBaseURLFailsClearly() throws {
        // Given a queue without a base URL
        let transport = StubTransport()
        let queue = makeQueue(transport: transport, baseURL: nil)

        // When a request has a relative path
        let id = queue.add(PathRequest<EmptyResponse>("/login"))
        let result = try XCTUnwrap(self.result(of: id, on: queue, as: EmptyResponse.self))

        // Then it fails with invalidURL, and nothing was sent
        guard case .failure(.invalidURL(let text, let reason)) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(text, "/login")
        XCTAssertTrue(reason.contains("no base URL"), reason)
        XCTAssertTrue(transport.started.isEmpty)
    }

    func testObserverOfWrongTypeIsTold() throws {
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        let id = queue.add(PathRequest<Greeting>("/greeting"))
        let result = try XCTUnwrap(self.result(of: id, on: queue, as: EmptyResponse.self))
        guard case .failure(.responseTypeMismatch(let expected, let actual)) = result else { return XCTFail("got \(result)") }
        XCTAssertTrue(expected.hasSuffix("EmptyResponse"), expected)
        XCTAssertTrue(actual.hasSuffix("Greeting"), actual)
        queue.cancel(id)
    }

    // MARK: - Exactly once

    func testEveryObserverGetsEachResultOnce() throws {
        // Given two ID observers and two type observers for one request
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        let owner1 = ObserverOwner(), owner2 = ObserverOwner()
        let calls = Recorder<String>()
        let done = expectation(description: "four deliveries")
        done.expectedFulfillmentCount = 4
        let id = queue.add(PathRequest<Greeting>("/greeting"))
        for name in ["id-a", "id-b"] {
            queue.addObserver(for: id) { (_: Result<Greeting, RequestError>) in calls.append(name); done.fulfill() }
        }
        for (name, owner) in [("type-a", owner1), ("type-b", owner2)] {
            queue.addObserver(ownedBy: owner) { (_: Result<Greeting, RequestError>) in calls.append(name); done.fulfill() }
        }
        XCTAssertTrue(transport.waitForStarts(1))

        // When the response arrives, and the request is then cancelled
        transport.releaseOldest(with: .json(#"{"message":"hi"}"#))
        wait(for: [done], timeout: 30)
        queue.cancel(id)
        let flushed = expectation(description: "work and callbacks flushed")
        queue.addObserver(for: queue.add(PathRequest<EmptyResponse>("/x"))) { (_: Result<EmptyResponse, RequestError>) in flushed.fulfill() }
        transport.releaseOldest()
        XCTAssertTrue(transport.waitForStarts(1))
        transport.releaseOldest()
        wait(for: [flushed], timeout: 30)
        TestQueues.callbacks.sync {}

        // Then each observer was called exactly once, and cancelling afterwards changed nothing
        XCTAssertEqual(calls.all.sorted(), ["id-a", "id-b", "type-a", "type-b"])
        withExtendedLifetime((owner1, owner2)) {}
    }

    func testManyThreadsGetUniqueIncreasingIDsAndOneResultEach() throws {
        // Given a queue answering at once
        let transport = StubTransport { _ in .status(200) }
        let queue = makeQueue(transport: transport, maxConcurrent: 16)
        let perThread = 250
        let ids = Locked<[[RequestID]]>(Array(repeating: [], count: 8))
        let results = Locked<[RequestID: Int]>([:])
        let done = expectation(description: "all results")
        done.expectedFulfillmentCount = 8 * perThread

        // When 8 threads add and observe at once
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<perThread {
                // Distinct paths: identical GETs would share transfers (SharedTransfersTests).
                let id = queue.add(PathRequest<EmptyResponse>("/n/\(thread)/\(index)"))
                ids.withLock { $0[thread].append(id) }
                queue.addObserver(for: id) { (_: Result<EmptyResponse, RequestError>) in
                    results.withLock { $0[id, default: 0] += 1 }
                    done.fulfill()
                }
            }
        }
        wait(for: [done], timeout: 30)
        TestQueues.callbacks.sync {}

        // Then IDs are unique, increase on each thread, and each got exactly one result
        let all = ids.withLock { $0 }
        for list in all { XCTAssertEqual(list, list.sorted()) }
        XCTAssertEqual(Set(all.joined()).count, 8 * perThread)
        let counts = results.withLock { $0 }
        XCTAssertEqual(counts.count, 8 * perThread)
        XCTAssertTrue(counts.values.allSatisfy { $0 == 1 })
        XCTAssertEqual(transport.started.count, 8 * perThread)
    }

    // MARK: - Cancelling

    func testCancelledWaitingRequestNeverReachesTheNetwork() throws {
        // Given one slot, taken by a held request
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport, maxConcurrent: 1)
        let first = queue.add(PathRequest<EmptyResponse>("/first"))
        XCTAssertTrue(transport.waitForStarts(1))
        let waiting = queue.add(PathRequest<EmptyResponse>("/waiting"))
        let third = queue.add(PathRequest<EmptyResponse>("/third"))

        // When the waiting request is cancelled, and the first one finishes
        queue.cancel(waiting)
        let cancelled = try XCTUnwrap(result(of: waiting, on: queue, as: EmptyResponse.self))
        transport.releaseOldest()
        XCTAssertTrue(transport.waitForStarts(1))

        // Then it ended as cancelled and only the others were sent
        guard case .failure(.cancelled) = cancelled else { return XCTFail("got \(cancelled)") }
        XCTAssertEqual(transport.started.map { $0.url?.path }, ["/v1/first", "/v1/third"])
        transport.releaseOldest()
        XCTAssertNotNil(result(of: third, on: queue, as: EmptyResponse.self))
        XCTAssertTrue(queue.isFinished(first))
    }

    func testCancelInFlightStopsTheTaskAndDeliversOnce() throws {
        // Given a request in flight
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        let id = queue.add(PathRequest<EmptyResponse>("/slow"))
        XCTAssertTrue(transport.waitForStarts(1))
        let results = Recorder<Result<EmptyResponse, RequestError>>()
        let done = expectation(description: "cancelled")
        queue.addObserver(for: id) { (result: Result<EmptyResponse, RequestError>) in results.append(result); done.fulfill() }

        // When it is cancelled (twice)
        queue.cancel(id)
        queue.cancel(id)
        wait(for: [done], timeout: 30)
        TestQueues.callbacks.sync {}

        // Then the task was stopped, and the observer heard `.cancelled` once
        XCTAssertEqual(transport.heldCount, 0)
        XCTAssertEqual(results.count, 1)
        guard case .failure(.cancelled)? = results.all.first else { return XCTFail("got \(results.all)") }
        XCTAssertTrue(queue.isFinished(id))
    }

    func testQueueEnforcesTimeoutsAndStopsTheTask() throws {
        // Given two requests the server never answers, with short timeouts
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        // (The queue's deadlines are on the monotonic uptime clock, and so is this measure.)
        let start = DispatchTime.now().uptimeNanoseconds
        let slow = queue.add(PathRequest<EmptyResponse>("/slow", timeout: 0.2))
        let slower = queue.add(PathRequest<EmptyResponse>("/slower", timeout: 0.4))
        let unlimited = queue.add(PathRequest<EmptyResponse>("/unlimited", timeout: .infinity))

        // Then each ends as timed out at its own deadline, and its task is stopped
        let first = try XCTUnwrap(result(of: slow, on: queue, as: EmptyResponse.self))
        let second = try XCTUnwrap(result(of: slower, on: queue, as: EmptyResponse.self))
        guard case .failure(.timedOut) = first, case .failure(.timedOut) = second else {
            return XCTFail("got \(first) and \(second)")
        }
        // A lower bound only: a deadline cannot pass early, however slow the machine.
        XCTAssertGreaterThanOrEqual(DispatchTime.now().uptimeNanoseconds - start, 400_000_000)
        XCTAssertEqual(transport.heldCount, 1)
        XCTAssertFalse(queue.isFinished(unlimited))
        queue.cancel(unlimited)
    }

    func testObserverAddedWhileDelegatesRunStillComesAfterThem() throws {
        // Given a delegate that is slow to hear about a cancellation
        let log = Recorder<String>()
        let release = DispatchSemaphore(value: 0), entered = DispatchSemaphore(value: 0)
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport, delegate: SlowFailureDelegate(log: log, entered: entered, release: release))
        let id = queue.add(PathRequest<EmptyResponse>("/x"))
        XCTAssertTrue(transport.waitForStarts(1))

        // When the request is cancelled and observed while the delegate still runs (it has said
        // so, and waits for the test)
        queue.cancel(id)
        XCTAssertEqual(entered.wait(timeout: .now() + 30), .success, "the delegate heard of the cancel")
        let delivered = expectation(description: "observer")
        queue.addObserver(for: id) { (_: Result<EmptyResponse, RequestError>) in log.append("observer"); delivered.fulfill() }
        XCTAssertFalse(queue.isFinished(id))
        release.signal()
        wait(for: [delivered], timeout: 30)

        // Then the observer still came after the delegate, and only then is the request finished
        XCTAssertEqual(log.all, ["delegate", "observer"])
        TestQueues.callbacks.sync {}
        XCTAssertTrue(queue.isFinished(id))
    }

    func testIsFinishedUntilDelivered() throws {
        // Given a held request
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        let id = queue.add(PathRequest<EmptyResponse>("/x"))

        // Then it is not finished until its result was handed to observers
        XCTAssertFalse(queue.isFinished(id))
        XCTAssertTrue(transport.waitForStarts(1))
        XCTAssertFalse(queue.isFinished(id))
        let gate = DispatchSemaphore(value: 0)
        // Hold the callback queue until the gate opens (bounded, so that a failure cannot hang the suite).
        TestQueues.callbacks.async { _ = gate.wait(timeout: .now() + 60) }
        let delivered = expectation(description: "delivered")
        queue.addObserver(for: id) { (_: Result<EmptyResponse, RequestError>) in delivered.fulfill() }
        transport.releaseOldest()
        XCTAssertFalse(queue.isFinished(id), "finished before its observer ran")
        gate.signal()
        wait(for: [delivered], timeout: 30)
        TestQueues.callbacks.sync {}
        XCTAssertTrue(queue.isFinished(id))
    }

    // MARK: - Concurrency limit

    func testConcurrencyLimitHoldsRequestsInOrder() throws {
        // Given a limit of 2
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport, maxConcurrent: 2)

        // When 5 requests are added
        let ids = (1...5).map { queue.add(PathRequest<EmptyResponse>("/r\($0)")) }
        XCTAssertTrue(transport.waitForStarts(2))

        // Then 2 start, and each one that ends lets the next in, first in first out
        XCTAssertEqual(transport.heldCount, 2)
        for _ in 0..<3 {
            transport.releaseOldest()
            XCTAssertTrue(transport.waitForStarts(1))
            XCTAssertLessThanOrEqual(transport.heldCount, 2)
        }
        XCTAssertEqual(transport.started.map { $0.url!.path }, ["/v1/r1", "/v1/r2", "/v1/r3", "/v1/r4", "/v1/r5"])
        while transport.releaseOldest() != nil {}
        for id in ids { XCTAssertNotNil(result(of: id, on: queue, as: EmptyResponse.self)) }
    }

    // MARK: - Type observers

    func testTypeObserversAreKeyedByTypeNotName() throws {
        enum A { struct Reply: Response, Decodable { let message: String } }
        enum B { struct Reply: Response, Decodable { let message: String } }
        let transport = StubTransport { _ in .json(#"{"message":"m"}"#) }
        let queue = makeQueue(transport: transport)
        let owner = ObserverOwner()
        let calls = Recorder<String>()
        let gotA = expectation(description: "A")
        queue.addObserver(ownedBy: owner) { (_: Result<A.Reply, RequestError>) in calls.append("A"); gotA.fulfill() }
        queue.addObserver(ownedBy: owner) { (_: Result<B.Reply, RequestError>) in calls.append("B") }

        XCTAssertNotNil(result(of: queue.add(PathRequest<A.Reply>("/a")), on: queue, as: A.Reply.self))
        wait(for: [gotA], timeout: 30)
        TestQueues.callbacks.sync {}
        XCTAssertEqual(calls.all, ["A"])
        withExtendedLifetime(owner) {}
    }

    func testReleasedOwnerStopsObservingAndItsHandlerIsFreed() throws {
        // Given a type observer whose handler holds a canary
        let transport = StubTransport { _ in .json(#"{"message":"m"}"#) }
        let queue = makeQueue(transport: transport)
        let freed = expectation(description: "handler released")
        let called = Recorder<Int>()
        var owner: ObserverOwner? = ObserverOwner()
        do {
            let canary = Canary { freed.fulfill() }
            queue.addObserver(ownedBy: owner!) { (_: Result<Greeting, RequestError>) in
                withExtendedLifetime(canary) { called.append(1) }
            }
        }
        XCTAssertEqual(queue.typeObserverCount, 1)

        // When the owner goes, and the queue sweeps (no response of that type needed)
        owner = nil
        queue.sweepDeadObservers()

        // Then the handler's memory is released and a later response does not call it
        wait(for: [freed], timeout: 30)
        XCTAssertEqual(queue.typeObserverCount, 0)
        XCTAssertNotNil(result(of: queue.add(PathRequest<Greeting>("/g")), on: queue, as: Greeting.self))
        TestQueues.callbacks.sync {}
        XCTAssertEqual(called.count, 0)
    }

    func testDeadObserversAreSweptWithoutAnyActivity() throws {
        // Given a queue that sweeps every 50 ms, and an observer whose owner goes away
        let queue = makeQueue(transport: StubTransport(), sweepInterval: 0.05)
        let freed = expectation(description: "handler released by the periodic sweep")
        var owner: ObserverOwner? = ObserverOwner()
        do {
            let canary = Canary { freed.fulfill() }
            queue.addObserver(ownedBy: owner!) { (_: Result<Greeting, RequestError>) in withExtendedLifetime(canary) {} }
        }
        owner = nil
        // Then the periodic sweep frees it, with no request at all
        wait(for: [freed], timeout: 30)
        XCTAssertNil(owner)
    }

    func testRemoveObserversForTypeAndOwner() throws {
        let transport = StubTransport { _ in .json(#"{"message":"m"}"#) }
        let queue = makeQueue(transport: transport)
        let owner = ObserverOwner(), other = ObserverOwner()
        let calls = Recorder<String>()
        let otherCalled = expectation(description: "other owner still observes")
        queue.addObserver(ownedBy: owner) { (_: Result<Greeting, RequestError>) in calls.append("removed") }
        queue.addObserver(ownedBy: other) { (_: Result<Greeting, RequestError>) in calls.append("kept"); otherCalled.fulfill() }

        queue.removeObservers(forType: Greeting.self, ownedBy: owner)
        XCTAssertNotNil(result(of: queue.add(PathRequest<Greeting>("/g")), on: queue, as: Greeting.self))
        wait(for: [otherCalled], timeout: 30)
        TestQueues.callbacks.sync {}
        XCTAssertEqual(calls.all, ["kept"])
        withExtendedLifetime((owner, other)) {}
    }

    // MARK: - Delegates

    func testDelegatesRunInOrderAndWillSendChangesTheWire() throws {
        // Given delegates on the queue, the request and the response that log every step
        let log = Recorder<String>()
        let transport = StubTransport { _ in .json(#"{"message":"m"}"#) }
        let queue = makeQueue(transport: transport, delegate: LoggingDelegate(log: log))
        let request = LoggedRequest(log: log)
        LoggedResponse.log.withLock { $0 = log }
        defer { LoggedResponse.log.withLock { $0 = nil } }

        // When the request runs
        let id = queue.add(request)
        let delivered = expectation(description: "observer")
        queue.addObserver(for: id) { (_: Result<LoggedResponse, RequestError>) in log.append("observer"); delivered.fulfill() }
        wait(for: [delivered], timeout: 30)

        // Then the steps come in the documented order, and willSend's changes went on the wire
        XCTAssertEqual(log.all, [
            "queue.willSend", "request.willSend", "queue.didSend", "request.didSend",
            "queue.didReceive 200", "response.didReceive", "observer",
        ])
        let sent = try XCTUnwrap(transport.started.first)
        XCTAssertEqual(sent.value(forHTTPHeaderField: "X-Queue"), "1")
        XCTAssertEqual(sent.value(forHTTPHeaderField: "X-Request"), "2")
        XCTAssertEqual(sent.url?.absoluteString, "https://api.example.com/v1/logged?signed=yes")
    }

    func testDelegatesHearFailuresIncludingThoseBeforeSending() throws {
        let log = Recorder<String>()
        let queue = makeQueue(transport: StubTransport(), delegate: LoggingDelegate(log: log), baseURL: nil)
        let id = queue.add(LoggedRequest(log: log))
        XCTAssertNotNil(result(of: id, on: queue, as: LoggedResponse.self))
        XCTAssertEqual(log.all, ["queue.didFail nil invalidURL", "request.didFail nil"])
    }

    // MARK: - async

    func testSendReturnsTheResponse() async throws {
        let queue = makeQueue(transport: StubTransport { _ in .json(#"{"message":"async"}"#) })
        let greeting = try await queue.send(PathRequest<Greeting>("/greeting"))
        XCTAssertEqual(greeting, Greeting(message: "async"))
    }

    func testSendThrowsTypedErrors() async throws {
        let queue = makeQueue(transport: StubTransport { _ in .status(500) })
        do {
            _ = try await queue.send(PathRequest<Greeting>("/greeting"))
            XCTFail("expected an error")
        } catch {
            XCTAssertEqual(error.statusCode, 500)
        }
    }

    func testCancellingTheTaskCancelsTheRequest() async throws {
        // Given a send waiting on a held request
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        let task = Task { try await queue.send(PathRequest<EmptyResponse>("/slow")) }
        XCTAssertTrue(transport.waitForStarts(1))

        // When the Task is cancelled
        task.cancel()

        // Then the request is stopped and send throws `.cancelled`
        let result = await task.result
        guard case .failure(let error as RequestError) = result, case .cancelled = error else {
            return XCTFail("got \(result)")
        }
        XCTAssertEqual(transport.heldCount, 0)
    }

    func testSendInAnAlreadyCancelledTaskNeverSends() async throws {
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport, maxConcurrent: 1)
        let blocker = queue.add(PathRequest<EmptyResponse>("/blocker"))
        XCTAssertTrue(transport.waitForStarts(1))
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await queue.send(PathRequest<EmptyResponse>("/never"))
        }
        let result = await task.result
        guard case .failure(let error as RequestError) = result, case .cancelled = error else {
            return XCTFail("got \(result)")
        }
        queue.cancel(blocker)
        XCTAssertEqual(transport.started.map { $0.url!.path }, ["/v1/blocker"])
    }

    // MARK: - Lifetime

    func testReleasedQueueCancelsWhatItHoldsAndIsDeallocated() throws {
        // Given a queue with one request in flight and one waiting
        let transport = StubTransport { _ in .hold }
        let deallocated = expectation(description: "queue deallocated (its delegate is released)")
        var queue: RequestQueue? = makeQueue(transport: transport, maxConcurrent: 1,
                                             delegate: DeinitDelegate { deallocated.fulfill() })
        weak let weakQueue = queue
        let results = Recorder<String>()
        let done = expectation(description: "both cancelled")
        done.expectedFulfillmentCount = 2
        for path in ["/running", "/waiting"] {
            let id = queue!.add(PathRequest<EmptyResponse>(path))
            queue!.addObserver(for: id) { (result: Result<EmptyResponse, RequestError>) in
                if case .failure(.cancelled) = result { results.append(path) }
                done.fulfill()
            }
        }
        XCTAssertTrue(transport.waitForStarts(1))

        // When the last reference goes
        queue = nil

        // Then it is deallocated, its transport invalidated, and both requests end as cancelled
        wait(for: [deallocated], timeout: 30)
        XCTAssertNil(weakQueue)
        XCTAssertTrue(transport.waitForInvalidation(), "the transport is invalidated soon after the queue goes")
        wait(for: [done], timeout: 30)
        XCTAssertEqual(results.all.sorted(), ["/running", "/waiting"])
    }

    func testMainQueueIsTheDefaultCallbackQueue() {
        XCTAssertEqual(RequestQueueConfiguration.default.callbackQueue.label, DispatchQueue.main.label)
        XCTAssertEqual(RequestQueueConfiguration.default.maxConcurrentRequests, 6)
        XCTAssertEqual(RequestQueueConfiguration.default.timeoutInterval, 60)
        XCTAssertNil(RequestQueue.shared.baseURL)
    }
}

// MARK: - Delegate fixtures

private final class SlowFailureDelegate: RequestQueueDelegate {
    let log: Recorder<String>
    let entered: DispatchSemaphore
    let release: DispatchSemaphore
    init(log: Recorder<String>, entered: DispatchSemaphore, release: DispatchSemaphore) {
        self.log = log; self.entered = entered; self.release = release
    }
    func requestQueue(_ queue: RequestQueue, didFailWith request: URLRequest?, error: RequestError) {
        entered.signal()
        // The test opens it at once; the bound only keeps a failing test from hanging, and is long
        // enough that the test's own checks always run while the delegate is still held.
        _ = release.wait(timeout: .now() + 60)
        log.append("delegate")
    }
}

private final class DeinitDelegate: RequestQueueDelegate {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

private final class LoggingDelegate: RequestQueueDelegate {
    let log: Recorder<String>
    init(log: Recorder<String>) { self.log = log }

    func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {
        log.append("queue.willSend")
        request.setValue("1", forHTTPHeaderField: "X-Queue")
    }
    func requestQueue(_ queue: RequestQueue, didSend request: URLRequest) { log.append("queue.didSend") }
    func requestQueue(_ queue: RequestQueue, didFailWith request: URLRequest?, error: RequestError) {
        let kind = if case .invalidURL = error { "invalidURL" } else { "\(error)" }
        log.append("queue.didFail \(request == nil ? "nil" : "request") \(kind)")
    }
    func requestQueue(_ queue: RequestQueue, didReceive response: HTTPURLResponse) {
        log.append("queue.didReceive \(response.statusCode)")
    }
}

private struct LoggedRequest: Request, RequestDelegate {
    typealias ResponseType = LoggedResponse
    let log: Recorder<String>
    var path: String { "/logged" }
    var method: HTTPMethod { .get }

    func requestWillSend(_ urlRequest: inout URLRequest) {
        log.append("request.willSend")
        urlRequest.setValue("2", forHTTPHeaderField: "X-Request")
        urlRequest.url = URL(string: urlRequest.url!.absoluteString + "?signed=yes")
    }
    func requestDidSend(_ urlRequest: URLRequest) { log.append("request.didSend") }
    func request(_ urlRequest: URLRequest?, didFailWith error: RequestError) {
        log.append("request.didFail \(urlRequest == nil ? "nil" : "request")")
    }
}

private struct LoggedResponse: Response, ResponseDelegate {
    static let log = Locked<Recorder<String>?>(nil)
    let message: String
    init(body: ResponseData, head: ResponseHead) throws {
        message = try body.decode(Greeting.self).message
    }
    func responseDidReceive(_ head: ResponseHead) {
        LoggedResponse.currentLog?.append("response.didReceive")
    }
    static var currentLog: Recorder<String>? { log.withLock { $0 } }
}
