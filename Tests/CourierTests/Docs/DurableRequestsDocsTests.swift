// Mirrors the article "Durable Requests and the Network" (Courier.docc/DurableRequests.md).
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A stand-in for a label. NSLock rather than `Mutex`, which ThreadSanitizer on Linux does not see.
/// `@unchecked Sendable`: `storedText` is read and written only under `lock`.
private final class Banner: @unchecked Sendable {
    private let lock = NSLock()
    private var storedText: String?
    var text: String? {
        get { lock.withLock { storedText } }
        set { lock.withLock { storedText = newValue } }
    }
}

final class DurableRequestsDocsTests: XCTestCase {
    struct Message: Decodable, Sendable, Equatable { let id: Int; let text: String }
    struct Draft: Sendable { let id: UUID; let text: String }
    struct MessageBody: JSONBodyData { let text: String }

    struct SendMessage: Request {
        typealias ResponseType = Message
        let text: String
        var parameters: MessageBody { MessageBody(text: text) }
        var path: String { "/messages" }
        var method: HTTPMethod { .post }
    }

    private let api = URL(string: "https://api.example.com/v1")!

    private func configuration(folder: URL, fixtures: FixtureTransport) -> RequestQueueConfiguration {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = DocsSupport.callbacks
        configuration.transport = .fixtures(fixtures)
        // Overview (verbatim but for the folder)
        configuration.durability = Durability(folder: folder, responseTypes: [Message.self])
        return configuration
    }

    func testAWriteAddedBeforeARelaunchIsObservedAfterIt() throws {
        // Given a journal's folder, and an API that holds its answers until the test lets them go
        let folder = try DocsSupport.temporaryFolder("durable")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixtures = FixtureTransport()
        fixtures.holdsAnswers = true
        fixtures.stub(.post, "/v1/messages", status: 201, json: #"{"id": 1, "text": "On my way"}"#)
        let defaults = UserDefaults(suiteName: "courier-docs-\(UUID().uuidString)")!
        let api = self.api

        // Overview (verbatim but for the queue's configuration and the defaults)
        var queue: RequestQueue? = try RequestQueue.open(configuration: configuration(folder: folder, fixtures: fixtures), baseURL: api)
        let draft = Draft(id: UUID(), text: "On my way")       // saved in the app's own store first
        let id = try queue!.addDurably(SendMessage(text: draft.text), lane: "chat-42", key: draft.id.uuidString)
        defaults.set(String(id.rawValue), forKey: "pending-message")

        // Adding it again under its key is the same write
        XCTAssertEqual(try queue!.addDurably(SendMessage(text: draft.text), lane: "chat-42", key: draft.id.uuidString), id)

        // What is waiting (verbatim but for the queue)
        let badge = Banner()
        let waiting = try queue!.pendingDurableRequests()
        badge.text = waiting.isEmpty ? nil : "\(waiting.count) waiting to send"
        XCTAssertEqual(badge.text, "1 waiting to send")
        // The app ends before the answer
        XCTAssertEqual(try fixtures.waitForHeldRequests(1).count, 1)
        DocsSupport.callbacks.sync {}
        queue = nil
        fixtures.holdsAnswers = false
        _ = fixtures.releaseAll()

        // A relaunch: the write goes again, with the same key, and its ID finds its result
        let relaunched = try RequestQueue.open(configuration: configuration(folder: folder, fixtures: fixtures), baseURL: api)
        let shown = expectation(description: "shown")
        let results = Recorder<Result<Message, RequestError>>()
        @Sendable func show(_ result: Result<Message, RequestError>) { results.append(result); shown.fulfill() }

        // After a relaunch (verbatim but for the queue and the defaults)
        let raw = defaults.string(forKey: "pending-message").flatMap(UInt64.init)
        if let id = raw.flatMap(RequestID.init(durableRawValue:)) {
            relaunched.addObserver(for: id) { (result: Result<Message, RequestError>) in show(result) }
        }

        wait(for: [shown], timeout: 30)
        XCTAssertEqual(try results.all.first?.get(), Message(id: 1, text: "On my way"))
        let keys = fixtures.receivedRequests.map { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        XCTAssertEqual(keys.count, 2)
        XCTAssertEqual(Set(keys), [draft.id.uuidString])
        DocsSupport.callbacks.sync {}
    }

    func testTheNetworkStatusAndTheAppsSwitch() async throws {
        // Given a queue whose requests wait while offline
        let fixtures = FixtureTransport()
        fixtures.stub(.post, "/v1/messages", status: 201, json: #"{"id": 2, "text": "later"}"#)
        let queue = DocsSupport.queue(fixtures) { configuration in
            // The network (verbatim)
            configuration.whileOffline = .wait
        }
        let banner = Banner()
        let seen = Recorder<String>()

        // The network (verbatim but for the recording)
        let watching = Task {
            for await status in queue.networkStatusUpdates {
                banner.text = status.isOnline && status.unreachableOrigins.isEmpty ? nil : "Waiting for the network"
                seen.append(banner.text ?? "-")
            }
        }
        defer { watching.cancel() }
        XCTAssertTrue(eventually { seen.count == 1 }, "the first status did not come")

        // When the app pauses the queue, adds a message, and resumes
        queue.pause()
        let sent = Task { try await queue.send(SendMessage(text: "later")) }
        queue.resume()

        // Then the message went once the queue resumed, and the banner showed the pause
        let message = try await sent.value
        XCTAssertEqual(message, Message(id: 2, text: "later"))
        XCTAssertTrue(eventually { seen.all.count >= 3 })
        XCTAssertEqual(Array(seen.all.prefix(3)), ["-", "Waiting for the network", "-"])
    }
}
