import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Server-sent events from a real SSE server (Scripts/sse_server.py: sse-starlette under uvicorn),
/// through the run's network transport.
final class ServerSentEventsIntegrationTests: XCTestCase {
    private func queue() throws -> RequestQueue {
        try HTTPBin.queue()
    }

    private func request(_ path: String) throws -> PathRequest<EmptyResponse> {
        PathRequest(try HTTPBin.sseServer().absoluteString + path)
    }

    private static let basicEvents = [
        ServerSentEvent(type: "message", data: "first line\nsecond line\nthird line", lastEventID: "1"),
        ServerSentEvent(type: "update", data: #"{"user":"ada","action":"joined"}"#, lastEventID: "2"),
        ServerSentEvent(type: "message", data: "plain message", lastEventID: "2"),
    ]

    /// A state as these tests compare it on both transports: a head by its status and type, an
    /// error by its case and code (the transports' messages differ).
    private func summary(_ state: ServerSentEventConnectionState) -> String {
        func cause(_ error: RequestError?) -> String {
            switch error {
            case nil: return "the end"
            case .transportFailed(let error)?: return "transportFailed \(error.code.rawValue)"
            case let error? where error.statusCode != nil: return "status \(error.statusCode!)"
            case let error?: return "\(error)"
            }
        }
        switch state {
        case .connecting(let connection): return "connecting \(connection)"
        case .open(let head): return "open \(head.status) \(head.headerFields["Content-Type"] ?? "-")"
        case .reconnecting(let error, let delay): return "reconnecting after \(cause(error)) in \(delay) s"
        case .ended(.noContent): return "ended noContent"
        case .ended(.reconnectionLimitReached(let error)): return "ended reconnectionLimitReached after \(cause(error))"
        case .ended(.closed): return "ended closed"
        case .ended(.cancelled): return "ended cancelled"
        case .ended(.failed(let error)): return "ended failed: \(cause(error))"
        }
    }

    private let opened = "open 200 text/event-stream; charset=utf-8"

    func testEveryLineEndGivesTheStandardsEventsAndRetry() async throws {
        let queue = try self.queue()
        for separator in ["crlf", "lf", "cr"] {
            // Given the fixed stream, with one kind of line end, without reconnection
            var options = ServerSentEventOptions()
            options.reconnects = false
            options.reconnectionDelay = 7
            let events = queue.events(try HTTPBin.sseServer().absoluteString + "/events/basic?sep=\(separator)", options: options)
            let follower = follow(events)
            XCTAssertNil(events.serverRetry, "no retry: before the server sends one")
            XCTAssertEqual(events.reconnectionDelay, 7, separator)

            // When it is read to its end
            var received: [ServerSentEvent] = []
            for try await event in events { received.append(event) }

            // Then the events are exactly the standard's: multi-line data joined, the comment and
            // the retry-only block dispatched nothing, the last ID carried over
            XCTAssertEqual(received, Self.basicEvents, separator)
            XCTAssertEqual(events.lastEventID, "2", separator)
            XCTAssertEqual(events.reconnectionDelay, 2.5, separator)
            XCTAssertEqual(events.serverRetry, 2.5, separator)
            XCTAssertEqual(events.connectionCount, 1, separator)
            // And the one connection opened, and closed without reconnection
            let states = await seen(by: follower).map(summary)
            XCTAssertEqual(states, ["connecting 1", opened, "ended closed"], separator)
        }
    }

    func testEventsDecodeIntoTheirType() async throws {
        let queue = try self.queue()
        struct Joined: Decodable, Equatable { let user: String; let action: String }
        var options = ServerSentEventOptions()
        options.reconnects = false
        var decoded: [Joined] = []
        for try await event in queue.events(try request("/events/basic"), options: options) where event.type == "update" {
            decoded.append(try event.decode(Joined.self))
        }
        XCTAssertEqual(decoded, [Joined(user: "ada", action: "joined")])
    }

    func testReconnectsWithTheLastEventIDUntilTheServerAnswers204() async throws {
        let queue = try self.queue()
        // Given a session whose server sends events 1–3, then 4–5 to Last-Event-ID 3, then 204 to 5
        let session = UUID().uuidString
        let events = queue.events(try request("/events/reconnect?session=\(session)"))
        let follower = follow(events)

        // When the stream is read
        var ids: [String] = []
        for try await event in events { ids.append(event.lastEventID) }

        // Then every event came once, in order, and the stream ended on the 204
        XCTAssertEqual(ids, ["1", "2", "3", "4", "5"])
        XCTAssertEqual(events.connectionCount, 3)
        XCTAssertEqual(events.reconnectionDelay, 0.05)
        // And the server received the event-stream headers, and the right Last-Event-ID each time
        let log = try await SSELog.entries(session: session, server: try HTTPBin.sseServer())
        XCTAssertEqual(log.map(\.lastEventID), [nil, "3", "5"])
        XCTAssertEqual(log.map(\.accept), Array(repeating: "text/event-stream", count: 3))
        XCTAssertEqual(log.map(\.cacheControl), Array(repeating: "no-store", count: 3))
        // And its states showed the three connections, the server's wait after each end, and the 204
        let states = await seen(by: follower).map(summary)
        XCTAssertEqual(states, [
            "connecting 1", opened, "reconnecting after the end in 0.05 s",
            "connecting 2", opened, "reconnecting after the end in 0.05 s",
            "connecting 3", "ended noContent",
        ])
        XCTAssertEqual(events.connectionState, .ended(.noContent))
    }

    func testAStartingLastEventIDIsSentOnTheFirstConnection() async throws {
        let queue = try self.queue()
        let session = UUID().uuidString
        var options = ServerSentEventOptions()
        options.lastEventID = "3"
        options.reconnectionDelay = 0.05
        var ids: [String] = []
        for try await event in queue.events(try request("/events/reconnect?session=\(session)"), options: options) {
            ids.append(event.lastEventID)
        }
        XCTAssertEqual(ids, ["4", "5"])
        let log = try await SSELog.entries(session: session, server: try HTTPBin.sseServer())
        XCTAssertEqual(log.map(\.lastEventID), ["3", "5"])
    }

    func testAnErrorStatusFailsWithoutReconnecting() async throws {
        let queue = try self.queue()
        let events = queue.events(try request("/events/status/503"))
        let follower = follow(events)
        do {
            for try await _ in events { XCTFail("an event from a 503") }
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error.statusCode, 503)
        }
        XCTAssertEqual(events.connectionCount, 1)
        let states = await seen(by: follower).map(summary)
        XCTAssertEqual(states, ["connecting 1", "ended failed: status 503"])
    }

