import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Reconnection and limits of `ServerSentEventStream`, driven by hand with `ExchangeTransport`.
final class ServerSentEventStreamTests: XCTestCase {
    private let transport = ExchangeTransport()
    private lazy var queue: RequestQueue = {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        let transport = self.transport
        configuration.transport = .custom { _ in transport }
        return RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com"))
    }()

    private func options(_ configure: (inout ServerSentEventOptions) -> Void = { _ in }) -> ServerSentEventOptions {
        var options = ServerSentEventOptions()
        options.reconnectionDelay = 0
        configure(&options)
        return options
    }

    private let eventStream = ["Content-Type": "text/event-stream"]

    func testALostConnectionReconnectsWithTheLastEventID() async throws {
        // Given an event stream
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options())
        let reading = Task {
            var iterator = events.makeAsyncIterator()
            var out: [ServerSentEvent] = []
            while out.count < 3, let event = try await iterator.next() { out.append(event) }
            return out
        }

        // When the first connection delivers two events and is lost
        let first = try transport.next()
        XCTAssertEqual(first.request.value(forHTTPHeaderField: "Accept"), "text/event-stream")
        XCTAssertEqual(first.request.value(forHTTPHeaderField: "Cache-Control"), "no-store")
        XCTAssertNil(first.request.value(forHTTPHeaderField: "Last-Event-ID"))
        first.head(200, eventStream)
        first.send("id: 7\ndata: a\n\ndata: b\n\n")
        first.finish(.transportFailed(URLError(.networkConnectionLost)))

        // Then the next connection asks to resume after event 7, and its event follows
        let second = try transport.next()
        XCTAssertEqual(second.request.value(forHTTPHeaderField: "Last-Event-ID"), "7")
        second.head(200, eventStream)
        second.send("id: 8\ndata: c\n\n")
        let received = try await reading.value
        XCTAssertEqual(received, [
            ServerSentEvent(data: "a", lastEventID: "7"),
            ServerSentEvent(data: "b", lastEventID: "7"),
            ServerSentEvent(data: "c", lastEventID: "8"),
        ])
        events.cancel()
    }

    func testConnectionsWithoutEventsGiveUpAfterTheMaximumWithTheLastError() async throws {
        // Given at most 2 reconnections in a row without an event
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options { $0.maximumReconnections = 2 })
        let reading = Task {
            var count = 0
            for try await _ in events { count += 1 }
            return count
        }

        // When three connections in a row are refused
        for _ in 0..<3 {
            try transport.next().finish(.transportFailed(URLError(.cannotConnectToHost)))
        }

        // Then the stream fails with that error, and no fourth connection is made
        let result = await reading.result
        guard case .failure(RequestError.transportFailed(let error)) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(error.code, .cannotConnectToHost)
        XCTAssertEqual(transport.all.count, 3)
        XCTAssertEqual(events.connectionCount, 3)
    }

    func testAnEventOverTheLimitEndsTheStreamWithoutReconnecting() async throws {
        // Given events of at most 16 bytes
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options { $0.maximumEventSize = 16 })
        let reading = Task {
            var out: [String] = []
            for try await event in events { out.append(event.data) }
            return out
        }

        // When a small event, then an endless one arrive
        let task = try transport.next()
        task.head(200, eventStream)
        task.send("data: ok\n\ndata: " + String(repeating: "x", count: 64))

        // Then the stream fails with the limit, the connection is stopped and not made again
        let result = await reading.result
        guard case .failure(RequestError.streamLimitExceeded(.eventSize(16))) = result else { return XCTFail("\(result)") }
        XCTAssertTrue(task.waitUntilCancelled())
        XCTAssertEqual(transport.all.count, 1)
    }

    func testWithoutReconnectionTheEndOfTheConnectionEndsTheStream() async throws {
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options { $0.reconnects = false })
        let reading = Task {
            var out: [String] = []
            for try await event in events { out.append(event.data) }
            return out
        }
        let task = try transport.next()
        task.head(200, ["Content-Type": "text/event-stream; charset=utf-8"])
        task.send("data: only\n\ndata: unfinished")
        task.finish()
        let received = try await reading.value
        XCTAssertEqual(received, ["only"])
        XCTAssertEqual(transport.all.count, 1)
    }

    func testCancellingDuringTheReconnectionDelayEndsAtOnce() async throws {
        // Given a stream that waits an hour before reconnecting
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options { $0.reconnectionDelay = 3600 })
        let reading = Task {
            for try await _ in events {}
        }
        let task = try transport.next()
        task.head(200, eventStream)
        task.finish()

        // When it is cancelled during the wait
        let waiting = expectation(description: "ended")
        Task {
            _ = await reading.result
            waiting.fulfill()
        }
        events.cancel()

        // Then reading ends with cancelled well before the hour, without another connection
        await fulfillment(of: [waiting], timeout: 30)
        guard case .failure(RequestError.cancelled) = await reading.result else { return XCTFail("not cancelled") }
        XCTAssertEqual(transport.all.count, 1)
    }

    func testA204EndsTheStreamCleanly() async throws {
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options())
        let reading = Task {
            var count = 0
            for try await _ in events { count += 1 }
            return count
        }
        let task = try transport.next()
        task.head(204)
        task.finish()
        let count = try await reading.value
        XCTAssertEqual(count, 0)
        XCTAssertEqual(transport.all.count, 1)
    }
}
