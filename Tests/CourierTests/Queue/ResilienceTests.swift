import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Retries, credential refresh and header hardening, against a stub transport.
final class ResilienceTests: XCTestCase {
    private func queue(_ transport: StubTransport, delegate: (any RequestQueueDelegate)? = nil,
                       configure: (inout RequestQueueConfiguration) -> Void) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configure(&configuration)
        return RequestQueue(configuration: configuration, delegate: delegate,
                            baseURL: URL(string: "https://api.example.com"), transport: transport)
    }

    private static let fastRetries = RetryPolicy(maximumAttempts: 3, baseDelay: 0.01, jitter: 0)

    // MARK: - Retries

    func testRetriedRequestKeepsItsIDAndObserversSeeOnlyTheEnd() throws {
        // Given a server that fails twice with 503 and then answers
        let calls = Locked(0)
        let transport = StubTransport { _ in
            calls.withLock { $0 += 1; return $0 } < 3 ? .status(503) : .json(#"{"message":"third time"}"#)
        }
        let log = Recorder<String>()
        let queue = queue(transport, delegate: AttemptLogger(log: log)) { $0.retryPolicy = Self.fastRetries }

        // When a GET is observed
        let results = Recorder<Result<Greeting, RequestError>>()
        let done = expectation(description: "result")
        let id = queue.add(PathRequest<Greeting>("/flaky"))
        queue.addObserver(for: id) { (result: Result<Greeting, RequestError>) in results.append(result); done.fulfill() }
        wait(for: [done], timeout: 30)
        TestQueues.callbacks.sync {}

        // Then three attempts were made, delegates heard each, and the observer only the success
        XCTAssertEqual(transport.started.count, 3)
        XCTAssertEqual(log.all, ["willSend", "willRetry 1", "willSend", "willRetry 2", "willSend"])
        XCTAssertEqual(results.count, 1)
        XCTAssertEqual(try results.all.first?.get(), Greeting(message: "third time"))
    }

    func testRetriesStopAtTheLimitWithTheLastError() throws {
        let transport = StubTransport { _ in .failure(.cannotConnectToHost) }
        let queue = queue(transport) { $0.retryPolicy = Self.fastRetries }
        let result = try XCTUnwrap(result(of: queue.add(PathRequest<Greeting>("/down")), on: queue, as: Greeting.self))
        guard case .failure(.transportFailed(let error)) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(error.code, .cannotConnectToHost)
        XCTAssertEqual(transport.started.count, 3)
    }

    func testNonIdempotentRequestsAndOtherStatusesAreNotRetried() throws {
        let transport = StubTransport { request in request.httpMethod == "POST" ? .status(503) : .status(404) }
        let queue = queue(transport) { $0.retryPolicy = Self.fastRetries }
        _ = result(of: queue.add(BodyRequest<TextBody, EmptyResponse>(parameters: TextBody(text: "x"), path: "/p")), on: queue, as: EmptyResponse.self)
        _ = result(of: queue.add(PathRequest<EmptyResponse>("/missing")), on: queue, as: EmptyResponse.self)
        XCTAssertEqual(transport.started.count, 2)
    }

    func testRetryAfterSetsTheDelay() {
        let policy = RetryPolicy(maximumDelay: 10)
        let asked = ResponseHead(status: 503, headerFields: ["Retry-After": "7"], url: URL(string: "https://x")!)
        XCTAssertEqual(policy.delay(after: 1, method: "GET", failure: .status(asked)), 7)
        let tooLong = ResponseHead(status: 429, headerFields: ["Retry-After": "120"], url: URL(string: "https://x")!)
        XCTAssertNil(policy.delay(after: 1, method: "GET", failure: .status(tooLong)))
        let date = ResponseHead(status: 503, headerFields: ["Retry-After": "Wed, 21 Oct 2015 07:28:05 GMT"],
                                url: URL(string: "https://x")!)
        let now = DateComponents(calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "GMT"),
                                 year: 2015, month: 10, day: 21, hour: 7, minute: 28, second: 0).date!
        XCTAssertEqual(RetryPolicy.retryAfter(date, now: now), 5)
    }

    func testBackoffDoublesWithJitterWithinBounds() {
        let policy = RetryPolicy(maximumAttempts: 6, baseDelay: 0.5, maximumDelay: 3, jitter: 0.5)
        XCTAssertEqual(policy.delay(after: 1, method: "GET", failure: .transport(.cannotConnectToHost), random: { 0 }), 0.5)
        XCTAssertEqual(policy.delay(after: 2, method: "GET", failure: .transport(.cannotConnectToHost), random: { 0 }), 1)
        XCTAssertEqual(policy.delay(after: 3, method: "GET", failure: .transport(.cannotConnectToHost), random: { 1 }), 1)
        XCTAssertEqual(policy.delay(after: 5, method: "GET", failure: .transport(.cannotConnectToHost), random: { 0 }), 3)
        XCTAssertNil(policy.delay(after: 6, method: "GET", failure: .transport(.cannotConnectToHost)))
        XCTAssertNil(policy.delay(after: 1, method: "POST", failure: .transport(.cannotConnectToHost)))
    }

    func testADurableRetryFollowsEveryTransportFailureButThoseNoAttemptMends() {
        // Given the default policy, for a durable request (any method)
        let policy = RetryPolicy(jitter: 0)
        func delay(_ code: URLError.Code) -> TimeInterval? {
            policy.delay(after: 1, method: "POST", failure: .transport(code), anyMethod: true, attempts: 20)
        }
        // Then a connection cut mid-response (URLSession on Linux says badServerResponse) is retried;
        // a bad URL, an untrusted certificate or a cancel are not; an ordinary POST is not retried at all
        XCTAssertEqual([.badServerResponse, .networkConnectionLost, .unknown, .secureConnectionFailed].map(delay), [0.5, 0.5, 0.5, 0.5])
        XCTAssertEqual([.badURL, .serverCertificateUntrusted, .cancelled, .fileDoesNotExist].map(delay), [nil, nil, nil, nil])
        XCTAssertNil(policy.delay(after: 1, method: "POST", failure: .transport(.badServerResponse)))
    }

    func testCancelDuringBackoffEndsTheRequest() throws {
        let transport = StubTransport { _ in .hold }
        let queue = queue(transport) { $0.retryPolicy = RetryPolicy(maximumAttempts: 3, baseDelay: 30, jitter: 0) }
        let id = queue.add(PathRequest<EmptyResponse>("/slow-retry"))
        XCTAssertTrue(transport.waitForStarts(1))
        // The 503 is handed to the queue's work queue before releaseOldest returns; the barrier
        // waits until the queue has processed it (and started the 30 s backoff).
        transport.releaseOldest(with: .status(503))
        queue.workQueue.sync(flags: .barrier) {}
        let backingOff = queue.state.withLock { $0.isPaused(id) }
        XCTAssertTrue(backingOff, "the request waits out its backoff")
        let cancelled = expectation(description: "cancelled")
        queue.addObserver(for: id) { (result: Result<EmptyResponse, RequestError>) in
            if case .failure(.cancelled) = result { cancelled.fulfill() }
        }
        // The observer is registered while the request waits out its 30 s backoff.
        queue.cancel(id)
        wait(for: [cancelled], timeout: 30)
        XCTAssertEqual(transport.started.count, 1)
    }

    // MARK: - Credentials refresh

    func testOneRefreshServesAllRequestsRefusedTogether() throws {
        // Given a server that wants "Bearer fresh" and an authenticator that starts with a stale token
        let transport = StubTransport { request in
            request.value(forHTTPHeaderField: "Authorization") == "Bearer fresh" ? .json(#"{"message":"welcome"}"#) : .hold
        }
        let authenticator = TokenAuthenticator(token: "stale", refreshed: "fresh")
        let queue = queue(transport) { $0.authenticator = authenticator; $0.maxConcurrentRequests = 20 }

        // When 20 requests are in flight at once and all come back 401
        let done = expectation(description: "all")
        done.expectedFulfillmentCount = 20
        let successes = Locked(0)
        for index in 0..<20 {
            queue.addObserver(for: queue.add(PathRequest<Greeting>("/me/\(index)"))) { (result: Result<Greeting, RequestError>) in
                if case .success = result { successes.withLock { $0 += 1 } }
                done.fulfill()
            }
        }
        XCTAssertTrue(transport.waitForStarts(20))
        XCTAssertEqual(transport.releaseAll(with: .status(401, headers: ["WWW-Authenticate": "Bearer"])), 20)
        wait(for: [done], timeout: 30)

        // Then one refresh ran, and every request succeeded on its second try
        XCTAssertEqual(authenticator.refreshCount, 1)
        XCTAssertEqual(successes.withLock { $0 }, 20)
        XCTAssertEqual(transport.started.count, 40)
    }

    func testAnAuthenticatorDecidesWhatARefusalIsFromTheHeadOrTheCourier1Response() throws {
        // Given a server that refuses stale tokens with 403 and X-Token-Expired, and two
        // authenticators that know it: one reading the head, one written for Courier 1
        struct HeadReader: Authenticator {
            let tokens: TokenAuthenticator
            func authenticate(_ request: inout URLRequest) { tokens.authenticate(&request) }
            func isAuthenticationFailure(_ head: ResponseHead) -> Bool {
                head.status == 403 && head.headerFields["x-token-expired"] == "true"
            }
            func refresh() async throws { try await tokens.refresh() }
        }
        struct Courier1Reader: Authenticator {
            let tokens: TokenAuthenticator
            func authenticate(_ request: inout URLRequest) { tokens.authenticate(&request) }
            func isAuthenticationFailure(_ response: HTTPURLResponse) -> Bool {
                response.statusCode == 403 && response.value(forHTTPHeaderField: "X-Token-Expired") == "true"
            }
            func refresh() async throws { try await tokens.refresh() }
        }
        let tokens = [TokenAuthenticator(token: "stale", refreshed: "fresh"), TokenAuthenticator(token: "stale", refreshed: "fresh")]
        let authenticators: [any Authenticator] = [HeadReader(tokens: tokens[0]), Courier1Reader(tokens: tokens[1])]
        for (authenticator, tokens) in zip(authenticators, tokens) {
            let transport = StubTransport { request in
                request.value(forHTTPHeaderField: "Authorization") == "Bearer fresh"
                    ? .json(#"{"message":"welcome"}"#) : .status(403, headers: ["X-Token-Expired": "true"])
            }
            let queue = queue(transport) { $0.authenticator = authenticator }

            // When a request is refused that way
            let results = Recorder<Result<Greeting, RequestError>>()
            let done = expectation(description: "result")
            queue.addObserver(for: queue.add(PathRequest<Greeting>("/me"))) { (result: Result<Greeting, RequestError>) in
                results.append(result)
                done.fulfill()
            }
            wait(for: [done], timeout: 30)

            // Then each refreshed once and the request succeeded on its second try
            XCTAssertEqual(try results.all.first?.get(), Greeting(message: "welcome"), "\(type(of: authenticator))")
            XCTAssertEqual(tokens.refreshCount, 1, "\(type(of: authenticator))")
        }
    }

    func testFailedRefreshFailsEveryWaitingRequest() throws {
        // Given five requests in flight, and a refresh that fails, but only once the test lets it end
        let transport = StubTransport { _ in .hold }
        let refreshMayEnd = RefreshGate()
        let authenticator = TokenAuthenticator(token: "stale", refreshed: nil, endsAfter: refreshMayEnd)
        let queue = queue(transport) { $0.authenticator = authenticator }
        let done = expectation(description: "all")
        done.expectedFulfillmentCount = 5
        let failures = Recorder<String>()
        let ids = (0..<5).map { index in
            let id = queue.add(PathRequest<Greeting>("/me/\(index)"))
            queue.addObserver(for: id) { (result: Result<Greeting, RequestError>) in
                if case .failure(.authenticationFailed(let error)) = result { failures.append("\(error)") }
                done.fulfill()
            }
            return id
        }
        XCTAssertTrue(transport.waitForStarts(5))

        // When all five are refused together (each 401 is handed to the queue's work queue before
        // releaseAll returns; the barrier waits until all are parked for the refresh), then the
        // refresh fails
        XCTAssertEqual(transport.releaseAll(with: .status(401)), 5)
        queue.workQueue.sync(flags: .barrier) {}
        let parked = queue.state.withLock { state in ids.filter { state.isPaused($0) } }
        XCTAssertEqual(parked, ids, "every refused request waits for the refresh")
        refreshMayEnd.open()
        wait(for: [done], timeout: 30)

        // Then the one refresh failed them all
        XCTAssertEqual(failures.all, Array(repeating: "RefreshFailed()", count: 5))
        XCTAssertEqual(authenticator.refreshCount, 1)
    }

    // MARK: - Headers

    func testHeadersFromDelegatesAndConfigurationAreChecked() throws {
        // A delegate that sets an invalid header name
        let transport = StubTransport()
        let fromDelegate = queue(transport, delegate: BadHeaderDelegate()) { _ in }
        let result1 = try XCTUnwrap(result(of: fromDelegate.add(PathRequest<EmptyResponse>("/x")), on: fromDelegate, as: EmptyResponse.self))
        guard case .failure(.invalidHeader(let name, _)) = result1 else { return XCTFail("got \(result1)") }
        XCTAssertEqual(name, "Bad Header")

        // A session configuration with a value that could inject a header
        let fromConfiguration = queue(transport) {
            let session = URLSessionConfiguration.default
            session.httpAdditionalHeaders = ["X-Evil": "a\r\nX-Injected: 1"]
            $0.sessionConfiguration = session
        }
        let result2 = try XCTUnwrap(result(of: fromConfiguration.add(PathRequest<EmptyResponse>("/x")), on: fromConfiguration, as: EmptyResponse.self))
        guard case .failure(.invalidHeader(let evil, let reason)) = result2 else { return XCTFail("got \(result2)") }
        XCTAssertEqual(evil, "X-Evil")
        XCTAssertTrue(reason.contains("carriage return"), reason)
        XCTAssertTrue(transport.started.isEmpty, "nothing may be sent")
    }
}

final class AttemptLogger: RequestQueueDelegate {
    let log: Recorder<String>
    init(log: Recorder<String>) { self.log = log }
    func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) { log.append("willSend") }
    func requestQueue(_ queue: RequestQueue, willRetry request: URLRequest, attempt: Int, after error: RequestError) {
        log.append("willRetry \(attempt)")
    }
}

