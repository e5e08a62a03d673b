// Mirrors the article "Streaming Responses, Server-Sent Events and Downloads" (Courier.docc/StreamingResponses.md).
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class StreamingDocsTests: XCTestCase {
    // Streaming › Overview (verbatim)
    struct LogTailRequest: Request {
        typealias ResponseType = StreamedResponse
        var path: String { "/logs/tail" }
        var method: HTTPMethod { .get }
    }

    // Streaming › Server-sent events (verbatim)
    struct Tick: Decodable, Sendable { let symbol: String; let price: Double }

    struct TickerRequest: Request {
        typealias ResponseType = StreamedResponse
        var path: String { "/ticker" }
        var method: HTTPMethod { .get }
    }

    // Streaming › Downloads to a file (verbatim)
    struct CatalogRequest: Request {
        typealias ResponseType = DownloadedFile
        var path: String { "/catalog.zip" }
        var method: HTTPMethod { .get }
    }

    private func fixtures() -> FixtureTransport {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/catalog.zip", headers: ["Content-Type": "application/zip", "ETag": "\"v1\""],
                      body: Data(repeating: 0x50, count: 4096))
        fixtures.stub(.get, "/logs/tail", headers: ["Content-Type": "text/plain"], body: Data("started\r\nlistening on :8080\nready".utf8))
        // Streaming › Testing streams with fixtures (verbatim)
        fixtures.stub(.get, "/ticker", headers: ["Content-Type": "text/event-stream"],
                      body: Data("event: tick\ndata: {\"symbol\":\"ACME\",\"price\":12.5}\n\n".utf8))
        return fixtures
    }

    // Streaming › Overview, and observing how it ended.
    func testStreamLinesAndItsOutcome() async throws {
        let queue = DocsSupport.queue(fixtures())
        let printed = Recorder<String>()
        let print: @Sendable (Any...) -> Void = { printed.append($0.map { "\($0)" }.joined(separator: " ")) }
        let observed = expectation(description: "outcome")

        let stream = queue.stream(LogTailRequest())
        queue.addObserver(for: stream.id) { (result: Result<StreamedResponse, RequestError>) in
            switch result {
            case .success(let outcome):                  // it had a head: finished, failed or cancelled
                print(outcome.head.status, outcome.bytesReceived, outcome.ending)
            case .failure(let error):                    // it never had one
                print(error)
            }
            observed.fulfill()
        }
        let head = try await stream.head                // status and header fields, once accepted
        for try await line in stream.lines {            // or `for try await chunk in stream`
            print(line)
        }
        await fulfillment(of: [observed], timeout: 30)

        // The observer runs on the callback queue while the lines are read: its line may come
        // anywhere among them.
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(printed.all.filter { $0 != "200 33 finished" }, ["started", "listening on :8080", "ready"])
        XCTAssertEqual(printed.all.filter { $0 == "200 33 finished" }.count, 1)
    }

    // Streaming › Memory and back-pressure
    func testStreamOptions() async throws {
        let queue = DocsSupport.queue(fixtures())
        var options = StreamOptions()
        options.bufferSize = 256 << 10         // pause with 256 KiB waiting
        options.maximumLineLength = 64 << 10   // a longer line ends the stream
        let stream = queue.stream(LogTailRequest(), options: options)

        XCTAssertEqual(stream.options.bufferSize, 262_144)
        XCTAssertEqual(StreamOptions().bufferSize, 1 << 20)
        XCTAssertEqual(StreamOptions().maximumBufferSize, 64 << 20)
        XCTAssertEqual(StreamOptions().maximumLineLength, 4 << 20)
        var lines = 0
        for try await _ in stream.lines { lines += 1 }
        XCTAssertEqual(lines, 3)
    }

    // Streaming › Server-sent events
    func testEventsDecodeAndOptions() async throws {
        let queue = DocsSupport.queue(fixtures())
        let printed = Recorder<String>()
        let print: @Sendable (Any...) -> Void = { printed.append($0.map { "\($0)" }.joined(separator: " ")) }
        var withoutReconnection = ServerSentEventOptions()
        withoutReconnection.reconnects = false   // fixtures end the stream; an app would reconnect

        for try await event in queue.events(TickerRequest(), options: withoutReconnection) where event.type == "tick" {
            let tick = try event.decode(Tick.self)      // the event's data, as JSON
            print(tick.symbol, tick.price)
        }
        XCTAssertEqual(printed.all, ["ACME 12.5"])

        let savedLastEventID = "41"
        var options = ServerSentEventOptions()
        options.maximumReconnections = 5          // give up after 5 connections in a row without an event
        options.lastEventID = savedLastEventID    // resume where an earlier stream stopped
        let events = queue.events(TickerRequest(), options: options)
        XCTAssertEqual(events.lastEventID, "41")
        XCTAssertEqual(ServerSentEventOptions().reconnectionDelay, 3)
        XCTAssertEqual(ServerSentEventOptions().maximumEventSize, 8 << 20)
        events.cancel()
    }

    // Streaming › Downloads to a file
    func testDownloadThenAPausedOneResumedLater() async throws {
        let fixtures = fixtures()
        let queue = DocsSupport.queue(fixtures)
        let folder = try DocsSupport.temporaryFolder("download")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("catalog.zip")
        let printed = Recorder<String>()
        let print: @Sendable (Any...) -> Void = { printed.append($0.map { "\($0)" }.joined(separator: " ")) }

        let download = queue.download(CatalogRequest(), to: destination)
        queue.addProgressObserver(for: download.id) { progress in
            print(progress.bytesReceived, "of", progress.totalBytesToReceive)
        }
        let file = try await download.file     // in place at `destination`
        print(file.size, file.resumedAt)

        // `file` does not wait for the callback queue, where progress is reported: the last report
        // may come after it.
        XCTAssertTrue(printed.all.contains("4096 0"), "\(printed.all)")
        XCTAssertEqual(try Data(contentsOf: destination), Data(repeating: 0x50, count: 4096))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["catalog.zip"])

        // The pause-and-resume sample, with the first answer held so that the pause comes first.
        try FileManager.default.removeItem(at: destination)
        fixtures.holdsAnswers = true
        let paused = queue.download(CatalogRequest(), to: destination)
        _ = try await fixtures.waitForHeldRequests(1, timeout: 30)
        paused.cancel(keepingPartialData: true)          // the user paused it
        fixtures.holdsAnswers = false
        _ = fixtures.releaseAll()
        // … later, even in another process:
        let resumed = try await queue.download(CatalogRequest(), to: destination).file
        XCTAssertEqual(resumed.size, 4096)
        do {
            _ = try await paused.file
            XCTFail("the paused download completed")
        } catch {
            guard case .cancelled = error else { return XCTFail("\(error)") }
        }
    }

    // Streaming › Overview: the buffered limit's default and its advice.
    func testBufferedLimitDefault() {
        XCTAssertEqual(RequestQueueConfiguration.default.maximumResponseSize, 64 << 20)
        XCTAssertTrue(RequestError.responseTooLarge(limit: 64 << 20).description.contains("queue.stream"))
    }
}