    func testAResponseThatIsNotAnEventStreamFailsSayingSo() async throws {
        let queue = try self.queue()
        let events = queue.events(try request("/events/wrong-type"))
        let follower = follow(events)
        do {
            for try await _ in events { XCTFail("an event from text/plain") }
            XCTFail("no error")
        } catch .transportFailed(let error) {
            XCTAssertEqual(error.code, .badServerResponse)
            XCTAssertTrue(error.localizedDescription.contains("text/plain"), error.localizedDescription)
        }
        XCTAssertEqual(events.connectionCount, 1)
        let states = await seen(by: follower).map(summary)
        XCTAssertEqual(states, ["connecting 1", "ended failed: transportFailed \(URLError.Code.badServerResponse.rawValue)"])
    }

    func testARecordedEventStreamReplaysItsEventsOffline() async throws {
        // Given a queue recording into an empty folder
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-sse-recording-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let sse = try HTTPBin.sseServer()
        var recordingConfiguration = RequestQueueConfiguration.default
        recordingConfiguration.transport = .recording(into: folder)
        let recording = RequestQueue(configuration: recordingConfiguration, baseURL: sse)
        var options = ServerSentEventOptions()
        options.reconnects = false

        // When the fixed stream is read live, then replayed from the recorded fixture
        var live: [ServerSentEvent] = []
        for try await event in recording.events(PathRequest<EmptyResponse>("/events/basic"), options: options) { live.append(event) }
        var replayConfiguration = RequestQueueConfiguration.default
        replayConfiguration.transport = .fixtures(try FixtureTransport(directory: folder))
        let replay = RequestQueue(configuration: replayConfiguration, baseURL: sse)
        var replayed: [ServerSentEvent] = []
        for try await event in replay.events(PathRequest<EmptyResponse>("/events/basic"), options: options) { replayed.append(event) }

        // Then both are the server's three events
        XCTAssertEqual(live, Self.basicEvents)
        XCTAssertEqual(replayed, Self.basicEvents)
    }

