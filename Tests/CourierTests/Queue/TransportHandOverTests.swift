import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Where the queue finishes a request that a transport hands over on its own thread
/// (`TransportHandOver`): there when only Courier's code and a small body's decoding run, on the
/// work queue when a delegate, an authenticator or a large body is involved, and never on a
/// thread that did not mark a hand-over.
final class TransportHandOverTests: XCTestCase {
    /// The thread its body was decoded on.
    struct DecodedOn: Response, Equatable {
        let thread: UInt

        init(body: ResponseData, head: ResponseHead) throws {
            thread = currentThread()
        }
    }

    struct Get: Request {
        typealias ResponseType = DecodedOn
        var path: String { "thing" }
    }

    struct DelegatingGet: Request, RequestDelegate {
        typealias ResponseType = DecodedOn
        var path: String { "thing" }
        func requestWillSend(_ urlRequest: inout URLRequest) {}
        func requestDidSend(_ urlRequest: URLRequest) {}
        func request(_ urlRequest: URLRequest?, didFailWith error: RequestError) {}
    }

    final class QuietDelegate: RequestQueueDelegate {}

    final class PassingAuthenticator: Authenticator {
        func authenticate(_ request: inout URLRequest) {}
        func refresh() async throws {}
        func isAuthenticationFailure(_ head: ResponseHead) -> Bool { false }
    }

    /// The threads `release` ran on, in order, kept alive so that no other thread object can
    /// take their addresses (the identities compared) during a test.
    private let releasingThread = Recorder<UInt>()
    private var releasingThreads: [Thread] = []
    private var handOverThread: UInt? { releasingThread.all.last }

    /// Releases the transport's oldest held request with `reply` from a thread of its own (recorded
    /// as `handOverThread`), as a hand-over when `marked`, and returns once it has.
    private func release(_ transport: StubTransport, with reply: StubTransport.Reply, marked: Bool = true) {
        let done = DispatchSemaphore(value: 0)
        let releasingThread = self.releasingThread
        let thread = Thread {
            releasingThread.append(currentThread())
            if marked {
                TransportHandOver.run { transport.releaseOldest(with: reply) }
            } else {
                transport.releaseOldest(with: reply)
            }
            done.signal()
        }
        releasingThreads.append(thread)
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
    }

    /// Asserts that a body was decoded, and not on the thread of the last hand-over.
    private func assertDecodedElsewhere(_ thread: UInt?, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotNil(thread, "nothing was decoded", file: file, line: line)
        XCTAssertNotNil(handOverThread, "nothing was handed over", file: file, line: line)
        XCTAssertNotEqual(thread, handOverThread, "decoded on the transport's thread", file: file, line: line)
    }

    private func decodingThread<R: Request>(of request: R, on queue: RequestQueue, transport: StubTransport,
                                            reply: StubTransport.Reply = .json("{}"), marked: Bool = true,
                                            file: StaticString = #filePath, line: UInt = #line) -> UInt?
        where R.ResponseType == DecodedOn {
        let id = queue.add(request)
        XCTAssertTrue(transport.waitForStarts(1), "the request never started", file: file, line: line)
        release(transport, with: reply, marked: marked)
        let result = self.result(of: id, on: queue, as: DecodedOn.self, file: file, line: line)
        guard case .success(let value) = result else {
            XCTFail("expected a decoded response, got \(String(describing: result))", file: file, line: line)
            return nil
        }
        return value.thread
    }

    func testASmallResponseWithoutDelegatesIsDecodedWhereItWasHandedOver() {
        // Given a queue without delegates or authenticator, and a transport that holds the request
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)

        // When the transport hands a small response over on its own thread
        let thread = decodingThread(of: Get(), on: queue, transport: transport)

        // Then the queue decoded it there, without moving it to another thread
        XCTAssertNotNil(handOverThread)
        XCTAssertEqual(thread, handOverThread)
    }

