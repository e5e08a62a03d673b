import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A stand-in server for tests and demos: answers requests from fixtures instead of the network.
///
/// Requests go through the queue exactly as they would to a server (delegates, observers,
/// validation, retries, redirects, timeouts), so tests exercise the real code around them.
/// ```swift
/// let fixtures = FixtureTransport()
/// fixtures.stub(.get, "/users/1", json: #"{"id": 1, "name": "Ada"}"#)
/// try fixtures.load(directory: fixturesFolder)          // files of ``Fixture``s
/// var config = RequestQueueConfiguration.default
/// config.transport = .fixtures(fixtures)
/// let queue = RequestQueue(configuration: config, baseURL: URL(string: "https://api.example.com"))
/// ```
/// The first fixture that matches a request answers it. A request that none matches fails with
/// ``RequestError/noFixture(request:nearest:)``, which lists the nearest fixtures and why they
/// did not match. To decide when answers arrive, hold them and release them
/// (``holdsAnswers``, ``release(_:)``).
///
/// As a ``Transport`` it honours none of the ``TransportSettings``: there is no session,
/// connection, credential or size limit to apply to canned answers (a `maximumResponseSize` is
/// not enforced on them either).
public final class FixtureTransport: Sendable {
    private struct State {
        var fixtures: [Fixture] = []
        var served: [URLRequest] = []
    }

    private let state = Locked(State())
    private let timing = Locked<(latency: TimeInterval, bytesPerSecond: Double?)>((0, nil))
    /// The answers held back until the test releases them (FixtureTransport+Holding.swift).
    let holds = AnswerHolds()

    /// Creates a transport with no fixtures.
    public init() {}

    /// Creates a transport with the fixtures of every `.json` file in `directory`.
    public convenience init(directory: URL) throws {
        self.init()
        try load(directory: directory)
    }

    /// Seconds every answer waits before it starts arriving, to make a demo or a test feel the
    /// network. Default: 0.
    public var latency: TimeInterval {
        get { timing.withLock { $0.latency } }
        set { timing.withLock { $0.latency = max(0, newValue) } }
    }

    /// A simulated transfer speed, so that progress observers see bytes move. Default: `nil`,
    /// every transfer is instant.
    public var bytesPerSecond: Double? {
        get { timing.withLock { $0.bytesPerSecond } }
        set { timing.withLock { $0.bytesPerSecond = newValue.map { max(1, $0) } } }
    }

    /// Adds the fixtures of every `.json` file in `directory`, in file name order.
    public func load(directory: URL) throws {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw FixtureError.invalidFile(directory.path, reason: "the folder cannot be read")
        }
        for name in names.sorted() where name.hasSuffix(".json") {
            let fixtures = try Fixture.load(from: directory.appendingPathComponent(name))
            state.withLock { $0.fixtures.append(contentsOf: fixtures) }
        }
    }

    /// Adds a fixture; fixtures added earlier are matched first.
    public func add(_ fixture: Fixture) {
        state.withLock { $0.fixtures.append(fixture) }
    }

    /// Adds a fixture answering with JSON text.
    /// ```swift
    /// fixtures.stub(.get, "/users/1", json: #"{"id": 1}"#)
    /// fixtures.stub(.post, "/login", status: 401, json: #"{"error": "bad password"}"#)
    /// ```
    /// `requestHeaders` are headers the request must carry (for example `["Authorization": "Bearer t"]`).
    public func stub(_ method: HTTPMethod, _ path: String, query: [String: String] = [:],
                     requestHeaders: [String: String] = [:], status: Int = 200,
                     headers: [String: String] = [:], json: String) {
        var headers = headers
        if !headers.keys.contains(where: { $0.lowercased() == "content-type" }) { headers["Content-Type"] = "application/json" }
        add(Fixture(method: method, path: path, query: query, requestHeaders: requestHeaders, status: status,
                    headers: headers, body: Data(json.utf8)))
    }

    /// Adds a fixture answering with any body (none by default).
    public func stub(_ method: HTTPMethod, _ path: String, query: [String: String] = [:],
                     requestHeaders: [String: String] = [:], status: Int = 200,
                     headers: [String: String] = [:], body: Data = Data()) {
        add(Fixture(method: method, path: path, query: query, requestHeaders: requestHeaders, status: status,
                    headers: headers, body: body))
    }

    /// Every request answered or refused so far, in order, as sent (after delegates).
    public var receivedRequests: [URLRequest] {
        state.withLock { $0.served }
    }

    /// The fixture that answers `request`, or the nearest misses.
    func answer(_ request: URLRequest, body: Data?) -> Result<Fixture, RequestError> {
        let fixtures = state.withLock { state in
            state.served.append(request)
            return state.fixtures
        }
        let candidate = FixtureMatch(request: request, body: body)
        if let fixture = fixtures.first(where: { candidate.mismatches($0).isEmpty }) { return .success(fixture) }
        // A fixture for the same path is nearer than one for the same method elsewhere.
        func distance(_ misses: [String]) -> Int {
            misses.reduce(0) { $0 + ($1.hasPrefix("path") ? 3 : $1.hasPrefix("method") ? 2 : 1) }
        }
        let nearest = fixtures
            .map { (fixture: $0, misses: candidate.mismatches($0)) }
            .sorted { distance($0.misses) < distance($1.misses) }
            .prefix(3)
            .map { "\($0.fixture.summary) (\($0.misses.joined(separator: ", ")))" }
        return .failure(.noFixture(request: candidate.summary, nearest: Array(nearest)))
    }
}