private final class BadHeaderDelegate: RequestQueueDelegate {
    func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {
        request.setValue("v", forHTTPHeaderField: "Bad Header")
    }
}

struct RefreshFailed: Error {}

/// Holds a token, counts refreshes, and fails them when it has nothing to refresh to. With a
/// gate, each refresh ends only once the gate is open.
final class TokenAuthenticator: Authenticator {
    private let token: Locked<String>
    private let refreshed: String?
    private let gate: RefreshGate?
    private let refreshes = Locked(0)

    init(token: String, refreshed: String?, endsAfter gate: RefreshGate? = nil) {
        self.token = Locked(token)
        self.refreshed = refreshed
        self.gate = gate
    }

    var refreshCount: Int { refreshes.withLock { $0 } }

    func authenticate(_ request: inout URLRequest) {
        request.setValue("Bearer \(token.withLock { $0 })", forHTTPHeaderField: "Authorization")
    }

    func refresh() async throws {
        refreshes.withLock { $0 += 1 }
        await gate?.passed()
        guard let refreshed else { throw RefreshFailed() }
        token.withLock { $0 = refreshed }
    }
}

/// Closed until ``open()``: a task awaiting ``passed()`` goes on only then, so a test decides
/// when something asynchronous may end.
final class RefreshGate: Sendable {
    private let state = Locked<(isOpen: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func passed() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.waiting.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { state in
            state.isOpen = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}
