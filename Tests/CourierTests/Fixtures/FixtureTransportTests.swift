import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The fixture transport: stubs, fixture folders, matching, misses, simulated transfers, recording.
final class FixtureTransportTests: XCTestCase {
    struct User: Response, Decodable, Equatable { let id: Int; let name: String }

    private func queue(_ fixtures: FixtureTransport, base: String = "https://api.example.com/v1") -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .fixtures(fixtures)
        return RequestQueue(configuration: configuration, baseURL: URL(string: base))
    }

    func testStubsAnswerThroughTheWholePipeline() async throws {
        // Given stubs for a user and a missing user
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/1", json: #"{"id": 1, "name": "Ada"}"#)
        fixtures.stub(.get, "/users/2", status: 404, json: #"{"error": "no such user"}"#)
        let queue = queue(fixtures)

        // When requests go through a queue whose base URL has a path
        let ada = try await queue.send(PathRequest<User>("/users/1"))
        do {
            _ = try await queue.send(PathRequest<User>("/users/2"))
            XCTFail("expected a 404")
        } catch {
            // Then validation ran on the fixture's status, as it would on the network's
            guard case .validationFailed(let response, let body) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(response.statusCode, 404)
            XCTAssertEqual(body.string, #"{"error": "no such user"}"#)
        }
        XCTAssertEqual(ada, User(id: 1, name: "Ada"))
        XCTAssertEqual(fixtures.receivedRequests.map { $0.url!.path }, ["/v1/users/1", "/v1/users/2"])
    }

    func testFolderOfFixturesWithQueryAndBodyMatchers() async throws {
        // Given a folder with a list of fixtures and a body file beside them
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fixtures-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"""
        {"fixtures": [
          {"method": "GET", "path": "/search", "query": {"q": "swift"}, "json": {"id": 7, "name": "Swift"}},
          {"method": "GET", "path": "/search", "json": {"id": 0, "name": "anything"}},
          {"method": "POST", "path": "/login", "bodyJSON": {"user": "ada"}, "json": {"id": 1, "name": "Ada"}},
          {"method": "POST", "path": "/login", "bodyContains": "grace", "status": 403, "body": "no"}
        ]}
        """#.utf8).write(to: folder.appendingPathComponent("a.json"))
        try Data(#"{"path": "/avatar", "bodyFile": "avatar.bin", "headers": {"Content-Type": "image/png"}}"#.utf8)
            .write(to: folder.appendingPathComponent("b.json"))
        try Data([0x89, 0x50, 0x4E, 0x47]).write(to: folder.appendingPathComponent("avatar.bin"))
        let queue = queue(try FixtureTransport(directory: folder))

        // Then each request gets the first fixture that matches it
        struct Login: JSONBodyData { let user: String }
        struct Raw: Response { let data: Data; init(body: ResponseData, head: ResponseHead) { data = body.data } }
        let swift = try await queue.send(PathRequest<User>("/search?q=swift&page=2"))
        let other = try await queue.send(PathRequest<User>("/search?q=kotlin"))
        let ada = try await queue.send(BodyRequest<Login, User>(parameters: Login(user: "ada"), path: "/login"))
        let avatar = try await queue.send(PathRequest<Raw>("/avatar"))
        XCTAssertEqual(swift.name, "Swift")
        XCTAssertEqual(other.name, "anything")
        XCTAssertEqual(ada.name, "Ada")
        XCTAssertEqual(avatar.data, Data([0x89, 0x50, 0x4E, 0x47]))
        do {
            _ = try await queue.send(BodyRequest<Login, User>(parameters: Login(user: "grace"), path: "/login"))
            XCTFail("expected a 403")
        } catch {
            XCTAssertEqual(error.statusCode, 403)
        }
    }

    func testUnmatchedRequestListsTheNearestFixtures() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/1", json: "{}")
        fixtures.stub(.post, "/users", json: "{}")
        fixtures.stub(.get, "/search", query: ["q": "a"], json: "{}")
        do {
            _ = try await queue(fixtures).send(PathRequest<EmptyResponse>("/users", method: .get))
            XCTFail("expected no fixture")
        } catch {
            guard case .noFixture(let request, let nearest) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(request, "GET /v1/users")
            XCTAssertEqual(nearest.first, "POST /users → 200 (method POST)")
            XCTAssertEqual(nearest.count, 3)
            XCTAssertTrue(error.description.hasPrefix("No fixture matches GET /v1/users. Nearest: POST /users → 200 (method POST);"),
                          error.description)
        }
    }

    func testBrokenFixtureFileNamesTheFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-broken-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"method": "GET"}"#.utf8).write(to: folder.appendingPathComponent("nopath.json"))
        XCTAssertThrowsError(try FixtureTransport(directory: folder)) { error in
            XCTAssertTrue("\(error)".contains("nopath.json"), "\(error)")
            XCTAssertTrue("\(error)".contains("needs a \"path\""), "\(error)")
        }
    }

    func testSimulatedTransferShowsProgress() throws {
        // Given a 40 KB answer at 20 KB/s: the body moves for 2 s (the fixture's own timer, which
        // never ends it early)
        let fixtures = FixtureTransport()
        fixtures.bytesPerSecond = 20_000
        fixtures.stub(.get, "/big", body: Data(count: 40_000))
        fixtures.holdsAnswers = true   // the transfer starts once the observers are in place
        let queue = queue(fixtures)
        let reports = Recorder<TransferProgress>()
        let firstReport = expectation(description: "a report while the answer is held")
        firstReport.assertForOverFulfill = false
        let done = expectation(description: "done")

        // When its progress is observed
        let id = queue.add(PathRequest<EmptyResponse>("/big"))
        queue.addProgressObserver(for: id, interval: 0.02) { reports.append($0); firstReport.fulfill() }
        queue.addObserver(for: id) { (_: Result<EmptyResponse, RequestError>) in done.fulfill() }
        try fixtures.waitForHeldRequests(1)
        wait(for: [firstReport], timeout: 30)   // nothing has moved yet
        fixtures.releaseAll()
        wait(for: [done], timeout: 30)

        // Then it moved in steps up to the whole body. The first report (0, while held) and the
        // final one (40,000) come by design; a step between them needs one poll of the queue's
        // progress timer (every 50 ms) in the 2 s the body moves, 40 of its intervals: only a
        // machine that runs no timer for 2 s would miss it.
        let received = reports.all.map(\.bytesReceived)
        XCTAssertEqual(received.first, 0)
        XCTAssertGreaterThan(received.count, 2, "\(received)")
        XCTAssertEqual(received, received.sorted())
        XCTAssertEqual(received.last, 40_000)
    }

    func testRecordingThenReplayingOffline() async throws {
        // Given a session recorded against httpbin
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-recorded-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let recording = try HTTPBin.queue { $0.transport = .recording(into: folder) }
        let live = try await recording.send(PathRequest<EchoObject>("/get?topic=fixtures"))
        let liveBytes = try await recording.send(PathRequest<RawBody>("/bytes/64?seed=3"))

        // When it is replayed with no network (the base URL points nowhere)
        let fixtures = try FixtureTransport(directory: folder)
        let replay = queue(fixtures, base: "http://127.0.0.1:\(HTTPBin.closedPort())")
        let replayed = try await replay.send(PathRequest<EchoObject>("/get?topic=fixtures"))
        let replayedBytes = try await replay.send(PathRequest<RawBody>("/bytes/64?seed=3"))

        // Then the answers are the same
        XCTAssertEqual(replayed.field("args") as? [String: String], ["topic": "fixtures"])
        XCTAssertEqual(replayed.field("args") as? [String: String], live.field("args") as? [String: String])
        XCTAssertEqual(replayedBytes.data, liveBytes.data)
        XCTAssertEqual(replayedBytes.data.count, 64)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        XCTAssertEqual(files, ["GET-bytes-64.body", "GET-bytes-64.json", "GET-get.json"])
    }
}

