// Mirrors the article "Delegates and Interception" (Courier.docc/DelegatesAndInterception.md).
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// What the samples print, so that they can call `print` as written.
private let printed = Recorder<String>()
private func print(_ items: Any..., separator: String = " ") {
    printed.append(items.map { "\($0)" }.joined(separator: separator))
}

/// Scaffolding for the authenticator sample: the token service, counting its calls.
private let tokenFetches = Recorder<String>()
private func fetchToken() async throws -> String {
    tokenFetches.append("fresh")
    return "fresh"
}

/// The samples' types, in a namespace of their own (the test module has a TokenAuthenticator).
enum DelegatesDocs {
    // Delegates and Interception › Overview (verbatim)
    final class APIDelegate: RequestQueueDelegate {
        func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {
            request.setValue("docs/1.0", forHTTPHeaderField: "User-Agent")
        }

        func requestQueue(_ queue: RequestQueue, didReceive head: ResponseHead) {
            print(head.status, head.url.absoluteString)
        }

        func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics) {
            print("\(metrics.id): status \(metrics.statusCode ?? 0), \(metrics.attempts) attempt(s)")
        }
    }

    // Delegates and Interception › Request and response delegates (verbatim)
    struct ReportRequest: Request, RequestDelegate {
        typealias ResponseType = Report
        var path: String { "/reports/latest" }

        func requestWillSend(_ urlRequest: inout URLRequest) {
            urlRequest.setValue("2", forHTTPHeaderField: "X-Report-Version")
        }
    }

    struct Report: Response, Decodable, ResponseDelegate {
        let title: String

        func responseDidReceive(_ head: ResponseHead) {
            print("report from", head.url.path)
        }
    }

    // Delegates and Interception › Credentials that refresh once for all (verbatim)
    final class TokenAuthenticator: Authenticator, @unchecked Sendable {
        private let lock = NSLock()
        private var token = "stale"         // guarded by `lock`

        func authenticate(_ request: inout URLRequest) {
            let token = lock.withLock { self.token }
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        }

        func refresh() async throws {
            let fresh = try await fetchToken()
            lock.withLock { token = fresh }
        }
    }

    // Delegates and Interception › Redirects and sensitive headers (verbatim)
    final class SameHostRedirects: RequestQueueDelegate {
        func requestQueue(_ queue: RequestQueue, shouldRedirect request: URLRequest, to newRequest: URLRequest,
                          response: HTTPURLResponse) -> URLRequest? {
            newRequest.url?.host == request.url?.host ? newRequest : nil
        }
    }

    // Delegates and Interception › Requests as curl commands (verbatim)
    final class FailureLogger: RequestQueueDelegate {
        func requestQueue(_ queue: RequestQueue, didFailWith request: URLRequest?, error: RequestError) {
            print(error, request?.curlCommand() ?? "(nothing was sent)")
        }
    }
}

final class DelegatesAndInterceptionDocsTests: XCTestCase {
    typealias APIDelegate = DelegatesDocs.APIDelegate
    typealias ReportRequest = DelegatesDocs.ReportRequest
    typealias Report = DelegatesDocs.Report
    typealias TokenAuthenticator = DelegatesDocs.TokenAuthenticator
    typealias SameHostRedirects = DelegatesDocs.SameHostRedirects
    typealias FailureLogger = DelegatesDocs.FailureLogger

    struct LogIn: JSONBodyData { let username: String; let password: String }
    struct LogInRequest: Request {
        typealias ResponseType = EmptyResponse
        let parameters: LogIn
        var path: String { "/login" }
        var method: HTTPMethod { .post }
    }
    struct Get<ResponseType: Response>: Request {
        var path: String
        var method: HTTPMethod { .get }
    }