extension FixtureTransport: Transport {
    /// Answers `request` from the fixtures after the simulated latency and transfer time.
    public func makeTask(for transportRequest: TransportRequest,
                         completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) -> any TransportTask {
        let request = transportRequest.urlRequest
        let bodyFile = transportRequest.bodyFile
        let body = request.httpBody ?? bodyFile.flatMap { FileManager.default.contents(atPath: $0.path) }
        let (latency, bytesPerSecond) = timing.withLock { ($0.latency, $0.bytesPerSecond) }
        return FixtureTask(transport: self, request: request, body: body, latency: latency,
                           bytesPerSecond: bytesPerSecond, completion: completion)
    }

    /// Does nothing: fixtures hold no resources.
    public func invalidate() {}
}

/// One answer in progress: it arrives after the simulated latency and transfer time, or, when
/// the transport holds it, that long after it is released.
private final class FixtureTask: TransportTask {
    private struct State {
        var resumed = false
        /// When the answer started on its way: at `resume`, or at its release when it was held.
        var startedAt: UInt64?
        var ended = false
    }

    private let transport: FixtureTransport
    private let request: URLRequest
    private let body: Data?
    private let latency: TimeInterval
    private let bytesPerSecond: Double?
    private let completion: @Sendable (Result<TransportResponse, RequestError>) -> Void
    private let state = Locked(State())
    private let answer: Result<Fixture, RequestError>

    init(transport: FixtureTransport, request: URLRequest, body: Data?, latency: TimeInterval, bytesPerSecond: Double?,
         completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) {
        self.transport = transport
        self.request = request
        self.body = body
        self.latency = latency
        self.bytesPerSecond = bytesPerSecond
        self.completion = completion
        answer = transport.answer(request, body: body)
    }

    private var responseSize: Int { (try? answer.get().body.count) ?? 0 }

    /// Seconds the whole exchange takes.
    private var duration: TimeInterval {
        latency + ((try? answer.get().delay) ?? 0) + (bytesPerSecond.map { Double((body?.count ?? 0) + responseSize) / $0 } ?? 0)
    }

    func resume() {
        let holds = transport.holds
        let isHeld = holds.wantsHeld(request)   // the test's rule, outside any lock
        // Held in the same step as `resumed` is set, so a cancel either comes first (and nothing
        // is held) or finds the request in the held list.
        let next: (() -> Void)? = state.withLock { state in
            guard !state.ended, !state.resumed else { return nil }
            state.resumed = true
            guard isHeld else { return { [self] in startAnswer(released: false) } }
            return holds.hold(request, task: ObjectIdentifier(self)) { [self] in startAnswer(released: true) }
        }
        next?()
    }

    /// Sends the answer after the simulated time; released answers go out in release order.
    private func startAnswer(released: Bool) {
        state.withLock { $0.startedAt = DispatchTime.now().uptimeNanoseconds }
        let duration = self.duration
        if !released {
            DispatchQueue.global().asyncAfter(deadline: .now() + duration) { [self] in finish() }
        } else if duration > 0 {
            transport.holds.releases.asyncAfter(deadline: .now() + duration) { [self] in finish() }
        } else {
            transport.holds.releases.async { [self] in finish() }
        }
    }