struct RawBody: Response {
    let data: Data
    init(body: ResponseData, head: ResponseHead) { data = body.data }
}

extension FixtureTransportTests {
    func testFixtureMembersOfTheWrongTypeAreNamed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-types-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (content, expected) in [(#"{"path": "/a", "status": "200"}"#, "\"status\" must be a number"),
                                    (#"{"path": "/a", "headers": {"X-N": 1}}"#, "\"headers\" must be an object of strings"),
                                    (#"{"path": "/a", "query": {"q": [1]}}"#, "query item \"q\" must be a string or a number")] {
            let file = folder.appendingPathComponent("f.json")
            try Data(content.utf8).write(to: file)
            XCTAssertThrowsError(try FixtureTransport(directory: folder)) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
    }

    func testTimeoutCoversBackoffBetweenRetries() async throws {
        // Given a server that always answers 503, a long backoff and a short timeout
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/flaky", status: 503, body: Data())
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .fixtures(fixtures)
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, baseDelay: 20, jitter: 0)
        let queue = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com"))
        let start = ContinuousClock.now
        do {
            _ = try await queue.send(PathRequest<EmptyResponse>("/flaky", timeout: 0.2))
            XCTFail("expected a timeout")
        } catch {
            // Then the request times out during the backoff, not after every attempt
            guard case .timedOut = error else { return XCTFail("\(error)") }
            // The bound tells the two designs apart, not the machine's speed: a queue that waits
            // out the backoff needs 20 s at least; one whose timeout covers it needs 0.2 s plus
            // scheduling, 50 times less than the bound.
            XCTAssertLessThan(ContinuousClock.now - start, .seconds(10), "the 20 s backoff was not waited out")
            XCTAssertEqual(fixtures.receivedRequests.count, 1)
        }
    }
}

extension FixtureTransportTests {
    func testFixturesMatchOnRequestHeadersSoCredentialsCanBeTestedOffline() async throws {
        // Given a server that answers only with the fresh token, and 401 otherwise
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/me", requestHeaders: ["authorization": "Bearer fresh"], json: #"{"id": 1, "name": "Ada"}"#)
        fixtures.stub(.get, "/me", status: 401, headers: ["WWW-Authenticate": "Bearer"], body: Data())
        let authenticator = TokenAuthenticator(token: "stale", refreshed: "fresh")
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.transport = .fixtures(fixtures)
        configuration.authenticator = authenticator
        let queue = RequestQueue(configuration: configuration, baseURL: URL(string: "https://api.example.com"))

        // When a request is refused, the credentials refresh and it is sent again
        let user = try await queue.send(PathRequest<User>("/me"))

        // Then the second send carried the fresh token and matched the first fixture
        XCTAssertEqual(user, User(id: 1, name: "Ada"))
        XCTAssertEqual(authenticator.refreshCount, 1)
        XCTAssertEqual(fixtures.receivedRequests.map { $0.value(forHTTPHeaderField: "Authorization") },
                       ["Bearer stale", "Bearer fresh"])
    }

    func testMissingHeaderIsNamedWithoutItsValue() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/secret", requestHeaders: ["Authorization": "Bearer s3cret"], json: "{}")
        do {
            _ = try await queue(fixtures).send(PathRequest<EmptyResponse>("/secret", headers: ["Authorization": "Bearer wrong"]))
            XCTFail("expected no fixture")
        } catch {
            XCTAssertTrue(error.description.contains("header Authorization differs"), error.description)
            XCTAssertFalse(error.description.contains("s3cret"), error.description)
        }
    }
}

// MARK: - Held answers

extension FixtureTransportTests {
    /// Sends `paths` straight through the transport (no queue), recording each completion.
    private static func sendDirectly(_ paths: [String], through fixtures: FixtureTransport,
                              to log: Recorder<String>) -> [any TransportTask] {
        paths.map { path in
            let request = URLRequest(url: URL(string: "https://api.example.com/v1\(path)")!)
            let task = fixtures.makeTask(for: TransportRequest(urlRequest: request)) { result in
                switch result {
                case .success(let response): log.append("\(path) \(response.response.statusCode)")
                case .failure(let error): log.append("\(path) \(error)")
                }
            }
            task.resume()
            return task
        }
    }

