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

    private typealias State = ServerSentEventConnectionState

    /// The head a connection of `/feed` opens with, as `connectionState` shows it.
    private func openHead(_ headers: HTTPFields = ["Content-Type": "text/event-stream"]) -> ResponseHead {
        ResponseHead(status: 200, headerFields: headers, url: URL(string: "https://api.example.com/feed")!)
    }

    /// A stream of `/feed` being read, followed from the start, once its first connection is open.
    private struct OpenStream {
        let events: ServerSentEventStream
        let follower: ConnectionStateFollower
        /// Another follower, at the open state.
        var states: AsyncStream<State>.Iterator
        let reading: Task<Void, any Error>
        let exchange: ExchangeTransport.Exchange
    }

    private func openStream(_ options: ServerSentEventOptions) async throws -> OpenStream {
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options)
        let follower = follow(events)
        var states = events.connectionStates.makeAsyncIterator()
        let reading = Task {
            for try await _ in events {}
        }
        let exchange = try transport.next()
        exchange.head(200, eventStream)
        let opened: [State?] = [await states.next(), await states.next()]
        XCTAssertEqual(opened, [.connecting(connection: 1), .open(openHead())])
        return OpenStream(events: events, follower: follower, states: states, reading: reading, exchange: exchange)
    }

    func testALostConnectionReconnectsWithTheLastEventID() async throws {
        // Given an event stream, its states followed from the start
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options())
        let follower = follow(events)
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
        second.head(200, ["Content-Type": "text/event-stream", "X-Server": "b"])
        second.send("id: 8\ndata: c\n\n")
        let received = try await reading.value
        XCTAssertEqual(received, [
            ServerSentEvent(data: "a", lastEventID: "7"),
            ServerSentEvent(data: "b", lastEventID: "7"),
            ServerSentEvent(data: "c", lastEventID: "8"),
        ])
        XCTAssertEqual(events.connectionState, .open(openHead(["Content-Type": "text/event-stream", "X-Server": "b"])))
        events.cancel()

        // And the states showed both connections, the wait after the lost one, and the end
        let states = await seen(by: follower)
        XCTAssertEqual(states, [
            .connecting(connection: 1),
            .open(openHead()),
            .reconnecting(after: .transportFailed(URLError(.networkConnectionLost)), delay: 0),
            .connecting(connection: 2),
            .open(openHead(["Content-Type": "text/event-stream", "X-Server": "b"])),
            .ended(.cancelled),
        ])
        XCTAssertEqual(events.connectionState, .ended(.cancelled))
    }

    func testConnectionsWithoutEventsGiveUpAfterTheMaximumWithTheLastError() async throws {
        // Given at most 2 reconnections in a row without an event
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options { $0.maximumReconnections = 2 })
        let follower = follow(events)
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
        // And each refusal was waited out until the limit, which ended the stream with the last one
        let refused = RequestError.transportFailed(URLError(.cannotConnectToHost))
        let states = await seen(by: follower)
        XCTAssertEqual(states, [
            .connecting(connection: 1),
            .reconnecting(after: refused, delay: 0),
            .connecting(connection: 2),
            .reconnecting(after: refused, delay: 0),
            .connecting(connection: 3),
            .ended(.reconnectionLimitReached(lastError: refused)),
        ])
    }

    func testAnEventOverTheLimitEndsTheStreamWithoutReconnecting() async throws {
        // Given events of at most 16 bytes
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options { $0.maximumEventSize = 16 })
        let follower = follow(events)
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
        let states = await seen(by: follower)
        XCTAssertEqual(states, [.connecting(connection: 1), .open(openHead()), .ended(.failed(.streamLimitExceeded(.eventSize(16))))])
    }

    func testWithoutReconnectionTheEndOfTheConnectionEndsTheStream() async throws {
        // Given a stream that does not reconnect
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options { $0.reconnects = false })
        let follower = follow(events)
        let reading = Task {
            var out: [String] = []
            for try await event in events { out.append(event.data) }
            return out
        }
        let task = try transport.next()
        // When the server ends the response, the last event unfinished
        task.head(200, ["Content-Type": "text/event-stream; charset=utf-8"])
        task.send("data: only\n\ndata: unfinished")
        task.finish()

        // Then reading ends without an error after the complete event, and the stream closed
        let received = try await reading.value
        XCTAssertEqual(received, ["only"])
        XCTAssertEqual(transport.all.count, 1)
        let states = await seen(by: follower)
        XCTAssertEqual(states, [
            .connecting(connection: 1), .open(openHead(["Content-Type": "text/event-stream; charset=utf-8"])), .ended(.closed),
        ])
    }

    func testCancellingDuringTheReconnectionDelayEndsAtOnce() async throws {
        // Given a stream that waits an hour before reconnecting, waiting after the server ended the response
        var stream = try await openStream(options { $0.reconnectionDelay = 3600 })
        let (events, follower, reading) = (stream.events, stream.follower, stream.reading)
        stream.exchange.finish()
        let waiting = await stream.states.next()
        XCTAssertEqual(waiting, .reconnecting(after: nil, delay: 3600))

        // When it is cancelled during the wait
        let ended = expectation(description: "ended")
        Task {
            _ = await reading.result
            ended.fulfill()
        }
        events.cancel()

        // Then reading ends with cancelled well before the hour, without another connection
        await fulfillment(of: [ended], timeout: 30)
        guard case .failure(RequestError.cancelled) = await reading.result else { return XCTFail("not cancelled") }
        XCTAssertEqual(transport.all.count, 1)
        let all = await seen(by: follower)
        XCTAssertEqual(all, [.connecting(connection: 1), .open(openHead()), .reconnecting(after: nil, delay: 3600), .ended(.cancelled)])
    }

    func testA204EndsTheStreamCleanly() async throws {
        // Given an event stream
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options())
        let follower = follow(events)
        let reading = Task {
            var count = 0
            for try await _ in events { count += 1 }
            return count
        }
        // When the server answers 204
        let task = try transport.next()
        task.head(204)
        task.finish()

        // Then reading ends without an error and without events; the stream never opened
        let count = try await reading.value
        XCTAssertEqual(count, 0)
        XCTAssertEqual(transport.all.count, 1)
        let states = await seen(by: follower)
        XCTAssertEqual(states, [.connecting(connection: 1), .ended(.noContent)])
    }

    // MARK: - Connection states

    func testStatesWaitForTheServersRetryAfterItEndedTheResponse() async throws {
        // Given an event stream followed from the start
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options())
        let follower = follow(events)
        let reading = Task {
            var iterator = events.makeAsyncIterator()
            return try await iterator.next()?.data
        }

        // When the server asks for 10 ms between connections and ends the response, and the next
        // connection brings an event
        let first = try transport.next()
        first.head(200, eventStream)
        first.send("retry: 10\n\n")
        first.finish()
        let second = try transport.next()
        second.head(200, eventStream)
        second.send("data: after\n\n")
        let received = try await reading.value
        events.cancel()

        // Then the wait was the server's, after no error
        XCTAssertEqual(received, "after")
        let states = await seen(by: follower)
        XCTAssertEqual(states, [
            .connecting(connection: 1),
            .open(openHead()),
            .reconnecting(after: nil, delay: 0.01),
            .connecting(connection: 2),
            .open(openHead()),
            .ended(.cancelled),
        ])
    }

    func testStatesOfAnErrorStatus() async throws {
        // Given an event stream followed from the start
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options())
        let follower = follow(events)
        let reading = Task {
            for try await _ in events {}
        }

        // When the server answers 503
        let task = try transport.next()
        task.head(503, ["Content-Type": "text/plain"])
        task.send("busy")
        task.finish()

        // Then the stream failed with that answer, without reconnecting, and reading threw it
        let response = HTTPURLResponse(url: URL(string: "https://api.example.com/feed")!, statusCode: 503,
                                       httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "text/plain"])!
        let states = await seen(by: follower)
        XCTAssertEqual(states, [
            .connecting(connection: 1),
            .ended(.failed(.validationFailed(response, body: ResponseData(Data("busy".utf8))))),
        ])
        guard case .failure(let error) = await reading.result else { return XCTFail("no failure") }
        XCTAssertEqual((error as? RequestError)?.statusCode, 503)
        XCTAssertEqual(transport.all.count, 1)
    }

    func testStatesOfAResponseThatIsNotAnEventStream() async throws {
        // Given an event stream followed from the start
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options())
        let follower = follow(events)
        let reading = Task {
            for try await _ in events {}
        }

        // When the server answers with text
        let task = try transport.next()
        task.head(200, ["Content-Type": "text/plain"])

        // Then the stream failed saying so, without opening
        let states = await seen(by: follower)
        XCTAssertEqual(states.count, 2)
        XCTAssertEqual(states.first, .connecting(connection: 1))
        guard case .ended(.failed(.transportFailed(let error)))? = states.last else { return XCTFail("\(states)") }
        XCTAssertEqual(error.code, .badServerResponse)
        guard case .failure = await reading.result else { return XCTFail("no failure") }
    }

    func testStatesWithoutReconnectionOfALostConnection() async throws {
        // Given a stream that does not reconnect
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options { $0.reconnects = false })
        let follower = follow(events)
        let reading = Task {
            for try await _ in events {}
        }

        // When the connection is lost
        let task = try transport.next()
        task.head(200, eventStream)
        task.finish(.transportFailed(URLError(.networkConnectionLost)))

        // Then the stream failed with that error, which reading threw
        let states = await seen(by: follower)
        XCTAssertEqual(states, [
            .connecting(connection: 1), .open(openHead()),
            .ended(.failed(.transportFailed(URLError(.networkConnectionLost)))),
        ])
        guard case .failure(RequestError.transportFailed(let error)) = await reading.result else { return XCTFail("no failure") }
        XCTAssertEqual(error.code, .networkConnectionLost)
    }

    func testCancellingTheReadingTaskEndsTheStatesCancelled() async throws {
        // Given an open stream being read
        let stream = try await openStream(options())

        // When the reading task is cancelled
        stream.reading.cancel()

        // Then the stream ended cancelled and its connection was stopped
        let all = await seen(by: stream.follower)
        XCTAssertEqual(all, [.connecting(connection: 1), .open(openHead()), .ended(.cancelled)])
        guard case .failure(RequestError.cancelled) = await stream.reading.result else { return XCTFail("not cancelled") }
        XCTAssertTrue(stream.exchange.waitUntilCancelled())
    }

    func testCancellingBeforeReadingEndsItWithoutAConnection() async throws {
        // Given a stream not read yet
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options())
        let follower = follow(events)
        XCTAssertEqual(events.connectionState, .connecting(connection: 1))

        // When it is cancelled, then read
        events.cancel()
        let result = await Task {
            for try await _ in events {}
        }.result

        // Then its states ended cancelled, reading threw cancelled, and no connection was made
        let states = await seen(by: follower)
        XCTAssertEqual(states, [.connecting(connection: 1), .ended(.cancelled)])
        guard case .failure(RequestError.cancelled) = result else { return XCTFail("not cancelled") }
        XCTAssertEqual(events.connectionCount, 0)
        XCTAssertEqual(transport.all.count, 0)
    }

    func testAFollowerAfterTheEndSeesOnlyTheEnding() async throws {
        // Given a stream that ended
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options())
        events.cancel()

        // When it is followed then
        let follower = follow(events)

        // Then its sequence is the ending alone, and it is not kept
        let states = await seen(by: follower)
        XCTAssertEqual(states, [.ended(.cancelled)])
        XCTAssertEqual(events.connectionStateFollowers, 0)
    }

    func testEveryFollowerSeesTheCurrentStateFirstThenTheChanges() async throws {
        // Given a stream followed from the start, being read, open
        var stream = try await openStream(options())
        let (events, early) = (stream.events, stream.follower)

        // When two more follow it once open, and the connection is lost
        let late = follow(events)
        let later = follow(events)
        stream.exchange.finish(.transportFailed(URLError(.networkConnectionLost)))
        let reconnecting = await stream.states.next()
        events.cancel()

        // Then the early follower saw it all, the late ones from the open state on, and all finished
        let lost = RequestError.transportFailed(URLError(.networkConnectionLost))
        XCTAssertEqual(reconnecting, .reconnecting(after: lost, delay: 0))
        let earlyStates = await seen(by: early)
        let lateStates = await seen(by: late)
        let laterStates = await seen(by: later)
        XCTAssertEqual(earlyStates.prefix(3), [.connecting(connection: 1), .open(openHead()), .reconnecting(after: lost, delay: 0)])
        XCTAssertEqual(earlyStates.last, .ended(.cancelled))
        XCTAssertEqual(lateStates.prefix(2), [.open(openHead()), .reconnecting(after: lost, delay: 0)])
        XCTAssertEqual(lateStates.last, .ended(.cancelled))
        XCTAssertEqual(laterStates, lateStates)
        _ = await stream.reading.result
    }

    func testReleasingTheStreamEndsItsStatesAndStopsItsConnection() async throws {
        // Given a stream followed, whose first event was read
        var events: ServerSentEventStream? = queue.events(PathRequest<EmptyResponse>("/feed"), options: options())
        let follower = follow(events!)
        let transport = self.transport
        let exchange = Locked<ExchangeTransport.Exchange?>(nil)
        DispatchQueue.global().async {
            guard let task = try? transport.next() else { return }
            exchange.withLock { $0 = task }
            task.head(200, ["Content-Type": "text/event-stream"])
            task.send("data: first\n\n")
        }
        var iterator: ServerSentEventStream.AsyncIterator? = events!.makeAsyncIterator()
        let first = try await iterator!.next()
        XCTAssertEqual(first?.data, "first")

        // When nothing holds the stream any more
        iterator = nil
        events = nil

        // Then its follower saw it end cancelled, and its connection was stopped
        let states = await seen(by: follower)
        XCTAssertEqual(states, [.connecting(connection: 1), .open(openHead()), .ended(.cancelled)])
        XCTAssertEqual(exchange.withLock { $0 }?.waitUntilCancelled(), true)
    }

    func testAFollowerThatStopsIsLetGo() async throws {
        // Given a stream
        let events = queue.events(PathRequest<EmptyResponse>("/feed"), options: options())

        // When one sequence of its states is dropped unread, and another is followed by a task then cancelled
        _ = events.connectionStates
        let following = events.connectionStates
        XCTAssertEqual(events.connectionStateFollowers, 1)
        let task = Task {
            for await _ in following {}
        }
        task.cancel()
        await task.value

        // Then neither is kept by the stream
        XCTAssertTrue(eventually { events.connectionStateFollowers == 0 })
        events.cancel()
    }

    func testTwoIteratorsAtOnceNeitherCrashNorHang() async throws {
        // Given a stream read by two iterators at once (unsupported: it is read once), the first open
        let stream = try await openStream(options())
        let events = stream.events
        let second = Task {
            var iterator = events.makeAsyncIterator()
            return try await iterator.next()?.data
        }

        // When the second makes its own connection and gets an event, and the stream is cancelled
        let exchange = try transport.next()
        exchange.head(200, eventStream)
        exchange.send("data: second\n\n")
        let received = try await second.value
        stream.events.cancel()

        // Then both iterators ended, the first cancelled, and the stream too
        XCTAssertEqual(received, "second")
        guard case .failure(RequestError.cancelled) = await stream.reading.result else { return XCTFail("not cancelled") }
        let states = await seen(by: stream.follower)
        XCTAssertEqual(states.last, .ended(.cancelled))
        XCTAssertEqual(stream.events.connectionCount, 2)
    }
}
