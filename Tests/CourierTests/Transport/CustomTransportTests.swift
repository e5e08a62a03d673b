import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import XCTest
// Public API only: this is what a user's own transport sees.
import Courier

/// A transport written the way a user would write one: it answers from a closure on a serial
/// queue of its own, and records what it was asked and told.
private final class ScriptedTransport: Transport {
    enum Answer: Sendable {
        case status(Int, headers: [String: String] = [:], body: String = "")
        case failure(RequestError)
        /// Never completes unless cancelled.
        case never
        /// Completes twice with this status and headers (a broken transport).
        case twice(Int, headers: [String: String])
    }

    struct Log: Sendable {
        var requests: [URLRequest] = []
        var cancels = 0
        var invalidated = false
    }

    let settings: TransportSettings
    /// The transport's own I/O queue, marked so that tests can tell whether code runs on it.
    let ioQueue = DispatchQueue(label: "ScriptedTransport.io")
    let ioKey = DispatchSpecificKey<Bool>()
    private let answer: @Sendable (URLRequest) -> Answer
    private let log = Mutex(Log())

    init(settings: TransportSettings, answer: @escaping @Sendable (URLRequest) -> Answer) {
        self.settings = settings
        self.answer = answer
        ioQueue.setSpecific(key: ioKey, value: true)
    }

    var requests: [URLRequest] { log.withLock { $0.requests } }
    var cancels: Int { log.withLock { $0.cancels } }
    var isInvalidated: Bool { log.withLock { $0.invalidated } }

    func makeTask(for request: TransportRequest,
                  completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) -> any TransportTask {
        let urlRequest = request.urlRequest
        let answer = self.answer
        let ioQueue = self.ioQueue
        let cancelled = Once()
        return Task(
            onResume: { [self] in
                log.withLock { $0.requests.append(urlRequest) }
                ioQueue.async {
                    func respond(_ status: Int, _ headers: [String: String], _ body: String) -> Result<TransportResponse, RequestError> {
                        .success(TransportResponse(
                            response: HTTPURLResponse(url: urlRequest.url!, statusCode: status, httpVersion: "HTTP/1.1",
                                                      headerFields: headers)!,
                            body: Data(body.utf8)))
                    }
                    switch answer(urlRequest) {
                    case .status(let status, let headers, let body): completion(respond(status, headers, body))
                    case .failure(let error): completion(.failure(error))
                    case .never: break
                    case .twice(let status, let headers):
                        completion(respond(status, headers, "first"))
                        completion(respond(status, headers, "second"))
                    }
                }
            },
            onCancel: { [self] in
                log.withLock { $0.cancels += 1 }
                if cancelled.first() { ioQueue.async { completion(.failure(.cancelled)) } }
            })
    }

    func invalidate() {
        log.withLock { $0.invalidated = true }
    }

    private struct Task: TransportTask {
        let onResume: @Sendable () -> Void
        let onCancel: @Sendable () -> Void
        func resume() { onResume() }
        func cancel() { onCancel() }
        var progress: TransferProgress { TransferProgress() }
    }
}

/// True the first time only.
private final class Once: Sendable {
    private let done = Atomic(false)
    func first() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}

/// Records where delegate calls run and what they saw.
private final class Witness: RequestQueueDelegate {
    let key: DispatchSpecificKey<Bool>
    let events = Mutex<[String]>([])

    init(transportKey: DispatchSpecificKey<Bool>) {
        key = transportKey
    }

    func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {
        request.setValue("added by willSend", forHTTPHeaderField: "X-Witness")
    }

    func requestQueue(_ queue: RequestQueue, didReceive response: HTTPURLResponse) {
        let onTransportThread = DispatchQueue.getSpecific(key: key) != nil
        events.withLock { $0.append("didReceive \(response.statusCode) on \(onTransportThread ? "transport" : "queue") thread") }
    }

    var all: [String] { events.withLock { $0 } }
}

private struct Message: Response, Decodable, Equatable {
    let text: String
}

private struct Get<ResponseType: Response>: Request {
    var path: String
    var method: HTTPMethod { .get }
    var timeout: TimeInterval?
}