    func testTheObserverStillRunsOnTheCallbackQueue() {
        // Given a queue without delegates whose transport hands its response over
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        let id = queue.add(Get())
        XCTAssertTrue(transport.waitForStarts(1))
        let observed = expectation(description: "observer")
        let observerThread = Recorder<UInt>()
        queue.addObserver(for: id) { (_: Result<DecodedOn, RequestError>) in
            dispatchPrecondition(condition: .onQueue(TestQueues.callbacks))
            observerThread.append(currentThread())
            observed.fulfill()
        }

        // When the response is handed over
        release(transport, with: .json("{}"))

        // Then the observer ran on the callback queue, not on the transport's thread
        wait(for: [observed], timeout: 30)
        XCTAssertEqual(observerThread.count, 1)
        XCTAssertNotNil(handOverThread)
        XCTAssertNotEqual(observerThread.all.first, handOverThread)
    }

    func testAQueueDelegateMovesTheResponseToTheWorkQueue() {
        // Given a queue with a delegate
        let transport = StubTransport { _ in .hold }
        let delegate = QuietDelegate()
        let queue = makeQueue(transport: transport, delegate: delegate)

        // When the transport hands a small response over
        let thread = decodingThread(of: Get(), on: queue, transport: transport)

        // Then it was decoded elsewhere: the delegate's code never runs on a transport's thread
        assertDecodedElsewhere(thread)
    }

    func testARequestDelegateMovesTheResponseToTheWorkQueue() {
        // Given a request that is its own delegate
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)

        // When the transport hands its response over
        let thread = decodingThread(of: DelegatingGet(), on: queue, transport: transport)

