import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Streamed responses against real servers (httpbin, Scripts/sse_server.py), through the run's
/// network transport (Scripts/test.sh runs this with curl and with URLSession).
final class StreamingIntegrationTests: XCTestCase {

    func testJSONLinesArriveExactlyAsTheServerSentThem() async throws {
        // Given httpbin's /stream/5, which sends five JSON objects, one per line
        let queue = try HTTPBin.queue()
        let stream = queue.stream(PathRequest<EmptyResponse>("/stream/5", headers: ["X-Trace": "lines"]))

        // When its lines are read
        var lines: [String] = []
        for try await line in stream.lines { lines.append(line) }

        // Then there are five, in order, each the server's echo of this very request
        XCTAssertEqual(lines.count, 5)
        for (index, line) in lines.enumerated() {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            XCTAssertEqual(object["id"] as? Int, index)
            XCTAssertEqual(object["url"] as? String, try HTTPBin.url().absoluteString + "/stream/5")
            XCTAssertEqual((object["headers"] as? [String: String])?["X-Trace"], "lines")
        }
        let head = try await stream.response
        XCTAssertEqual(head.statusCode, 200)
    }

    func testStreamedBytesEqualTheBufferedBody() async throws {
        // Given httpbin's seeded random bytes, which are the same for the same seed
        let queue = try HTTPBin.queue()
        let path = "/stream-bytes/60000?seed=7&chunk_size=1000"

        // When they are streamed and, separately, fetched whole
        var streamed = Data()
        for try await chunk in queue.stream(PathRequest<EmptyResponse>(path)) { streamed.append(chunk) }
        let whole = try await queue.send(PathRequest<RawBody>(path))

        // Then the stream has every byte, in order
        XCTAssertEqual(streamed.count, 60000)
        XCTAssertEqual(streamed, whole.data)
    }

    func testTheBufferedBodyLimitDoesNotApplyToStreams() async throws {
        // Given a queue that buffers at most 1 KiB, and the default limit of a new configuration
        let queue = try HTTPBin.queue { $0.maximumResponseSize = 1024 }
        XCTAssertEqual(RequestQueueConfiguration().maximumResponseSize, 64 << 20)

        // When 4 KiB are fetched buffered, then streamed
        var message = ""
        do {
            _ = try await queue.send(PathRequest<EmptyResponse>("/bytes/4096"))
        } catch {
            guard case .responseTooLarge(1024) = error else { return XCTFail("\(error)") }
            message = error.description
        }
        var count = 0
        for try await chunk in queue.stream(PathRequest<EmptyResponse>("/bytes/4096")) { count += chunk.count }

        // Then the buffered request failed saying to stream instead, and the stream got every byte
        XCTAssertTrue(message.contains("queue.stream"), message)
        XCTAssertEqual(count, 4096)
    }

    func testObserversOfTheIDGetOneOutcomeWithTheHeadAndByteCount() async throws {
        // Given a stream, and an observer of its ID
        let queue = try HTTPBin.queue()
        let stream = queue.stream(PathRequest<EmptyResponse>("/bytes/2048?seed=1"))
        let outcomes = Recorder<Result<StreamedResponse, RequestError>>()
        let observed = expectation(description: "observed")
        queue.addObserver(for: stream.id) { (result: Result<StreamedResponse, RequestError>) in
            outcomes.append(result)
            observed.fulfill()
        }

        // When the body is read to its end
        var count = 0
        for try await chunk in stream { count += chunk.count }
        await fulfillment(of: [observed], timeout: 60)

        // Then the observer got one finished outcome with the head and every byte counted
        XCTAssertEqual(count, 2048)
        let outcome = try XCTUnwrap(outcomes.all.first).get()
        XCTAssertEqual(outcomes.count, 1)
        XCTAssertEqual(outcome.response.statusCode, 200)
        XCTAssertEqual(outcome.bytesReceived, 2048)
        guard case .finished = outcome.ending else { return XCTFail("ended \(outcome.ending)") }
    }