final class CustomTransportTests: XCTestCase {
    /// A queue whose transport is made by `RequestTransport.custom`, and that transport.
    private func makeQueue(
        configure: (inout RequestQueueConfiguration) -> Void = { _ in },
        delegate: (any RequestQueueDelegate)? = nil,
        answer: @escaping @Sendable (URLRequest) -> ScriptedTransport.Answer
    ) -> (RequestQueue, ScriptedTransport) {
        let made = Mutex<ScriptedTransport?>(nil)
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = DispatchQueue(label: "CustomTransportTests.callbacks")
        configure(&configuration)
        configuration.transport = .custom { settings in
            let transport = ScriptedTransport(settings: settings, answer: answer)
            made.withLock { $0 = transport }
            return transport
        }
        let queue = RequestQueue(configuration: configuration, delegate: delegate, baseURL: URL(string: "https://api.example.com"))
        return (queue, made.withLock { $0! })
    }

    func testACustomTransportSendsWhatTheDelegatesMadeAndItsAnswerIsDecodedOffItsThread() async throws {
        // Given a custom transport that answers on its own I/O queue
        let key = DispatchSpecificKey<Bool>()
        let witness = Witness(transportKey: key)
        let (queue, transport) = makeQueue(delegate: witness) { _ in
            .status(200, headers: ["Content-Type": "application/json"], body: #"{"text":"hello"}"#)
        }
        transport.ioQueue.setSpecific(key: key, value: true)

        // When a request is sent through the queue
        let message = try await queue.send(Get<Message>(path: "/greeting"))

        // Then the transport got the request as the delegate changed it, and the queue decoded
        // the answer and called the delegate on its own queue, not the transport's
        XCTAssertEqual(message, Message(text: "hello"))
        XCTAssertEqual(transport.requests.map { $0.url?.absoluteString }, ["https://api.example.com/greeting"])
        XCTAssertEqual(transport.requests.first?.value(forHTTPHeaderField: "X-Witness"), "added by willSend")
        XCTAssertEqual(witness.all, ["didReceive 200 on queue thread"])
    }

    func testTheTransportIsMadeWithTheQueuesSettings() {
        // Given a configuration with settings only some transports honour
        let (_, transport) = makeQueue(configure: { config in
            config.maxConcurrentRequests = 9
            config.credentials = HTTPCredentials(user: "ada", password: "secret")
            config.maximumResponseSize = 1_000
            config.sessionConfiguration.httpAdditionalHeaders = ["X-Session": "yes"]
        }) { _ in .status(200) }

        // Then the transport is handed them: connections raised to the concurrency limit
        XCTAssertEqual(transport.settings.maximumConnectionsPerHost, 9)
        XCTAssertEqual(transport.settings.credentials, HTTPCredentials(user: "ada", password: "secret"))
        XCTAssertEqual(transport.settings.maximumResponseSize, 1_000)
        XCTAssertEqual(transport.settings.sessionConfiguration.httpAdditionalHeaders?["X-Session"] as? String, "yes")
    }

    func testATransportNeverFollowsRedirectsTheQueueDoes() async throws {
        // Given a transport that answers /old with a redirect to /new
        let (queue, transport) = makeQueue { request in
            request.url?.path == "/old"
                ? .status(302, headers: ["Location": "/new"])
                : .status(200, body: #"{"text":"moved"}"#)
        }

        // When /old is sent
        let message = try await queue.send(Get<Message>(path: "/old"))

        // Then the queue asked the transport for /new itself
        XCTAssertEqual(message, Message(text: "moved"))
        XCTAssertEqual(transport.requests.map { $0.url?.path }, ["/old", "/new"])
    }

    func testATransportThatCompletesTwiceStillEndsTheRequestOnce() async throws {
        // Given a broken transport that completes a redirect twice
        let (queue, transport) = makeQueue { request in
            request.url?.path == "/old" ? .twice(302, headers: ["Location": "/new"]) : .status(204)
        }
        let results = Mutex(0)
        let delivered = expectation(description: "one result")

        // When one request is sent
        let id = queue.add(Get<EmptyResponse>(path: "/old"))
        queue.addObserver(for: id) { (_: Result<EmptyResponse, RequestError>) in
            results.withLock { $0 += 1 }
            delivered.fulfill()
        }
        await fulfillment(of: [delivered], timeout: 30)
        // (anything the second completion started would reach the transport before this)
        _ = try await queue.send(Get<EmptyResponse>(path: "/after"))

        // Then the second completion was ignored: one redirect followed, one result
        XCTAssertEqual(transport.requests.map { $0.url?.path }, ["/old", "/new", "/after"])
        XCTAssertEqual(results.withLock { $0 }, 1)
    }

    func testTheQueueEndsARequestItsTransportNeverAnswersAndCancelsTheTask() async {
        // Given a transport that never answers
        let (queue, transport) = makeQueue { _ in .never }

        // When a request with a short timeout is sent
        do {
            _ = try await queue.send(Get<EmptyResponse>(path: "/silent", timeout: 0.2))
            XCTFail("expected a timeout")
        } catch {
            // Then the queue's own deadline ends it, and the transport's task is cancelled
            guard case .timedOut = error else { return XCTFail("expected .timedOut, got \(error)") }
        }
        XCTAssertEqual(transport.cancels, 1)
    }

    func testATransportFailureWithItsURLErrorCodeIsRetriedByThePolicy() async throws {
        // Given a transport whose first answer is a lost connection
        let attempts = Mutex(0)
        let (queue, transport) = makeQueue(configure: { config in
            config.retryPolicy = RetryPolicy(maximumAttempts: 2, baseDelay: 0.01)
        }) { _ in
            attempts.withLock { count in
                count += 1
                return count == 1 ? .failure(.transportFailed(URLError(.networkConnectionLost))) : .status(204)
            }
        }

        // When a GET is sent
        _ = try await queue.send(Get<EmptyResponse>(path: "/flaky"))

        // Then the policy recognised the code and the second attempt succeeded
        XCTAssertEqual(transport.requests.count, 2)
    }

    func testAReleasedQueueInvalidatesItsTransport() {
        // Given a queue and its custom transport
        var (queue, transport): (RequestQueue?, ScriptedTransport) = makeQueue { _ in .status(200) }
        _ = queue

        // When the queue is released
        queue = nil

        // Then the transport is invalidated (on another thread, soon after)
        let invalidated = expectation(for: NSPredicate { _, _ in transport.isInvalidated }, evaluatedWith: nil)
        wait(for: [invalidated], timeout: 30)
    }
}

/// The default streamed delivery, built on a transport's buffered one.
final class DefaultStreamingDeliveryTests: XCTestCase {
    private final class Receiver: TransportStreamReceiver {
        let events = Mutex<[String]>([])
        let ended = DispatchSemaphore(value: 0)

        func transportDidReceive(_ response: HTTPURLResponse) {
            events.withLock { $0.append("head \(response.statusCode)") }
        }

        func transportDidReceive(_ chunk: Data) -> TransportDemand {
            events.withLock { $0.append("chunk \(String(decoding: chunk, as: UTF8.self))") }
            return .more
        }

        func transportDidComplete(_ error: RequestError?) {
            events.withLock { $0.append(error.map { "failed: \($0)" } ?? "end") }
            ended.signal()
        }
    }

    private func stream(_ answer: ScriptedTransport.Answer) -> [String] {
        let transport = ScriptedTransport(settings: TransportSettings()) { _ in answer }
        let receiver = Receiver()
        let task = transport.makeStreamingTask(
            for: TransportRequest(urlRequest: URLRequest(url: URL(string: "https://example.com/stream")!)),
            receiver: receiver)
        task.resume()
        XCTAssertEqual(receiver.ended.wait(timeout: .now() + 30), .success)
        return receiver.events.withLock { $0 }
    }

    func testAResponseArrivesAsTheHeadOneChunkAndTheEnd() {
        XCTAssertEqual(stream(.status(200, body: "all of it")), ["head 200", "chunk all of it", "end"])
    }

    func testAnEmptyBodyHasNoChunk() {
        XCTAssertEqual(stream(.status(204)), ["head 204", "end"])
    }

    func testAFailureEndsWithoutAHead() {
        XCTAssertEqual(stream(.failure(.transportFailed(URLError(.cannotConnectToHost)))),
                       ["failed: \(RequestError.transportFailed(URLError(.cannotConnectToHost)))"])
    }
}