    func cancel() {
        guard state.withLock({ state -> Bool in
            defer { state.ended = true }
            return !state.ended && state.resumed
        }) else { return }
        transport.holds.drop(ObjectIdentifier(self))
        completion(.failure(.cancelled))
    }

    private func finish() {
        guard state.withLock({ state -> Bool in
            defer { state.ended = true }
            return !state.ended
        }) else { return }
        completion(answer.map { fixture in
            var fields = HTTPFields(fixture.headers)
            if !fields.contains("Content-Length") { fields.append("\(fixture.body.count)", for: "Content-Length") }
            return TransportResponse(head: ResponseHead(status: fixture.status, headerFields: fields, url: request.url!),
                                     body: fixture.body)
        })
    }

    var progress: TransferProgress {
        let sendTotal = Int64(body?.count ?? 0), receiveTotal = Int64(responseSize)
        let (startedAt, ended) = state.withLock { ($0.startedAt, $0.ended) }
        guard let startedAt else { return TransferProgress(totalBytesToSend: sendTotal, totalBytesToReceive: receiveTotal) }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds &- startedAt) / 1e9
        guard !ended, let bytesPerSecond else {
            return TransferProgress(bytesSent: sendTotal, totalBytesToSend: sendTotal,
                                    bytesReceived: receiveTotal, totalBytesToReceive: receiveTotal)
        }
        let waited = latency + ((try? answer.get().delay) ?? 0)
        let moved = Int64(max(0, elapsed - waited) * bytesPerSecond)
        return TransferProgress(bytesSent: min(sendTotal, moved), totalBytesToSend: sendTotal,
                                bytesReceived: min(receiveTotal, max(0, moved - sendTotal)), totalBytesToReceive: receiveTotal)
    }
}

/// A request as fixtures see it, and why a fixture does not match it.
struct FixtureMatch {
    let method: HTTPMethod
    let path: String
    let query: [String: String]
    /// The request's headers, by lowercased name.
    let headers: [String: String]
    let body: Data?

    init(request: URLRequest, body: Data?) {
        method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        let components = request.url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: true) }
        path = components?.path ?? "/"
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] where query[item.name] == nil { query[item.name] = item.value ?? "" }
        self.query = query
        var headers: [String: String] = [:]
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers[name.lowercased()] = value }
        self.headers = headers
        self.body = body
    }

    var summary: String {
        "\(method) \(path)\(Fixture.querySummary(query))"
    }

    /// What differs between the request and `fixture`; empty when it matches.
    func mismatches(_ fixture: Fixture) -> [String] {
        var misses: [String] = []
        if fixture.method != method { misses.append("method \(fixture.method)") }
        if path != fixture.path && !path.hasSuffix(fixture.path) { misses.append("path \(fixture.path)") }
        for (name, value) in fixture.query.sorted(by: { $0.key < $1.key }) where query[name] != value {
            misses.append(query[name] == nil ? "query \(name) missing" : "query \(name)=\(query[name]!) not \(value)")
        }
        for (name, value) in fixture.requestHeaders.sorted(by: { $0.key < $1.key }) where headers[name.lowercased()] != value {
            misses.append(headers[name.lowercased()] == nil ? "header \(name) missing" : "header \(name) differs")
        }
        if let needle = fixture.bodyContains, !needle.isEmpty, body?.range(of: Data(needle.utf8)) == nil {
            misses.append("body lacks \"\(needle)\"")
        }
        if let wanted = fixture.bodyJSON, !Self.bodyHasMembers(body, wanted) { misses.append("body JSON differs from \(wanted)") }
        return misses
    }

    private static func bodyHasMembers(_ body: Data?, _ wanted: String) -> Bool {
        guard let body, let actual = (try? JSONSerialization.jsonObject(with: body)) as? NSDictionary,
              let expected = (try? JSONSerialization.jsonObject(with: Data(wanted.utf8))) as? [String: Any]
        else { return false }
        return expected.allSatisfy { key, value in
            (actual[key] as? NSObject)?.isEqual(value) == true
        }
    }
}