    func testAFinishedStreamLeavesNothingBehind() async throws {
        // Given a stream read to its end
        let queue = try HTTPBin.queue()
        var stream: ResponseStream? = queue.stream(PathRequest<EmptyResponse>("/stream/3"))
        for try await _ in stream!.lines {}
        let id = try XCTUnwrap(stream?.id)
        weak let channel = stream?.channel
        weak let weakStream = stream

        // When the consumer lets go of it and the result has been delivered
        stream = nil
        let delivered = expectation(description: "delivered")
        queue.addObserver(for: id) { (_: Result<StreamedResponse, RequestError>) in delivered.fulfill() }
        await fulfillment(of: [delivered], timeout: 60)

        // Then the stream and its channel are gone (the transport lets go of its task on its own
        // thread, and nothing tells the test, so this polls; the bound only runs out if it never does)
        let deadline = ContinuousClock.now + .seconds(60)
        while channel != nil, ContinuousClock.now < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertNil(weakStream)
        XCTAssertNil(channel)
    }

    func testRejectedStatusFailsWithTheStatusAndBody() async throws {
        // Given a stream of a path that answers 418
        let queue = try HTTPBin.queue()
        let stream = queue.stream(PathRequest<EmptyResponse>("/status/418"))

        // When its head is awaited
        do {
            _ = try await stream.response
            XCTFail("a 418 was accepted")
        } catch .validationFailed(let response, let body) {
            // Then it failed with the status and the server's body
            XCTAssertEqual(response.statusCode, 418)
            XCTAssertTrue(body.string?.contains("teapot") == true, body.string ?? "")
        }
        // And reading the body throws the same
        do {
            for try await _ in stream { XCTFail("a chunk of a rejected response") }
        } catch {
            XCTAssertEqual(error.statusCode, 418)
        }
    }

    func testRedirectIsFollowedBeforeTheBodyStreams() async throws {
        // Given a redirect to a JSON-lines stream
        let queue = try HTTPBin.queue()
        let stream = queue.stream(PathRequest<EmptyResponse>("/redirect-to?url=%2Fstream%2F3&status_code=302"))

        // When its lines are read
        var lines: [String] = []
        for try await line in stream.lines { lines.append(line) }

        // Then they are the target's
        XCTAssertEqual(lines.count, 3)
        let head = try await stream.response
        XCTAssertEqual(head.url?.path, "/stream/3")
    }

