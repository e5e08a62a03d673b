// Mirrors the article "Testing with Fixtures" (Courier.docc/TestingWithFixtures.md).
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class TestingWithFixturesDocsTests: XCTestCase {
    // Scaffolding for the samples.
    typealias Profile = GettingStartedDocsTests.Profile
    typealias ProfileRequest = GettingStartedDocsTests.ProfileRequest
    struct Get<ResponseType: Decodable & Sendable>: Request {
        var path: String
        var method: HTTPMethod = .get
        var timeout: TimeInterval?
    }
    struct Post<ParametersType: Parameters, ResponseType: Decodable & Sendable>: Request {
        var parameters: ParametersType
        var path: String
        var method: HTTPMethod { .post }
    }
    // Testing with Fixtures › Deciding when answers arrive (verbatim)
    struct ReportRequest: Request {
        typealias ResponseType = EmptyResponse
        var timeout: TimeInterval? = nil
        var path: String { "/reports/latest" }
        var method: HTTPMethod { .get }
    }
    struct Token: Decodable { let token: String }
    struct LogIn: JSONBodyData { let user: String }

    // Testing with Fixtures › Overview (the whole sample) and the receivedRequests assertion.
    func testStubsThroughAQueue() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/42", json: #"{"id": 42, "name": "Ada"}"#)
        fixtures.stub(.post, "/login", status: 401, json: #"{"error": "bad password"}"#)

        var configuration = RequestQueueConfiguration.default
        configuration.transport = .fixtures(fixtures)
        configuration.callbackQueue = DispatchQueue(label: "tests")
        let queue = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))

        let profile = try await queue.send(ProfileRequest(userID: 42))

        XCTAssertEqual(profile, Profile(id: 42, name: "Ada"))
        XCTAssertEqual(fixtures.receivedRequests.first?.url?.absoluteString, "https://api.example.com/v1/users/42")
        do {
            _ = try await queue.send(Post<LogIn, Token>(parameters: LogIn(user: "ada"), path: "/login"))
            XCTFail("expected a 401")
        } catch {
            XCTAssertEqual(error.statusCode, 401)
        }
    }

    // Testing with Fixtures › Matching: path ends, query subsets, body matchers, headers ignored.
    func testMatching() async throws {
        let fixtures = FixtureTransport()
        fixtures.add(Fixture(path: "/search", query: ["q": "swift"], body: Data(#"{"id": 7, "name": "Swift"}"#.utf8)))
        fixtures.add(Fixture(method: .post, path: "/login", bodyJSON: #"{"user": "ada"}"#, body: Data(#"{"token": "t"}"#.utf8)))
        fixtures.add(Fixture(method: .post, path: "/login", bodyContains: "grace", status: 403))
        let queue = DocsSupport.queue(fixtures, baseURL: "https://elsewhere.example.org/api/v1")
        let swift = try await queue.send(Get<Profile>(path: "/search?q=swift&page=2"))
        XCTAssertEqual(swift.name, "Swift")
        let token = try await queue.send(Post<LogIn, Token>(parameters: LogIn(user: "ada"), path: "/login"))
        XCTAssertEqual(token.token, "t")
        do {
            _ = try await queue.send(Post<LogIn, Token>(parameters: LogIn(user: "grace"), path: "/login"))
            XCTFail("expected a 403")
        } catch {
            XCTAssertEqual(error.statusCode, 403)
        }
    }

    // Testing with Fixtures › When nothing matches (the sample's fixtures and message).
    func testNoFixtureListsTheNearest() async {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/1", json: "{}")
        fixtures.stub(.post, "/users", json: "{}")
        fixtures.stub(.get, "/search", query: ["q": "a"], json: "{}")
        do {
            _ = try await DocsSupport.queue(fixtures).send(Get<EmptyResponse>(path: "/users"))
            XCTFail("expected noFixture")
        } catch {
            guard case .noFixture(let request, let nearest) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(request, "GET /v1/users")
            XCTAssertEqual(nearest.count, 3)
            XCTAssertEqual(error.description,
                           "No fixture matches GET /v1/users. Nearest: POST /users → 200 (method POST); "
                           + "GET /users/1 → 200 (path /users/1); GET /search?q=a → 200 (path /search, query q missing).")
        }
    }

    // Testing with Fixtures › Fixture files: the sample file, the three top-level forms, errors.
    func testFixtureFiles() async throws {
        let folder = try DocsSupport.temporaryFolder("fixtures")
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"""
        {"fixtures": [
          {"method": "GET", "path": "/users/1", "query": {"expand": "true"},
           "status": 200, "headers": {"X-Request-Id": "42"}, "json": {"id": 1, "name": "Ada"}},
          {"method": "POST", "path": "/login", "bodyJSON": {"user": "ada"}, "json": {"token": "t"}},
          {"method": "POST", "path": "/login", "bodyContains": "grace", "status": 403, "body": "no"},
          {"path": "/avatar", "bodyFile": "avatar.png", "headers": {"Content-Type": "image/png"}}
        ]}
        """#.utf8).write(to: folder.appendingPathComponent("a.json"))
        try Data([0x89, 0x50, 0x4E, 0x47]).write(to: folder.appendingPathComponent("avatar.png"))
        try Data(#"{"path": "/single", "body": "one"}"#.utf8).write(to: folder.appendingPathComponent("b.json"))
        try Data(#"[{"path": "/listed", "status": 204}]"#.utf8).write(to: folder.appendingPathComponent("c.json"))
        try Data("not a fixture".utf8).write(to: folder.appendingPathComponent("notes.txt"))

        let queue = DocsSupport.queue(try FixtureTransport(directory: folder))
        let ada = try await queue.send(Get<Profile>(path: "/users/1?expand=true"))
        XCTAssertEqual(ada, Profile(id: 1, name: "Ada"))
        let token = try await queue.send(Post<LogIn, Token>(parameters: LogIn(user: "ada"), path: "/login"))
        XCTAssertEqual(token.token, "t")
        let avatar = try await queue.send(Get<Data>(path: "/avatar"))
        XCTAssertEqual(avatar, Data([0x89, 0x50, 0x4E, 0x47]))
        let single = try await queue.send(Get<Data>(path: "/single"))
        XCTAssertEqual(single, Data("one".utf8))
        _ = try await queue.send(Get<EmptyResponse>(path: "/listed"))

        try Data(#"{"method": "GET"}"#.utf8).write(to: folder.appendingPathComponent("d.json"))
        XCTAssertThrowsError(try FixtureTransport(directory: folder)) { error in
            guard let error = error as? FixtureError else { return XCTFail("\(error)") }
            XCTAssertTrue(error.description.contains("d.json"), error.description)
            XCTAssertTrue(error.description.contains("needs a \"path\""), error.description)
        }
    }

    // Testing with Fixtures › Simulating the network: bytesPerSecond makes progress observable,
    // and a request that times out during a simulated wait stops at once (the fixture's own 60 s
    // delay is never waited out: the expectation gives up long before).
    func testSimulatingTheNetwork() throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/report", body: Data(count: 30_000))
        fixtures.add(Fixture(path: "/slow", delay: 60))
        fixtures.latency = 0.3              // seconds before each answer starts
        fixtures.bytesPerSecond = 200_000   // bodies move at this speed; progress observers see them
        // (Scaffolding: the report does not move until its observers are in place.)
        fixtures.holdAnswers { $0.url?.path.hasSuffix("/report") == true }
        let queue = DocsSupport.queue(fixtures)

        let progress = Recorder<TransferProgress>()
        let firstReport = expectation(description: "a report while the answer is held")
        firstReport.assertForOverFulfill = false
        let done = expectation(description: "both")
        done.expectedFulfillmentCount = 2
        let id = queue.add(Get<EmptyResponse>(path: "/report"))
        queue.addProgressObserver(for: id, interval: 0.02) { progress.append($0); firstReport.fulfill() }
        queue.addObserver(for: id) { (_: Result<EmptyResponse, RequestError>) in done.fulfill() }
        let slow = queue.add(Get<EmptyResponse>(path: "/slow", timeout: 0.1))
        queue.addObserver(for: slow) { (result: Result<EmptyResponse, RequestError>) in
            if case .failure(.timedOut) = result { done.fulfill() }
        }
        try fixtures.waitForHeldRequests(1)
        // Two reports at least, by design rather than by how many polls the machine manages: one
        // while the answer is held (nothing moved), and the final counts, which differ from it.
        wait(for: [firstReport], timeout: 30)
        fixtures.releaseAll()
        wait(for: [done], timeout: 30)
        XCTAssertGreaterThan(progress.all.count, 1)
        XCTAssertEqual(progress.all.first?.bytesReceived, 0)
        XCTAssertEqual(progress.all.last?.bytesReceived, 30_000)
    }

    // Testing with Fixtures › Deciding when answers arrive (the first sample): the second request
    // is answered while the first is still held.
    func testDecidingWhenAnswersArrive() throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/1", json: #"{"id": 1, "name": "Ada"}"#)
        fixtures.stub(.get, "/users/2", json: #"{"id": 2, "name": "Grace"}"#)
        let queue = DocsSupport.queue(fixtures)
        let answered = Recorder<String>()
        func expectAnswer(_ id: RequestID) -> XCTestExpectation {
            let done = expectation(description: "answer to \(id)")
            queue.addObserver(for: id) { (result: Result<Profile, RequestError>) in
                answered.append((try? result.get().name) ?? "\(result)")
                done.fulfill()
            }
            return done
        }

        fixtures.holdsAnswers = true                    // every answer waits until it is released
        let first = queue.add(ProfileRequest(userID: 1))
        let second = queue.add(ProfileRequest(userID: 2))
        let held = try fixtures.waitForHeldRequests(2)  // both are in flight
        XCTAssertEqual(held.map(\.description), ["GET /v1/users/1 (held #1)", "GET /v1/users/2 (held #2)"])
        XCTAssertEqual(fixtures.heldRequests, held)
        fixtures.release(held[1])                       // the second is answered first
        wait(for: [expectAnswer(second)], timeout: 30)
        XCTAssertEqual(answered.all, ["Grace"])
        XCTAssertFalse(queue.isFinished(first))
        XCTAssertEqual(fixtures.heldRequests, [held[0]])
        fixtures.release(held[0])
        wait(for: [expectAnswer(first)], timeout: 30)
        XCTAssertEqual(answered.all, ["Grace", "Ada"])
        XCTAssertEqual(fixtures.heldRequests, [])

        // Fewer held than waited for: the error names those that are.
        let third = queue.add(ProfileRequest(userID: 1))
        try fixtures.waitForHeldRequests(1)
        XCTAssertThrowsError(try fixtures.waitForHeldRequests(2, timeout: 0.1)) { error in
            guard case FixtureError.heldRequestsTimedOut(2, let names, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(names, ["GET /v1/users/1 (held #3)"])
        }
        queue.cancel(third)   // a held request ends as cancelled and leaves the held list
        guard case .failure(.cancelled)? = result(of: third, on: queue, as: Profile.self) else {
            return XCTFail("expected cancelled")
        }
        XCTAssertEqual(fixtures.heldRequests, [])
    }

    // Testing with Fixtures › Deciding when answers arrive (the second sample): a rule holds
    // reports only; one times out while held, the other goes when released.
    func testHoldingSomeAnswers() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/1", json: #"{"id": 1, "name": "Ada"}"#)
        fixtures.stub(.get, "/reports/latest")
        let queue = DocsSupport.queue(fixtures)
        let results = Recorder<String>()
        let slowEnded = expectation(description: "slow ended"), reportEnded = expectation(description: "report ended")

        fixtures.holdAnswers { $0.url?.path.hasSuffix("/reports/latest") == true }
        let slow = queue.add(ReportRequest(timeout: 0.5))
        let report = queue.add(ReportRequest())
        for (name, id, ended) in [("slow", slow, slowEnded), ("report", report, reportEnded)] {
            queue.addObserver(for: id) { (result: Result<EmptyResponse, RequestError>) in
                switch result {
                case .success: results.append("\(name) answered")
                case .failure(let error): results.append("\(name) \(error)")
                }
                ended.fulfill()
            }
        }
        let profile = try await queue.send(ProfileRequest(userID: 1))   // not held: answered at once
        XCTAssertEqual(profile.name, "Ada")
        // `slow` ends as RequestError.timedOut while its answer is held; `report` waits.
        await fulfillment(of: [slowEnded], timeout: 30)
        XCTAssertEqual(results.all, ["slow \(RequestError.timedOut)"])
        let held = try await fixtures.waitForHeldRequests(1)
        XCTAssertEqual(held.map(\.request.url?.path), ["/v1/reports/latest"])
        XCTAssertEqual(fixtures.heldRequests, held)

        fixtures.holdsAnswers = false   // what is sent from now on is answered at once
        fixtures.releaseAll()           // what is held (`report`) goes, in the order it arrived
        await fulfillment(of: [reportEnded], timeout: 30)
        XCTAssertEqual(results.all, ["slow \(RequestError.timedOut)", "report answered"])
        _ = try await queue.send(ReportRequest())   // no longer held
        XCTAssertEqual(fixtures.heldRequests, [])
    }

    // Testing with Fixtures › Recording a session, then replaying it. Recording needs a server,
    // so the recording queue is only made (that sends nothing); the replay reads a folder written
    // the way the recorder writes it.
    func testRecordingConfigurationAndReplay() async throws {
        let fixturesFolder = try DocsSupport.temporaryFolder("recorded")
        defer { try? FileManager.default.removeItem(at: fixturesFolder) }

        var recording = RequestQueueConfiguration.default
        recording.transport = .recording(into: fixturesFolder)
        let recorder = RequestQueue(configuration: recording, baseURL: URL(string: "https://api.example.com/v1"))
        XCTAssertEqual(try recorder.curlCommand(for: ProfileRequest(userID: 1)), "curl 'https://api.example.com/v1/users/1'")

        try Data(#"""
        {
          "json" : {"id" : 1, "name" : "Ada"},
          "method" : "GET",
          "path" : "/v1/users/1",
          "status" : 200
        }
        """#.utf8).write(to: fixturesFolder.appendingPathComponent("GET-v1-users-1.json"))
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = DocsSupport.callbacks
        configuration.transport = .fixtures(try FixtureTransport(directory: fixturesFolder))
        let replay = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com/v1"))
        let ada = try await replay.send(ProfileRequest(userID: 1))
        XCTAssertEqual(ada, Profile(id: 1, name: "Ada"))
    }
}