    func testCancellingStopsTheConnection() async throws {
        let queue = try self.queue()
        // Given an endless stream being read
        let session = UUID().uuidString
        let events = queue.events(try request("/events/endless?interval_ms=5&count=100000&session=\(session)"))
        let follower = follow(events)
        var seen = 0

        // When it is cancelled after three events
        do {
            for try await _ in events {
                seen += 1
                if seen == 3 { events.cancel() }
            }
            XCTFail("no error")
        } catch {
            guard case .cancelled = error else { return XCTFail("\(error)") }
        }

        // Then the server saw the client go
        let log = try await SSELog.waitUntilFinished(session: session, server: try HTTPBin.sseServer())
        XCTAssertEqual(log.disconnected, true)
        XCTAssertEqual(events.connectionCount, 1)
        // And its states went from open to cancelled
        let states = await self.seen(by: follower).map(summary)
        XCTAssertEqual(states, ["connecting 1", opened, "ended cancelled"])
    }

    // MARK: - Connection states

    func testStatesOfAConnectionCutShortThenResumed() async throws {
        let queue = try self.queue()
        // Given a session whose server sends one event and then drops the connection, and answers
        // the reconnection after event 1 with 204
        let session = UUID().uuidString
        let events = queue.events(try request("/events/drop?session=\(session)"))
        let follower = follow(events)

        // When the stream is read
        var received: [String] = []
        for try await event in events { received.append(event.data) }

        // Then the wait to reconnect was after a lost connection, and the next one resumed after event 1
        XCTAssertEqual(received, ["before the drop"])
        let states = await seen(by: follower).map(summary)
        XCTAssertEqual(states, [
            "connecting 1", opened,
            "reconnecting after transportFailed \(URLError.Code.networkConnectionLost.rawValue) in 0.01 s",
            "connecting 2", "ended noContent",
        ])
        let log = try await SSELog.entries(session: session, server: try HTTPBin.sseServer())
        XCTAssertEqual(log.map(\.lastEventID), [nil, "1"])
    }

    func testStatesOfQuietConnectionsUpToTheLimit() async throws {
        let queue = try self.queue()
        // Given at most 1 reconnection without an event, to a server that ends every response at once
        var options = ServerSentEventOptions()
        options.maximumReconnections = 1
        options.reconnectionDelay = 0.01
        let events = queue.events(try request("/events/endless?count=0"), options: options)
        let follower = follow(events)

        // When the stream is read
        var count = 0
        for try await _ in events { count += 1 }

        // Then it gave up after the second empty connection, without an error
        XCTAssertEqual(count, 0)
        let states = await seen(by: follower).map(summary)
        XCTAssertEqual(states, [
            "connecting 1", opened, "reconnecting after the end in 0.01 s",
            "connecting 2", opened, "ended reconnectionLimitReached after the end",
        ])
    }

    func testStatesOfRefusedConnectionsUpToTheLimit() async throws {
        let queue = try self.queue()
        // Given at most 1 reconnection without an event, to a port where nothing listens
        var options = ServerSentEventOptions()
        options.maximumReconnections = 1
        options.reconnectionDelay = 0.01
        let events = queue.events("http://127.0.0.1:\(HTTPBin.closedPort())/events", options: options)
        let follower = follow(events)

        // When the stream is read
        let result = await Task {
            for try await _ in events {}
        }.result

        // Then both refusals were seen, and reading threw the last
        let refused = "transportFailed \(URLError.Code.cannotConnectToHost.rawValue)"
        let states = await seen(by: follower).map(summary)
        XCTAssertEqual(states, [
            "connecting 1", "reconnecting after \(refused) in 0.01 s",
            "connecting 2", "ended reconnectionLimitReached after \(refused)",
        ])
        guard case .failure(RequestError.transportFailed(let error)) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(error.code, .cannotConnectToHost)
    }
}
