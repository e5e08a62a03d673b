import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Streams through the queue, driven by hand with `ExchangeTransport`: no network, no timing.
final class StreamQueueTests: XCTestCase {
    private func makeQueue(_ transport: ExchangeTransport,
                           configure: (inout RequestQueueConfiguration) -> Void = { _ in }) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .custom { _ in transport }
        configure(&configuration)
        return RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com"))
    }

    /// The queue of `committedStream`, kept by the test case so that it outlives every use.
    private var committedQueue: RequestQueue?

    /// A stream whose 200 head has been accepted, with its queue and its transport task to drive it.
    private func committedStream(options: StreamOptions = StreamOptions())
        async throws -> (queue: RequestQueue, stream: ResponseStream, task: ExchangeTransport.Exchange) {
        let transport = ExchangeTransport()
        let queue = makeQueue(transport)
        committedQueue = queue
        let stream = queue.stream(PathRequest<EmptyResponse>("/feed"), options: options)
        let task = try transport.next()
        task.head(200)
        _ = try await stream.response
        return (queue, stream, task)
    }

    private func outcome(of id: RequestID, on queue: RequestQueue) async -> Result<StreamedResponse, RequestError> {
        await withCheckedContinuation { continuation in
            queue.addObserver(for: id) { (result: Result<StreamedResponse, RequestError>) in continuation.resume(returning: result) }
        }
    }

    func testSlowConsumerPausesTheTransferAndResumesItAtHalfTheBuffer() async throws {
        // Given a stream with an 8-byte buffer, committed
        var options = StreamOptions()
        options.bufferSize = 8
        let (_, stream, task) = try await committedStream(options: options)

        // When 5 then 4 bytes arrive and nobody reads
        let first = task.send("12345")
        let second = task.send("6789")

        // Then the second fills the buffer and asks the transport to pause
        XCTAssertEqual(first, .more)
        XCTAssertEqual(second, .pause)
        XCTAssertEqual(task.resumes, 0)

        // When the consumer reads one chunk (5 bytes out, 4 left: half the buffer)
        var iterator = stream.makeAsyncIterator()
        let chunk = try await iterator.next()

        // Then the transfer is asked to go on, once
        XCTAssertEqual(chunk, Data("12345".utf8))
        XCTAssertTrue(task.waitForResumes(moreThan: 0))
        XCTAssertEqual(task.resumes, 1)
        task.finish()
        let rest = try await iterator.next()
        XCTAssertEqual(rest, Data("6789".utf8))
        let end = try await iterator.next()
        XCTAssertNil(end)
    }

    func testTransportThatCannotPauseOverflowsIntoAnErrorNotUnboundedMemory() async throws {
        // Given a 4-byte buffer that may hold 8 bytes at most, and a transport that ignores pauses
        var options = StreamOptions()
        options.bufferSize = 4
        options.maximumBufferSize = 8
        let (queue, stream, task) = try await committedStream(options: options)

        // When 9 bytes arrive without the consumer reading
        task.send("1234")
        task.send("5678")
        task.send("9")

        // Then the transfer is stopped, the consumer gets the limit error at once, and the
        // outcome says the stream failed with it
        XCTAssertTrue(task.waitUntilCancelled())
        do {
            for try await _ in stream { XCTFail("a chunk after the overflow") }
        } catch .streamLimitExceeded(.bufferSize(let limit)) {
            XCTAssertEqual(limit, 8)
        }
        let result = await outcome(of: stream.id, on: queue)
        guard case .failed(.streamLimitExceeded(.bufferSize(8))) = try result.get().ending else { return XCTFail("\(result)") }
        XCTAssertEqual(try result.get().bytesReceived, 9)
    }

    func testFailureBeforeTheHeadIsRetriedAndTheConsumerSeesOnlyTheSecondBody() async throws {
        // Given a retry policy without delay
        let transport = ExchangeTransport()
        let queue = makeQueue(transport) { $0.retryPolicy = RetryPolicy(baseDelay: 0, jitter: 0) }
        let stream = queue.stream(PathRequest<EmptyResponse>("/feed"))

        // When the first attempt answers 503 with a body, and the second 200
        let first = try transport.next()
        first.head(503)
        first.send("busy")
        first.finish()
        let second = try transport.next()
        second.head(200)
        second.send("fresh")
        second.finish()

        // Then the stream is the second response's body only
        var body = Data()
        for try await chunk in stream { body.append(chunk) }
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "fresh")
        XCTAssertEqual(transport.all.count, 2)
    }

    func testFailureAfterTheHeadEndsTheStreamWithoutARetry() async throws {
        // Given a retry policy that retries lost connections
        let transport = ExchangeTransport()
        let queue = makeQueue(transport) { $0.retryPolicy = RetryPolicy(baseDelay: 0, jitter: 0) }
        let stream = queue.stream(PathRequest<EmptyResponse>("/feed"))
        let task = try transport.next()
        task.head(200)
        _ = try await stream.response

        // When the connection is lost after a chunk
        task.send("partial")
        task.finish(.transportFailed(URLError(.networkConnectionLost)))

        // Then the consumer gets the chunk, then the error; nothing is sent again
        var iterator = stream.makeAsyncIterator()
        let chunk = try await iterator.next()
        XCTAssertEqual(chunk, Data("partial".utf8))
        do {
            _ = try await iterator.next()
            XCTFail("no error")
        } catch .transportFailed(let error) {
            XCTAssertEqual(error.code, .networkConnectionLost)
        }
        let result = await outcome(of: stream.id, on: queue)
        guard case .failed(.transportFailed) = try result.get().ending else { return XCTFail("\(result)") }
        XCTAssertEqual(transport.all.count, 1)
    }

    func testRefusedCredentialsAreRefreshedBeforeTheBodyStreams() async throws {
        // Given an authenticator whose first token is refused
        let transport = ExchangeTransport()
        let authenticator = CountingAuthenticator()
        let queue = makeQueue(transport) { $0.authenticator = authenticator }
        let stream = queue.stream(PathRequest<EmptyResponse>("/feed"))

        // When the first attempt gets a 401 and the retry a 200
        let first = try transport.next()
        XCTAssertEqual(first.request.value(forHTTPHeaderField: "Authorization"), "Bearer 0")
        first.head(401)
        first.finish()
        let second = try transport.next()
        second.head(200)
        second.send("ok")
        second.finish()

        // Then the stream carries the retry's body, sent with the refreshed token
        var body = Data()
        for try await chunk in stream { body.append(chunk) }
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "ok")
        XCTAssertEqual(second.request.value(forHTTPHeaderField: "Authorization"), "Bearer 1")
        XCTAssertEqual(authenticator.refreshes, 1)
    }

    func testCancellingByIDEndsTheConsumerAndTheOutcomeOnce() async throws {
        // Given a committed stream
        let transport = ExchangeTransport()
        let queue = makeQueue(transport)
        let stream = queue.stream(PathRequest<EmptyResponse>("/feed"))
        let task = try transport.next()
        task.head(200)
        task.send("a")
        _ = try await stream.response
        let outcomes = Recorder<Result<StreamedResponse, RequestError>>()
        let observed = expectation(description: "observed")
        queue.addObserver(for: stream.id) { (result: Result<StreamedResponse, RequestError>) in
            outcomes.append(result)
            observed.fulfill()
        }

        // When it is cancelled by its ID
        queue.cancel(stream.id)

        // Then the transfer is stopped, reading throws cancelled, and one outcome says so with the head
        XCTAssertTrue(task.waitUntilCancelled())
        do {
            for try await _ in stream {}
            XCTFail("no error")
        } catch {
            guard case .cancelled = error else { return XCTFail("\(error)") }
        }
        await fulfillment(of: [observed], timeout: 30)
        XCTAssertEqual(outcomes.count, 1)
        let outcome = try XCTUnwrap(outcomes.all.first).get()
        XCTAssertEqual(outcome.response.statusCode, 200)
        guard case .cancelled = outcome.ending else { return XCTFail("\(outcome.ending)") }
    }

    func testDelegatesAreToldOfAStreamThatFailedAfterItsHead() async throws {
        // Given a queue whose delegate records failures, and a stream committed to its consumer
        let transport = ExchangeTransport()
        let failures = Recorder<String>()
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .custom { _ in transport }
        let queue = RequestQueue(configuration: configuration, delegate: FailureLog(failures),
                                 baseURL: URL(string: "https://api.example.com"))
        let stream = queue.stream(PathRequest<EmptyResponse>("/feed"))
        let task = try transport.next()
        task.head(200)
        _ = try await stream.response

        // When the connection is lost mid-body
        task.send("partial")
        task.finish(.transportFailed(URLError(.networkConnectionLost)))
        let result = await outcome(of: stream.id, on: queue)

        // Then the observers' outcome says how it ended, and the delegate was told of the failure once
        guard case .failed(.transportFailed) = try result.get().ending else { return XCTFail("\(result)") }
        XCTAssertEqual(failures.all.count, 1)
        XCTAssertTrue(failures.all.first?.contains("network connection lost") == true, "\(failures.all)")
    }

    func testLettingGoOfTheStreamCancelsTheRequest() async throws {
        // Given a committed stream nobody reads
        let transport = ExchangeTransport()
        let queue = makeQueue(transport)
        var stream: ResponseStream? = queue.stream(PathRequest<EmptyResponse>("/feed"))
        let id = try XCTUnwrap(stream?.id)
        let task = try transport.next()
        task.head(200)
        _ = try await stream?.response

        // When the last reference goes
        stream = nil

        // Then the transfer stops and the request ends cancelled
        XCTAssertTrue(task.waitUntilCancelled())
        let result = await outcome(of: id, on: queue)
        guard case .cancelled = try result.get().ending else { return XCTFail("\(result)") }
    }

    func testCancelledBeforeTheHeadFailsTheHeadAndTheBody() async throws {
        // Given a stream whose request is still waiting for its answer
        let transport = ExchangeTransport()
        let queue = makeQueue(transport)
        let stream = queue.stream(PathRequest<EmptyResponse>("/feed"))
        let task = try transport.next()

        // When it is cancelled
        stream.cancel()

        // Then the head and the body throw cancelled, and observers get a plain failure
        XCTAssertTrue(task.waitUntilCancelled())
        do {
            _ = try await stream.response
            XCTFail("a head")
        } catch {
            guard case .cancelled = error else { return XCTFail("\(error)") }
        }
        let result = await outcome(of: stream.id, on: queue)
        guard case .failure(.cancelled) = result else { return XCTFail("\(result)") }
    }

    func testLinesSplitAcrossChunksWithCRLFAndALastLineWithoutEnd() async throws {
        // Given a stream whose lines are cut across chunks
        let (_, stream, task) = try await committedStream()

        // When the chunks arrive
        task.send("first\r")
        task.send("\nsec")
        task.send("ond\n\nthi")
        task.send(Data([0xE2, 0x82]))
        task.send(Data([0xAC]) + Data("rd".utf8))
        task.finish()

        // Then the lines are exact, an empty one included, the euro sign whole
        var lines: [String] = []
        for try await line in stream.lines { lines.append(line) }
        XCTAssertEqual(lines, ["first", "second", "", "thi€rd"])
    }

    func testALineOverTheLimitEndsTheStreamAndSaysWhy() async throws {
        // Given lines of at most 4 bytes
        var options = StreamOptions()
        options.maximumLineLength = 4
        let (queue, stream, task) = try await committedStream(options: options)

        // When a 4-byte line, then an endless one arrive
        task.send("abcd\nefghij")

        // Then the first line comes, then the limit error, and the request ends failed with it
        var lines: [String] = []
        do {
            for try await line in stream.lines { lines.append(line) }
            XCTFail("no error")
        } catch .streamLimitExceeded(.lineLength(let limit)) {
            XCTAssertEqual(limit, 4)
        }
        XCTAssertEqual(lines, ["abcd"])
        XCTAssertTrue(task.waitUntilCancelled())
        let result = await outcome(of: stream.id, on: queue)
        guard case .failed(.streamLimitExceeded(.lineLength(4))) = try result.get().ending else { return XCTFail("\(result)") }
    }

    func testRejectedStatusFailsBothTheHeadAndTheObserversWithTheBody() async throws {
        // Given a stream answered 404 with a body
        let transport = ExchangeTransport()
        let queue = makeQueue(transport)
        let stream = queue.stream(PathRequest<EmptyResponse>("/feed"))
        let task = try transport.next()
        task.head(404)
        task.send(#"{"error":"no such feed"}"#)
        task.finish()

        // Then the head throws the validation failure with that body, decodable as the server's
        // error, and observers get it too
        struct APIError: Decodable, Equatable { let error: String }
        do {
            _ = try await stream.head
            XCTFail("a head")
        } catch {
            guard case .validationFailed(let response, let body) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(response.statusCode, 404)
            XCTAssertEqual(body.string, #"{"error":"no such feed"}"#)
            XCTAssertEqual(error.errorBody(as: APIError.self), APIError(error: "no such feed"))
        }
        let result = await outcome(of: stream.id, on: queue)
        XCTAssertEqual(result.failureStatusCode, 404)
    }
}

/// Counts refreshes; its token is the number of refreshes so far.
private final class CountingAuthenticator: Authenticator {
    private let count = Locked(0)
    var refreshes: Int { count.withLock { $0 } }

    func authenticate(_ request: inout URLRequest) {
        request.setValue("Bearer \(refreshes)", forHTTPHeaderField: "Authorization")
    }

    func refresh() async throws {
        count.withLock { $0 += 1 }
    }
}

extension Result where Failure == RequestError {
    var failureStatusCode: Int? {
        if case .failure(let error) = self { return error.statusCode }
        return nil
    }
}

/// Records the failures a queue's delegate is told of.
private final class FailureLog: RequestQueueDelegate {
    let log: Recorder<String>
    init(_ log: Recorder<String>) { self.log = log }
    func requestQueue(_ queue: RequestQueue, didFailWith request: URLRequest?, error: RequestError) {
        log.append("\(error)")
    }
}
