import Foundation

/// One canned answer of a ``FixtureTransport``: which requests it matches, and the response.
///
/// In a fixture file (JSON), one object or `{"fixtures": [ … ]}`:
/// ```json
/// {
///   "method": "GET",
///   "path": "/users/1",
///   "query": {"expand": "true"},
///   "status": 200,
///   "headers": {"X-Request-Id": "42"},
///   "json": {"id": 1, "name": "Ada"}
/// }
/// ```
/// `requestHeaders` lists headers the request must carry, with these values (names are
/// case-insensitive), for example an `Authorization` header.
/// The response body is `json` (any JSON, sent as `application/json`), `body` (text), or
/// `bodyFile` (a file beside the fixture file, sent as it is). `delay` (seconds) holds the
/// answer back, like a slow server. To match on the request body,
/// give `bodyContains` (text the body must contain) or `bodyJSON` (members the JSON body must
/// have, with these values).
public struct Fixture: Sendable, Hashable {
    /// The method to match. Default: GET.
    public var method: HTTPMethod
    /// The path to match: the URL's whole path, or its end at a `/` (so `/users/1` matches a
    /// queue whose base URL ends in `/v1`, at `/v1/users/1`).
    public var path: String
    /// Query items the URL must have, with these values (others may be present too).
    public var query: [String: String]
    /// Headers the request must carry, with these values; names are case-insensitive.
    public var requestHeaders: [String: String]
    /// Text the request body must contain, if given.
    public var bodyContains: String?
    /// JSON members the request body must have, if given, as JSON text of an object.
    public var bodyJSON: String?
    /// The response status. Default: 200.
    public var status: Int
    /// The response headers.
    public var headers: [String: String]
    /// The response body.
    public var body: Data
    /// Seconds the answer takes, on top of the transport's ``FixtureTransport/latency``. Default: 0.
    public var delay: TimeInterval

    /// Creates a fixture; only `path` is required, every other value has the default its
    /// property documents (a GET answered with an empty 200, at once).
    ///
    /// ```swift
    /// fixtures.add(Fixture(method: .post, path: "/login", bodyJSON: #"{"user_name":"ada"}"#,
    ///                      status: 201, body: Data(#"{"token":"t"}"#.utf8)))
    /// ```
    public init(method: HTTPMethod = .get, path: String, query: [String: String] = [:],
                requestHeaders: [String: String] = [:], bodyContains: String? = nil, bodyJSON: String? = nil,
                status: Int = 200, headers: [String: String] = [:], body: Data = Data(), delay: TimeInterval = 0) {
        self.delay = max(0, delay)
        self.method = method
        self.path = path.hasPrefix("/") ? path : "/" + path
        self.query = query
        self.requestHeaders = requestHeaders
        self.bodyContains = bodyContains
        self.bodyJSON = bodyJSON
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A one-line summary, as in `GET /users/1?expand=true → 200`.
    public var summary: String {
        "\(method) \(path)\(Self.querySummary(query)) → \(status)"
    }
}

extension Fixture {
    /// Query items as `?a=1&b=2`, sorted by name, for summaries in messages; empty for none.
    static func querySummary(_ query: [String: String]) -> String {
        query.isEmpty ? "" : "?" + query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
    }

    /// Reads the fixtures of one file. Errors name the file and what is wrong.
    static func load(from file: URL) throws -> [Fixture] {
        let data = try Data(contentsOf: file)
        let top: Any
        do {
            top = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw FixtureError.invalidFile(file.path, reason: "not valid JSON (\(error.localizedDescription))")
        }
        let objects: [[String: Any]]
        if let object = top as? [String: Any], let list = object["fixtures"] as? [[String: Any]] {
            objects = list
        } else if let object = top as? [String: Any] {
            objects = [object]
        } else if let list = top as? [[String: Any]] {
            objects = list
        } else {
            throw FixtureError.invalidFile(file.path, reason: "expected a fixture object or {\"fixtures\": [...]}")
        }
        return try objects.enumerated().map { index, object in
            try Fixture(object: object, directory: file.deletingLastPathComponent(), origin: "\(file.path) #\(index + 1)")
        }
    }

