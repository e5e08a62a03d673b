import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Identical requests in flight share one transfer, each keeping its own ID, delegates,
/// observers and result, against a stub transport that holds requests until the test answers.
/// A transport whose one task has received half its body until the test ends it.
private final class HalfwayTransport: Transport {
    private struct HalfwayTask: TransportTask {
        func resume() {}
        func cancel() {}
        var progress: TransferProgress { TransferProgress(bytesReceived: 10, totalBytesToReceive: 20) }
    }

    private let completion = Locked<(@Sendable (Result<TransportResponse, RequestError>) -> Void)?>(nil)

    func makeTask(for request: TransportRequest,
                  completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) -> any TransportTask {
        self.completion.withLock { $0 = completion }
        return HalfwayTask()
    }

    func invalidate() {}

    func finish(_ url: URL) {
        let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
        completion.withLock { $0 }?(.success(TransportResponse(response: response, body: Data(count: 20))))
    }
}

final class SharedTransfersTests: XCTestCase {
    private struct Profile: Request {
        typealias ResponseType = Greeting
        var path = "/profile"
        var method = HTTPMethod.get
        var headers: [String: String] = [:]
        var sharesIdenticalRequests = true
    }

    /// Polls a state the test cannot be told about (the sharing table has no notifications) until
    /// it holds. Every state polled here is stable once reached (the transfers are held), so
    /// only the bound is timing, and it only runs out when the state never comes: generous.
    private func waitUntil(_ condition: @autoclosure () -> Bool, timeout: TimeInterval = 30,
                           file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date() + timeout
        while !condition() && Date() < deadline { usleep(1_000) }
        XCTAssertTrue(condition(), "timed out", file: file, line: line)
    }

    private func sharing(_ queue: RequestQueue) -> (transfers: Int, participants: Int) {
        (queue.transport as? SharingTransport)?.sharing ?? (0, 0)
    }

    func testAHundredIdenticalGETsAddedAtOnceMakeOneTransferAndGetAHundredResults() {
        // Given a server that holds requests, and a queue that runs 6 at once
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport, maxConcurrent: 6)
        let results = Recorder<Result<Greeting, RequestError>>()
        let done = expectation(description: "100 results")
        done.expectedFulfillmentCount = 100

        // When 100 identical GETs are added at once
        var ids: Set<RequestID> = []
        for _ in 0..<100 {
            let id = queue.add(Profile())
            ids.insert(id)
            queue.addObserver(for: id) { (result: Result<Greeting, RequestError>) in results.append(result); done.fulfill() }
        }
        // Then all of them join one transfer (waiting participants hold no slot)
        waitUntil(sharing(queue).participants == 100)
        XCTAssertEqual(sharing(queue).transfers, 1)
        XCTAssertEqual(transport.started.count, 1)