        // Then it was decoded elsewhere
        assertDecodedElsewhere(thread)
    }

    func testAnAuthenticatorMovesTheResponseToTheWorkQueue() {
        // Given a queue with an authenticator
        let transport = StubTransport { _ in .hold }
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.authenticator = PassingAuthenticator()
        let queue = RequestQueue(configuration: configuration, delegate: nil,
                                 baseURL: URL(string: "https://api.example.com/v1"), transport: transport)

        // When the transport hands a response over
        let thread = decodingThread(of: Get(), on: queue, transport: transport)

        // Then it was decoded elsewhere
        assertDecodedElsewhere(thread)
    }

    func testABodyOverTheLimitIsDecodedOnTheWorkQueue() {
        // Given a queue without delegates
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)
        let limit = Result<TransportResponse, RequestError>.quickBodyLimit

        // When the transport hands over a body one byte over the limit, then one at the limit
        let large = decodingThread(of: Get(), on: queue, transport: transport,
                                   reply: .status(200, body: Data(repeating: 0x20, count: limit + 1)))
        let atLimit = decodingThread(of: Get(), on: queue, transport: transport,
                                     reply: .status(200, body: Data(repeating: 0x20, count: limit)))

        // Then only the one at the limit was decoded on the transport's thread
        let threads = releasingThread.all
        XCTAssertEqual(threads.count, 2)
        XCTAssertNotNil(large)
        XCTAssertNotEqual(large, threads.first)
        XCTAssertEqual(atLimit, threads.last)
    }

    func testACompletionOutsideAHandOverIsMovedToTheWorkQueue() {
        // Given a queue without delegates
        let transport = StubTransport { _ in .hold }
        let queue = makeQueue(transport: transport)

        // When a transport calls the completion on a thread of its own without marking a hand-over
        // (as a transport of the user's does)
        let thread = decodingThread(of: Get(), on: queue, transport: transport, marked: false)

        // Then the queue did not decode on that thread
        assertDecodedElsewhere(thread)
    }

    func testCallbackWorkWaitsForTheEndOfTheHandOverAndKeepsItsOrder() {
        // Given a serial callback queue
        let callbacks = DispatchQueue(label: "CourierTests.hand-over.callbacks")
        let ran = Recorder<Int>()
        var seenInside: [Int] = []

        // When three pieces of work are sent to it during a hand-over
        TransportHandOver.run {
            for number in 1...3 { TransportHandOver.async(on: callbacks) { ran.append(number) } }
            // (whatever was sent to a serial queue runs before a later sync block)
            callbacks.sync { seenInside = ran.all }
        }
        callbacks.sync {}

        // Then none ran before the hand-over ended, and all ran after it, in order
        XCTAssertEqual(seenInside, [])
        XCTAssertEqual(ran.all, [1, 2, 3])
    }

    func testCallbackWorkOutsideAHandOverGoesAtOnceAndANestedOneWaitsForTheOuter() {
        // Given a serial callback queue
        let callbacks = DispatchQueue(label: "CourierTests.hand-over.callbacks")
        let ran = Recorder<String>()
        var seenAfterInner: [String] = []

        // When work is sent outside a hand-over, then inside a hand-over nested in another
        TransportHandOver.async(on: callbacks) { ran.append("outside") }
        callbacks.sync {}
        TransportHandOver.run {
            TransportHandOver.run { TransportHandOver.async(on: callbacks) { ran.append("nested") } }
            callbacks.sync { seenAfterInner = ran.all }
        }
        callbacks.sync {}

        // Then the first went at once, and the nested one only when the outer hand-over ended
        XCTAssertEqual(seenAfterInner, ["outside"])
        XCTAssertEqual(ran.all, ["outside", "nested"])
    }

    func testWorkForTheEndRunsAfterTheHandOversBodyOrAtOnceOutsideOne() {
        // Given a log of what runs when
        var log: [String] = []

        // When work for the end is given outside a hand-over, then inside one (nested too)
        TransportHandOver.atEnd { log.append("outside") }
        TransportHandOver.run {
            TransportHandOver.atEnd { log.append("end 1") }
            TransportHandOver.run { TransportHandOver.atEnd { log.append("end 2") } }
            log.append("body")
        }

        // Then the first ran at once, the others after the outer hand-over's body, in order
        XCTAssertEqual(log, ["outside", "body", "end 1", "end 2"])
    }

    func testCompletionsWaitForTheBodyKeepTheirOrderAndStillRunInsideTheHandOver() {
        // Given a log of what runs when, and a response to complete with
        let log = Recorder<String>()
        let response = TransportResponse(head: ResponseHead(status: 200, headerFields: [:], url: URL(string: "https://example.com/")!),
                                         body: Data())
        let completion = { @Sendable (name: String) in
            { @Sendable (result: Result<TransportResponse, RequestError>) in
                let status = (try? result.get()).map { String($0.head.status) } ?? "failure"
                log.append("\(name) \(status) \(TransportHandOver.isActive ? "inside" : "outside")")
            }
        }

        // When one completion is given outside a hand-over, and three inside one (one of them
        // from a nested hand-over, one a failure), the first of which gives another
        TransportHandOver.complete(.success(response), with: completion("outside"))
        TransportHandOver.run {
            TransportHandOver.complete(.success(response)) { result in
                completion("1")(result)
                TransportHandOver.complete(.success(response), with: completion("added by 1"))
            }
            TransportHandOver.run { TransportHandOver.complete(.failure(.cancelled), with: completion("2")) }
            TransportHandOver.complete(.success(response), with: completion("3"))
            log.append("body")
        }

        // Then the first was called at once; the others after the body, in order, with the one
        // added last, all while the hand-over still held
        XCTAssertEqual(log.all, ["outside 200 outside", "body", "1 200 inside", "2 failure inside", "3 200 inside",
                                 "added by 1 200 inside"])
    }

    func testTheMarkHoldsOnlyInsideTheHandOverAndNests() {
        // Given no hand-over
        XCTAssertFalse(TransportHandOver.isActive)

        // When hand-overs run, one inside another
        var seen: [Bool] = []
        TransportHandOver.run {
            seen.append(TransportHandOver.isActive)
            TransportHandOver.run { seen.append(TransportHandOver.isActive) }
            seen.append(TransportHandOver.isActive)
        }

        // Then the mark holds inside them, and not after
        XCTAssertEqual(seen, [true, true, true])
        XCTAssertFalse(TransportHandOver.isActive)
    }
}

/// The calling thread's identity.
private func currentThread() -> UInt {
    UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(Unmanaged.passUnretained(Thread.current).toOpaque())))
}