    /// Logs every hook, to check the documented order.
    final class OrderDelegate: RequestQueueDelegate {
        let log: Recorder<String>
        init(log: Recorder<String>) { self.log = log }
        func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) { log.append("queue.willSend") }
        func requestQueue(_ queue: RequestQueue, didSend request: URLRequest) { log.append("queue.didSend") }
        // The Courier 1 form, taking an HTTPURLResponse: still called, in the same place.
        func requestQueue(_ queue: RequestQueue, didReceive response: HTTPURLResponse) { log.append("queue.didReceive \(response.statusCode)") }
        func requestQueue(_ queue: RequestQueue, willRetry request: URLRequest, attempt: Int, after error: RequestError) {
            log.append("queue.willRetry \(attempt)")
        }
        func requestQueue(_ queue: RequestQueue, didFailWith request: URLRequest?, error: RequestError) {
            log.append("queue.didFail \(request == nil ? "nil" : "request")")
        }
        func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics) {
            log.append("queue.didFinish attempts=\(metrics.attempts) status=\(metrics.statusCode.map(String.init) ?? "none")")
        }
    }

    override func setUp() {
        super.setUp()
        _ = printed.all   // the log is shared; tests compare only what they add
    }

    private func newLines(since count: Int) -> [String] { Array(printed.all.dropFirst(count)) }

    // Delegates and Interception › Overview + Request and response delegates: what willSend sets
    // goes on the wire, and the hooks run in the documented order.
    func testQueueRequestAndResponseDelegates() throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/reports/latest", json: #"{"title": "Q3"}"#)
        let start = printed.all.count
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = DocsSupport.callbacks
        configuration.transport = .fixtures(fixtures)
        let queue = RequestQueue(configuration: configuration, delegate: APIDelegate(), baseURL: URL(string: "https://api.example.com/v1"))

        let done = expectation(description: "observer")
        let id = queue.add(ReportRequest())
        queue.addObserver(for: id) { (_: Result<Report, RequestError>) in print("observer"); done.fulfill() }
        wait(for: [done], timeout: 30)

        let sent = try XCTUnwrap(fixtures.receivedRequests.first)
        XCTAssertEqual(sent.value(forHTTPHeaderField: "User-Agent"), "docs/1.0")
        XCTAssertEqual(sent.value(forHTTPHeaderField: "X-Report-Version"), "2")
        XCTAssertEqual(newLines(since: start), [
            "200 https://api.example.com/v1/reports/latest",
            "report from /v1/reports/latest",
            "\(id): status 200, 1 attempt(s)",
            "observer",
        ])
        // The sample's own line, with the default configuration (nothing is sent):
        let sample = RequestQueue(delegate: APIDelegate(), baseURL: URL(string: "https://api.example.com/v1"))
        XCTAssertNotNil(sample.delegate)
    }

    // Delegates and Interception › The steps, in order: failures, retries, and a nil request.
    func testOrderOfStepsForFailuresAndRetries() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/flaky", status: 503)
        let log = Recorder<String>()
        let queue = DocsSupport.queue(fixtures, delegate: OrderDelegate(log: log)) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 2, baseDelay: 0.01, jitter: 0)
        }
        do {
            _ = try await queue.send(Get<EmptyResponse>(path: "/flaky"))
            XCTFail("expected the final 503")
        } catch {
            XCTAssertEqual(error.statusCode, 503)
        }
        XCTAssertEqual(log.all, [
            "queue.willSend", "queue.didSend", "queue.didReceive 503", "queue.willRetry 1",
            "queue.willSend", "queue.didSend", "queue.didReceive 503",
            "queue.didFail request", "queue.didFinish attempts=2 status=503",
        ])

        let noBase = DocsSupport.queue(fixtures, baseURL: nil, delegate: OrderDelegate(log: log))
        let before = log.all.count
        _ = try? await noBase.send(Get<EmptyResponse>(path: "/flaky"))
        XCTAssertEqual(Array(log.all.dropFirst(before)), ["queue.didFail nil", "queue.didFinish attempts=0 status=none"])
    }

    // Delegates and Interception › Credentials that refresh once for all: three requests refused
    // together share one refresh, are each sent once more with the new token, and (as the fixture
    // refuses every token) then fail with their 401.
    func testOneRefreshForAllRefusedRequests() async throws {
        let fixtures = FixtureTransport()
        fixtures.holdsAnswers = true    // all three are in flight before the first 401 arrives
        fixtures.stub(.get, "/me", status: 401)
        let fetchesBefore = tokenFetches.all.count

        var configuration = RequestQueueConfiguration.default
        configuration.authenticator = TokenAuthenticator()
        configuration.callbackQueue = DocsSupport.callbacks
        configuration.transport = .fixtures(fixtures)
        let queue = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))

        let results = Recorder<Int?>()
        let ended = expectation(description: "all three ended")
        ended.expectedFulfillmentCount = 3
        for page in 0..<3 {  // three different requests: identical ones would share one transfer
            queue.addObserver(for: queue.add(Get<EmptyResponse>(path: "/me?page=\(page)"))) { (result: Result<EmptyResponse, RequestError>) in
                switch result {
                case .success: results.append(200)
                case .failure(let error): results.append(error.statusCode)
                }
                ended.fulfill()
            }
        }
        try await fixtures.waitForHeldRequests(3)
        fixtures.holdsAnswers = false   // the resends with the fresh token are answered at once
        fixtures.releaseAll()
        await fulfillment(of: [ended], timeout: 30)
        let statuses = results.all
        XCTAssertEqual(statuses, [401, 401, 401])
        XCTAssertEqual(tokenFetches.all.count - fetchesBefore, 1, "one refresh for all")
        let tokens = fixtures.receivedRequests.map { $0.value(forHTTPHeaderField: "Authorization") ?? "none" }
        XCTAssertEqual(tokens, ["Bearer stale", "Bearer stale", "Bearer stale", "Bearer fresh", "Bearer fresh", "Bearer fresh"])
    }

    // Delegates and Interception › Credentials that refresh once for all: a failing refresh.
    func testFailingRefreshFailsTheWaitingRequests() async throws {
        struct Expired: Error {}
        final class Failing: Authenticator {
            func authenticate(_ request: inout URLRequest) {}
            func refresh() async throws { throw Expired() }
        }
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/me", status: 401)
        let queue = DocsSupport.queue(fixtures) { $0.authenticator = Failing() }
        do {
            _ = try await queue.send(Get<EmptyResponse>(path: "/me"))
            XCTFail("expected authenticationFailed")
        } catch {
            guard case .authenticationFailed(let underlying) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(underlying is Expired)
        }
    }

    // Delegates and Interception › Retries: the sample policy, and the default's values.
    func testRetryPolicy() async throws {
        var configuration = RequestQueueConfiguration.default
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 4, baseDelay: 0.2)
        XCTAssertEqual(configuration.retryPolicy?.maximumAttempts, 4)

        let policy = RetryPolicy.default
        XCTAssertEqual(policy.maximumAttempts, 3)
        XCTAssertEqual(policy.methods, [.get, .head, .put, .delete, .options, .trace])
        XCTAssertEqual(policy.statusCodes, [408, 429, 500, 502, 503, 504])
        XCTAssertEqual(policy.urlErrorCodes, [.cannotConnectToHost, .networkConnectionLost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet])
        XCTAssertEqual(policy.baseDelay, 0.5)
        XCTAssertEqual(policy.maximumDelay, 30)
        XCTAssertEqual(policy.jitter, 0.5)
        XCTAssertTrue(policy.honorsRetryAfter)

        // Observers see only the final result of a retried request, under one ID.
        let fixtures = FixtureTransport()
        fixtures.stub(.post, "/orders", status: 503)
        let queue = DocsSupport.queue(fixtures) { $0.retryPolicy = RetryPolicy(baseDelay: 0.01) }
        struct Order: Request { typealias ResponseType = EmptyResponse; var path: String { "/orders" }; var method: HTTPMethod { .post } }
        _ = try? await queue.send(Order())
        XCTAssertEqual(fixtures.receivedRequests.count, 1, "a POST is not retried by default")
    }

    // Delegates and Interception › Redirects and sensitive headers: cross-origin hops drop the
    // secrets; a delegate can refuse a redirect.
    func testRedirectsAndSensitiveHeaders() async throws {
        struct Keyed: Request {
            typealias ResponseType = EmptyResponse
            var path: String { "/old" }
            var method: HTTPMethod { .get }
            var headers: [String: String] { ["Authorization": "Bearer t", "X-Api-Key": "k", "X-Trace": "1"] }
        }
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/old", status: 302, headers: ["Location": "https://cdn.example.net/new"])
        fixtures.stub(.get, "/new")
        var configuration = RequestQueueConfiguration.default
        configuration.redirectPolicy = .follow(maximum: 5)
        configuration.sensitiveHeaders = ["X-Api-Key"]
        configuration.callbackQueue = DocsSupport.callbacks
        configuration.transport = .fixtures(fixtures)
        let queue = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))
        _ = try await queue.send(Keyed())
        let hop = try XCTUnwrap(fixtures.receivedRequests.last)
        XCTAssertEqual(hop.url?.absoluteString, "https://cdn.example.net/new")
        XCTAssertNil(hop.value(forHTTPHeaderField: "Authorization"))
        XCTAssertNil(hop.value(forHTTPHeaderField: "X-Api-Key"))
        XCTAssertEqual(hop.value(forHTTPHeaderField: "X-Trace"), "1")

        let refusing = DocsSupport.queue(fixtures, delegate: SameHostRedirects())
        do {
            _ = try await refusing.send(Keyed())
            XCTFail("expected the 302 itself")
        } catch {
            XCTAssertEqual(error.statusCode, 302)
        }
    }

    // Delegates and Interception › Requests as curl commands.
    func testCurlCommands() async throws {
        let fixtures = FixtureTransport()
        let queue = DocsSupport.queue(fixtures, delegate: FailureLogger())
        let start = printed.all.count

        print(try queue.curlCommand(for: LogInRequest(parameters: LogIn(username: "ada", password: "secret"))))
        XCTAssertEqual(newLines(since: start), [
            #"curl -X POST 'https://api.example.com/v1/login' -H 'Content-Type: application/json' --data-binary '{"username":"ada","password":"secret"}'"#,
        ])
        XCTAssertTrue(fixtures.receivedRequests.isEmpty, "curlCommand sends nothing")

        // FailureLogger: no fixture matches, so the request fails after it was sent.
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/me")!)
        request.setValue("Bearer t0k3n", forHTTPHeaderField: "Authorization")
        XCTAssertEqual(request.curlCommand(), "curl 'https://api.example.com/v1/me' -H 'Authorization: <redacted>'")
        XCTAssertEqual(request.curlCommand(revealingSecrets: true), "curl 'https://api.example.com/v1/me' -H 'Authorization: Bearer t0k3n'")
        _ = try? await queue.send(Get<EmptyResponse>(path: "/me"))
        let logged = newLines(since: start + 1)
        XCTAssertEqual(logged.count, 1)
        XCTAssertTrue(logged.first?.hasSuffix("curl 'https://api.example.com/v1/me'") == true, "\(logged)")
        XCTAssertTrue(logged.first?.hasPrefix("No fixture matches GET /v1/me.") == true, "\(logged)")
    }
}