        // When the server answers once
        XCTAssertNotNil(transport.releaseOldest(with: .json(#"{"message":"shared"}"#)))
        wait(for: [done], timeout: 30)

        // Then each of the 100 IDs got the one result
        XCTAssertEqual(ids.count, 100)
        XCTAssertEqual(results.count, 100)
        XCTAssertTrue(results.all.allSatisfy { (try? $0.get()) == Greeting(message: "shared") })
        XCTAssertEqual(transport.started.count, 1)
        XCTAssertEqual(sharing(queue).transfers, 0)
    }

    func testRandomCancelsNeverCancelTheSurvivorsTransfer() throws {
        // Given 100 identical GETs sharing a held transfer
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        let ids = (0..<100).map { _ in queue.add(Profile()) }
        waitUntil(sharing(queue).participants == 100)

        // When a random 60 of them are cancelled, the first (which opened the transfer) among them
        var generator = SeededGenerator(seed: 42)
        let cancelled = Set([ids[0]] + ids.dropFirst().shuffled(using: &generator).prefix(59))
        let outcomes = Locked<[RequestID: Result<Greeting, RequestError>]>([:])
        let done = expectation(description: "all results")
        done.expectedFulfillmentCount = 100
        for id in ids {
            queue.addObserver(for: id) { (result: Result<Greeting, RequestError>) in
                outcomes.withLock { $0[id] = result }
                done.fulfill()
            }
        }
        for id in cancelled { queue.cancel(id) }
        waitUntil(sharing(queue).participants == 40)

        // Then the transfer is still in flight, and answers the 40 survivors
        XCTAssertEqual(transport.heldCount, 1)
        transport.releaseOldest(with: .json(#"{"message":"survived"}"#))
        wait(for: [done], timeout: 30)
        let all = outcomes.withLock { $0 }
        for id in ids {
            let result = try XCTUnwrap(all[id])
            if cancelled.contains(id) {
                guard case .failure(.cancelled) = result else { return XCTFail("\(id) got \(result)") }
            } else {
                XCTAssertEqual(try result.get(), Greeting(message: "survived"))
            }
        }
        XCTAssertEqual(transport.started.count, 1)
    }

    func testCancellingEveryParticipantCancelsTheTransfer() {
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        let ids = (0..<5).map { _ in queue.add(Profile()) }
        waitUntil(sharing(queue).participants == 5)
        XCTAssertEqual(transport.heldCount, 1)
        // When every one of them is cancelled
        for id in ids { queue.cancel(id) }
        // Then the transport's task is cancelled too (the stub drops a cancelled request)
        waitUntil(transport.heldCount == 0)
        XCTAssertEqual(sharing(queue).transfers, 0)
    }

    func testRequestsThatDifferShareNothing() {
        // Given requests that differ in URL, a header, method, or that opt out
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport, maxConcurrent: 20)
        queue.add(Profile())
        queue.add(Profile(path: "/other"))
        queue.add(Profile(headers: ["Accept-Language": "fr"]))
        queue.add(Profile(headers: ["Authorization": "Bearer another-user"]))
        queue.add(Profile(method: .delete))
        queue.add(Profile(sharesIdenticalRequests: false))
        queue.add(Profile())  // the only one that joins
        // Then each but the last has a transfer of its own (the DELETE and the opt-out outside sharing)
        XCTAssertTrue(transport.waitForStarts(6))
        waitUntil(sharing(queue).participants == 5)
        XCTAssertEqual(sharing(queue).transfers, 4)
        XCTAssertEqual(transport.started.count, 6)
        transport.releaseAll()
    }

    func testAQueueCanTurnSharingOff() {
        let transport = StubTransport { _ in .hold }
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.sharesIdenticalRequests = false
        let queue = RequestQueue(configuration: configuration, delegate: nil,
                                 baseURL: URL(string: "https://api.example.com"), transport: transport)
        for _ in 0..<3 { queue.add(Profile()) }
        XCTAssertTrue(transport.waitForStarts(3))
        XCTAssertEqual(transport.started.count, 3)
        transport.releaseAll()
    }

    func testEachParticipantKeepsItsOwnDelegateCallsAndResponseType() throws {
        // Given a delegate that logs, and two identical GETs decoded into different types
        let transport = StubTransport { _ in .hold }
        let log = Recorder<String>()
        let queue = makeQueue(transport: transport, delegate: AttemptLogger(log: log))
        let greeting = queue.add(Profile())
        let raw = queue.add(PathRequest<EmptyResponse>("/profile"))
        waitUntil(sharing(queue).participants == 2)
        XCTAssertEqual(transport.started.count, 1)
        transport.releaseOldest(with: .json(#"{"message":"both"}"#))
        // Then each has its own result of its own type, and the delegate heard each send
        XCTAssertEqual(try result(of: greeting, on: queue, as: Greeting.self)?.get(), Greeting(message: "both"))
        XCTAssertNotNil(try result(of: raw, on: queue, as: EmptyResponse.self)?.get())
        XCTAssertEqual(log.all.filter { $0 == "willSend" }.count, 2)
    }

    func testAParticipantThatTimesOutLeavesTheOthersWaiting() throws {
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        // The patient request's transfer is open before the hasty one is added, so the hasty one
        // joins it when it is sent, before its 50 ms begin to count (no poll races its timeout).
        let patient = queue.add(Profile())
        XCTAssertTrue(transport.waitForStarts(1))
        let hasty = queue.add(PathRequest<Greeting>("/profile", timeout: 0.05))
        guard case .failure(.timedOut) = try XCTUnwrap(result(of: hasty, on: queue, as: Greeting.self)) else {
            return XCTFail("the hasty request did not time out")
        }
        // It had joined (one transfer went out), and its leaving left the transfer held
        XCTAssertEqual(transport.started.count, 1)
        XCTAssertEqual(sharing(queue).participants, 1)
        XCTAssertEqual(transport.heldCount, 1)
        transport.releaseOldest(with: .json(#"{"message":"late"}"#))
        XCTAssertEqual(try result(of: patient, on: queue, as: Greeting.self)?.get(), Greeting(message: "late"))
    }

    /// A sharing transport over a ``HalfwayTransport``, and a request that shares transfers.
    private func halfwayTransfer() -> (inner: HalfwayTransport, sharing: SharingTransport, request: TransportRequest) {
        let inner = HalfwayTransport()
        var request = TransportRequest(urlRequest: URLRequest(url: URL(string: "https://api.example.com/v1/profile")!), bodyFile: nil)
        request.context.sharesTransfer = true
        return (inner, SharingTransport(inner), request)
    }

    func testAParticipantsProgressStaysAtTheTransfersCountsAfterItEnds() {
        // Given a participant of a shared transfer that has received half its body
        let (inner, sharing, request) = halfwayTransfer()
        let task = sharing.makeTask(for: request) { _ in }
        task.resume()
        XCTAssertEqual(task.progress.bytesReceived, 10)

        // When the transfer ends and leaves the table, before the queue has claimed the result
        inner.finish(request.urlRequest.url!)

        // Then a progress poll in between still reads its counts, not zero (a report going back)
        XCTAssertEqual(task.progress, TransferProgress(bytesReceived: 10, totalBytesToReceive: 20))
    }

    func testAParticipantWhoseTransferEndsBeforeItIsResumedIsAnsweredOnlyOnceResumed() {
        // Given a transfer that one participant started, and a second participant that joined it
        // but is not resumed yet (the queue marks it as running in between)
        let (inner, sharing, request) = halfwayTransfer()
        let first = sharing.makeTask(for: request) { _ in }
        first.resume()
        let answers = Recorder<Int>()
        let second = sharing.makeTask(for: request) { result in
            answers.append((try? result.get().response.statusCode) ?? -1)
        }

        // When the transfer ends before the second is resumed
        inner.finish(request.urlRequest.url!)

        // Then it hears nothing until it is resumed, and then the transfer's answer, once
        XCTAssertEqual(answers.all, [], "answered before resume()")
        second.resume()
        XCTAssertEqual(answers.all, [200])
        second.cancel()
        XCTAssertEqual(answers.all, [200])
    }
}