    private init(object: [String: Any], directory: URL, origin: String) throws {
        guard let path = object["path"] as? String else {
            throw FixtureError.invalidFile(origin, reason: "a fixture needs a \"path\"")
        }
        var headers: [String: String] = [:]
        if let value = object["headers"] {
            guard let strings = value as? [String: String] else {
                throw FixtureError.invalidFile(origin, reason: "\"headers\" must be an object of strings")
            }
            headers = strings
        }
        var requestHeaders: [String: String] = [:]
        if let value = object["requestHeaders"] {
            guard let strings = value as? [String: String] else {
                throw FixtureError.invalidFile(origin, reason: "\"requestHeaders\" must be an object of strings")
            }
            requestHeaders = strings
        }
        var status = 200
        if let value = object["status"] {
            guard !(value is String), let code = value as? Int, (100...599).contains(code) else {
                throw FixtureError.invalidFile(origin, reason: "\"status\" must be a number from 100 to 599")
            }
            status = code
        }
        var body = Data()
        if let json = object["json"] {
            body = try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed, .sortedKeys])
            if !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
                headers["Content-Type"] = "application/json"
            }
        } else if let text = object["body"] as? String {
            body = Data(text.utf8)
        } else if let name = object["bodyFile"] as? String {
            let file = directory.appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: file.path) else {
                throw FixtureError.invalidFile(origin, reason: "its bodyFile \(file.path) cannot be read")
            }
            body = data
        }
        var bodyJSON: String?
        if let members = object["bodyJSON"] {
            bodyJSON = String(decoding: try JSONSerialization.data(withJSONObject: members, options: [.sortedKeys]), as: UTF8.self)
        }
        var query: [String: String] = [:]
        if let value = object["query"] {
            guard let items = value as? [String: Any] else {
                throw FixtureError.invalidFile(origin, reason: "\"query\" must be an object")
            }
            for (name, item) in items {
                switch item {
                case let text as String: query[name] = text
                case let number as NSNumber: query[name] = number.stringValue
                default: throw FixtureError.invalidFile(origin, reason: "query item \"\(name)\" must be a string or a number")
                }
            }
        }
        self.init(method: HTTPMethod(rawValue: object["method"] as? String ?? "GET"), path: path, query: query,
                  requestHeaders: requestHeaders, bodyContains: object["bodyContains"] as? String, bodyJSON: bodyJSON,
                  status: status, headers: headers, body: body,
                  delay: (object["delay"] as? NSNumber)?.doubleValue ?? 0)
    }
}

/// A fixture folder or file that cannot be used, or held requests that did not come.
public enum FixtureError: Error, Sendable, CustomStringConvertible {
    /// A fixture file (named first) that cannot be read or does not describe a fixture, and why.
    case invalidFile(String, reason: String)
    /// A recorded exchange that cannot be written to the file named first, and why.
    case cannotWrite(String, reason: String)
    /// `waitForHeldRequests(_:timeout:)` of ``FixtureTransport`` waited `after` seconds for `expected`
    /// held requests; `held` describes those that were held, as in `GET /v1/me (held #1)`.
    case heldRequestsTimedOut(expected: Int, held: [String], after: TimeInterval)

    public var description: String {
        switch self {
        case .invalidFile(let file, let reason): "Fixture \(file) cannot be used: \(reason)."
        case .cannotWrite(let file, let reason): "Cannot record fixture \(file): \(reason)."
        case .heldRequestsTimedOut(let expected, let held, let timeout):
            "Waited \((0..<1e6).contains(timeout) && timeout.rounded() == timeout ? String(Int(timeout)) : String(timeout)) s "
                + "for \(expected) held request\(expected == 1 ? "" : "s"); "
                + (held.isEmpty ? "none is held." : "\(held.count) held: \(held.joined(separator: ", ")).")
        }
    }
}