    func testTheTimeoutCoversOnlyTheWaitForTheHead() async throws {
        // Given a 1-second timeout and a body that takes 2 seconds to drip in
        let queue = try HTTPBin.queue()
        let stream = queue.stream(PathRequest<EmptyResponse>("/drip?numbytes=4&duration=2&delay=0", timeout: 1))

        // When it is read
        var body = Data()
        for try await chunk in stream { body.append(chunk) }

        // Then the whole body arrived: the timeout ended with the head
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "****")
    }

    func testAConsumerPausedLongerThanTheIdleTimeoutStillGetsEveryByte() async throws {
        // Given a 1-second idle timeout and a 1 KiB buffer, so the transfer pauses almost at once
        let sse = try HTTPBin.sseServer()
        let queue = try HTTPBin.queue { $0.sessionConfiguration.timeoutIntervalForRequest = 1 }
        var options = StreamOptions()
        options.bufferSize = 1024
        let stream = queue.stream(PathRequest<EmptyResponse>(sse.absoluteString + "/events/endless?interval_ms=0&count=3000&sep=lf"),
                                  options: options)
        _ = try await stream.response

        // When the consumer reads nothing for 2.5 seconds (the time is what is tested), then everything
        try await Task.sleep(nanoseconds: 2_500_000_000)
        var numbers: [Int] = []
        for try await line in stream.lines where line.hasPrefix("data: ") { numbers.append(Int(line.dropFirst(6)) ?? -1) }

        // Then the pause did not count as idleness: every event arrived, in order
        XCTAssertEqual(numbers, Array(1...3000))
    }

    func testConsumerThatStopsEarlyStopsTheTransferAndGetsOneCancelledOutcome() async throws {
        // Given a long stream of events from the SSE server, logged under a session of its own
        let sse = try HTTPBin.sseServer()
        let session = UUID().uuidString
        let queue = try HTTPBin.queue()
        let request = PathRequest<EmptyResponse>(sse.absoluteString + "/events/endless?interval_ms=5&count=100000&session=\(session)")
        let outcomes = Recorder<Result<StreamedResponse, RequestError>>()
        let observed = expectation(description: "observed")

        // When the consumer reads three events and stops
        do {
            let stream = queue.stream(request)
            queue.addObserver(for: stream.id) { (result: Result<StreamedResponse, RequestError>) in
                outcomes.append(result)
                observed.fulfill()
            }
            var seen = 0
            for try await line in stream.lines where line.hasPrefix("data:") {
                seen += 1
                if seen == 3 { break }
            }
        }

        // Then the request ends cancelled, once, with its head
        await fulfillment(of: [observed], timeout: 60)
        XCTAssertEqual(outcomes.count, 1)
        let outcome = try XCTUnwrap(outcomes.all.first).get()
        XCTAssertEqual(outcome.response.statusCode, 200)
        guard case .cancelled = outcome.ending else { return XCTFail("ended \(outcome.ending)") }
        // And the server saw the client go long before its 100,000 events
        let log = try await SSELog.waitUntilFinished(session: session, server: sse)
        XCTAssertEqual(log.disconnected, true)
        XCTAssertLessThan(log.eventsSent ?? .max, 100_000)
    }

    func testCancellingTheConsumingTaskCancelsTheRequest() async throws {
        // Given a consumer task reading an endless stream
        let sse = try HTTPBin.sseServer()
        let queue = try HTTPBin.queue()
        let stream = queue.stream(PathRequest<EmptyResponse>(sse.absoluteString + "/events/endless?interval_ms=50&count=100000"))
        let firstLine = expectation(description: "first line")
        let consumer = Task {
            var lines = 0
            for try await _ in stream.lines {
                lines += 1
                if lines == 1 { firstLine.fulfill() }
            }
            return lines
        }
        await fulfillment(of: [firstLine], timeout: 60)

        // When the task is cancelled
        consumer.cancel()

        // Then reading throws cancelled, and the request has ended
        let result = await consumer.result
        guard case .failure(RequestError.cancelled) = result else { return XCTFail("\(result)") }
        let ended = expectation(description: "ended")
        queue.addObserver(for: stream.id) { (_: Result<StreamedResponse, RequestError>) in ended.fulfill() }
        await fulfillment(of: [ended], timeout: 60)
    }
}

/// What Scripts/sse_server.py logged for a session's connections.
struct SSELog: Decodable {
    let lastEventID: String?
    let accept: String?
    let cacheControl: String?
    let eventsSent: Int?
    let finished: Bool?
    let disconnected: Bool?

    enum CodingKeys: String, CodingKey {
        case lastEventID = "last_event_id", accept, cacheControl = "cache_control", eventsSent = "events_sent", finished, disconnected
    }

    static func entries(session: String, server: URL) async throws -> [SSELog] {
        let queue = RequestQueue(configuration: { var c = RequestQueueConfiguration(); c.transport = HTTPBin.transport; return c }())
        return try await queue.send(PathRequest<SSELogEntries>(server.absoluteString + "/events/log?session=\(session)")).entries
    }

    /// The session's first connection once the server has finished with it. The server says so
    /// only in its log, so this polls it; bounded (60 s, which only a server that never notices
    /// the client leaving would reach).
    static func waitUntilFinished(session: String, server: URL) async throws -> SSELog {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let entries = try await entries(session: session, server: server)
            if let first = entries.first, first.finished == true { return first }
            if ContinuousClock.now > deadline {
                XCTFail("the server did not finish the session within 60 s: \(entries)")
                throw RequestError.timedOut
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}

struct SSELogEntries: Response {
    let entries: [SSELog]
    init(body: ResponseData, head: ResponseHead) throws { entries = try body.decode([SSELog].self) }
}