    /// Waits until the answers released so far have reached their completions.
    private func drainReleases(_ fixtures: FixtureTransport) {
        fixtures.holds.releases.sync {}
    }

    func testHeldAnswersWaitUntilReleasedInAnyOrder() throws {
        // Given two requests whose answers are held
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/1", json: #"{"id": 1, "name": "Ada"}"#)
        fixtures.stub(.get, "/users/2", json: #"{"id": 2, "name": "Grace"}"#)
        fixtures.holdsAnswers = true
        let queue = queue(fixtures)
        let first = queue.add(PathRequest<User>("/users/1"))
        let second = queue.add(PathRequest<User>("/users/2"))

        // When both are in flight
        let held = try fixtures.waitForHeldRequests(2)

        // Then neither is answered until it is released, and the second can go first
        XCTAssertEqual(held.map(\.description), ["GET /v1/users/1 (held #1)", "GET /v1/users/2 (held #2)"])
        XCTAssertEqual(held.map(\.request.url?.path), ["/v1/users/1", "/v1/users/2"])
        XCTAssertEqual(fixtures.heldRequests, held)
        XCTAssertFalse(queue.isFinished(first))
        XCTAssertTrue(fixtures.release(held[1]))
        XCTAssertEqual(try result(of: second, on: queue, as: User.self)?.get(), User(id: 2, name: "Grace"))
        XCTAssertFalse(queue.isFinished(first))
        XCTAssertEqual(fixtures.heldRequests, [held[0]])
        XCTAssertTrue(fixtures.release(held[0]))
        XCTAssertEqual(try result(of: first, on: queue, as: User.self)?.get(), User(id: 1, name: "Ada"))

        // A released request is not held any more
        XCTAssertFalse(fixtures.release(held[0]))
        XCTAssertEqual(fixtures.heldRequests, [])
        XCTAssertEqual(fixtures.releaseAll(), [])
    }

    func testReleasedAnswersArriveOnceEachInTheOrderOfRelease() throws {
        // Given five requests held by the transport itself
        let fixtures = FixtureTransport()
        for number in 1...5 { fixtures.stub(.get, "/\(number)", status: 200 + number) }
        fixtures.holdsAnswers = true
        let log = Recorder<String>()
        let tasks = Self.sendDirectly(["/1", "/2", "/3", "/4", "/5"], through: fixtures, to: log)
        let held = try fixtures.waitForHeldRequests(5)
        XCTAssertEqual(held.map(\.number), [1, 2, 3, 4, 5])

        // When three are released one by one out of order, then the rest together
        fixtures.release(held[2])
        fixtures.release(held[0])
        fixtures.release(held[3])
        XCTAssertEqual(fixtures.releaseAll(), [held[1], held[4]])
        drainReleases(fixtures)

        // Then each completed once, in the order of release
        XCTAssertEqual(log.all, ["/3 203", "/1 201", "/4 204", "/2 202", "/5 205"])
        for task in tasks { task.cancel() }   // after the end: changes nothing
        drainReleases(fixtures)
        XCTAssertEqual(log.count, 5)
    }

    func testCancelledHeldRequestEndsOnceAndLeavesTheHeldList() throws {
        // Given a held request, straight through the transport
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/slow", body: Data(count: 1_000))
        fixtures.bytesPerSecond = 100
        fixtures.holdsAnswers = true
        let log = Recorder<String>()
        let task = try XCTUnwrap(Self.sendDirectly(["/slow"], through: fixtures, to: log).first)
        let held = try fixtures.waitForHeldRequests(1)

        // Then while it is held nothing has moved
        XCTAssertEqual(task.progress.bytesReceived, 0)
        XCTAssertEqual(task.progress.totalBytesToReceive, 1_000)

        // When it is cancelled (twice), then released
        task.cancel()
        task.cancel()
        XCTAssertFalse(fixtures.release(held[0]))
        XCTAssertEqual(fixtures.releaseAll(), [])
        drainReleases(fixtures)

        // Then it ended once, as cancelled, and is held no more
        XCTAssertEqual(log.all, ["/slow \(RequestError.cancelled)"])
        XCTAssertEqual(fixtures.heldRequests, [])
    }

    func testHeldRequestCancelledOrTimedOutThroughAQueue() throws {
        // Given two held requests, one with a short timeout
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/1", json: #"{"id": 1, "name": "Ada"}"#)
        fixtures.holdsAnswers = true
        let queue = queue(fixtures)
        let cancelled = queue.add(PathRequest<User>("/users/1"))
        try fixtures.waitForHeldRequests(1)
        // (A header of its own, so that it does not share the first one's transfer.)
        let timed = queue.add(PathRequest<User>("/users/1", headers: ["X-Attempt": "2"], timeout: 0.2))

        // When one is cancelled and the other runs out of time while its answer is held
        queue.cancel(cancelled)

        // Then each ends once as such, and neither is held any more
        guard case .failure(.cancelled)? = result(of: cancelled, on: queue, as: User.self) else { return XCTFail() }
        guard case .failure(.timedOut)? = result(of: timed, on: queue, as: User.self) else { return XCTFail() }
        XCTAssertEqual(fixtures.heldRequests, [])
        XCTAssertEqual(fixtures.receivedRequests.count, 2)
    }

    func testHoldingOnlyTheRequestsARulePicks() async throws {
        // Given a rule that holds reports only
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/1", json: #"{"id": 1, "name": "Ada"}"#)
        fixtures.stub(.get, "/reports/latest", json: #"{"id": 9, "name": "Report"}"#)
        fixtures.holdAnswers { $0.url?.path.hasSuffix("/reports/latest") == true }
        XCTAssertTrue(fixtures.holdsAnswers)
        let queue = queue(fixtures)

        // When a report and a user are asked for
        let report = Task { try await queue.send(PathRequest<User>("/reports/latest")) }
        let held = try await fixtures.waitForHeldRequests(1)

        // Then the user is answered while the report waits, until it is released
        let ada = try await queue.send(PathRequest<User>("/users/1"))
        XCTAssertEqual(ada.name, "Ada")
        XCTAssertEqual(held.map(\.description), ["GET /v1/reports/latest (held #1)"])
        XCTAssertEqual(fixtures.heldRequests, held)
        fixtures.holdsAnswers = false           // holds nothing more; the report stays held
        XCTAssertFalse(fixtures.holdsAnswers)
        XCTAssertEqual(fixtures.heldRequests, held)
        fixtures.releaseAll()
        let answered = try await report.value
        XCTAssertEqual(answered.name, "Report")
        _ = try await queue.send(PathRequest<User>("/reports/latest"))   // not held any more
    }

    func testWaitingForHeldRequestsNamesWhatIsHeldWhenItTimesOut() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/users/1", json: "{}")
        fixtures.holdsAnswers = true
        let log = Recorder<String>()
        let tasks = Self.sendDirectly(["/users/1"], through: fixtures, to: log)

        // Enough held already: the wait returns at once
        let held = try await fixtures.waitForHeldRequests(1)
        XCTAssertEqual(held.count, 1)

        // Two will never be held (only one request was sent): the wait says what is held
        do {
            try await fixtures.waitForHeldRequests(2, timeout: 0.1)
            XCTFail("expected a timeout")
        } catch {
            guard case FixtureError.heldRequestsTimedOut(let expected, let names, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(expected, 2)
            XCTAssertEqual(names, ["GET /v1/users/1 (held #1)"])
            XCTAssertEqual("\(error)", "Waited 0.1 s for 2 held requests; 1 held: GET /v1/users/1 (held #1).")
        }

        // A cancelled wait ends at once
        let waiting = Task { try await fixtures.waitForHeldRequests(3, timeout: 60) }
        waiting.cancel()
        guard case .failure(let error) = await waiting.result, error is CancellationError else {
            return XCTFail("expected CancellationError")
        }
        tasks.forEach { $0.cancel() }
        XCTAssertEqual(log.all, ["/users/1 \(RequestError.cancelled)"])
    }

    func testBlockingWaitForHeldRequests() throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/a", json: "{}")
        fixtures.holdsAnswers = true
        XCTAssertThrowsError(try fixtures.waitForHeldRequests(1, timeout: 0.05)) { error in
            XCTAssertEqual("\(error)", "Waited 0.05 s for 1 held request; none is held.")
        }
        let log = Recorder<String>()
        // Sent from another thread while this one waits
        DispatchQueue.global().async { _ = Self.sendDirectly(["/a", "/a"], through: fixtures, to: log) }
        let held = try fixtures.waitForHeldRequests(2)
        XCTAssertEqual(held.map(\.number), [1, 2])
        fixtures.releaseAll()
        drainReleases(fixtures)
        XCTAssertEqual(log.all, ["/a 200", "/a 200"])
    }
}
