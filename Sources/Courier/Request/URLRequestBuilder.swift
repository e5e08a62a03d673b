import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a ``Request`` into a `URLRequest`: resolves its path against the base URL, encodes its
/// parameters into the query or the body, and sets its method, headers and timeout.
struct URLRequestBuilder: Sendable {
    let baseURL: URL?
    let defaultTimeout: TimeInterval
    /// The base URL without its query and trailing slashes, and its query: worked out once,
    /// since every request starts from them.
    private let basePrefix: String?
    private let baseQuery: String?
    /// The URLs of the last few paths resolved.
    private let recentURLs = RecentURLs()

    init(baseURL: URL?, defaultTimeout: TimeInterval) {
        self.baseURL = baseURL
        self.defaultTimeout = defaultTimeout
        if let baseURL {
            let text = baseURL.absoluteString
            var (prefix, query) = Self.split(text, isAbsolute: Self.hasScheme(text))
            while prefix.hasSuffix("/") { prefix.removeLast() }
            basePrefix = prefix
            baseQuery = query
        } else {
            basePrefix = nil
            baseQuery = nil
        }
    }

    func prepare<R: Request>(_ request: R) throws(RequestError) -> PreparedRequest {
        let parameters = request.parameters
        let method = request.method
        var queries: [String] = []
        var body: (any BodyData)?
        if R.ParametersType.self == EmptyParameters.self {
            // No parameters (most GETs): skip the three dynamic casts below.
        } else if let queryString = parameters as? any QueryString {
            queries.append(try encoding(parameters) { try queryString.encode() })
        } else if let bodyData = parameters as? any BodyData {
            body = bodyData
        } else if let serializable = parameters as? any Serializable {
            // Plain Serializable values follow the method: in the URL where a body is unusual.
            if [.get, .head, .delete].contains(method) {
                queries.append(try encoding(parameters) {
                    try encodeQuery(serializable, options: type(of: serializable).encodingOptions)
                })
            } else {
                body = FormBody(parameters: serializable)
            }
        }
        if let extra = request.queryParameters {
            queries.append(try encoding(extra) { try extra.encode() })
        }
        let url = try resolve(request.path, query: queries.filter { !$0.isEmpty }.joined(separator: "&"))
        var urlRequest = URLRequest(url: url, timeoutInterval: request.timeout ?? defaultTimeout)
        // URLRequest starts as a GET, and setting it anyway is measurably slow (BENCHMARKS.md's analysis).
        if method != .get { urlRequest.httpMethod = method.rawValue }

        var prepared = PreparedRequest(urlRequest: urlRequest)
        if let body {
            guard method != .get, method != .head else {
                throw RequestError.invalidParameters(keyPath: "", reason:
                    "a \(method) request cannot carry a body, but \(type(of: parameters)) is BodyData; "
                    + "use QueryString parameters or another method")
            }
            if let streamable = body as? any StreamableBodyData {
                switch try encoding(parameters, { try streamable.makeBodySource() }) {
                case .data(let data): prepared.urlRequest.httpBody = data
                case .file(let file, let isTemporary):
                    prepared.bodyFile = file
                    prepared.bodyFileIsTemporary = isTemporary
                }
            } else {
                prepared.urlRequest.httpBody = try encoding(parameters) { try body.encode() }
            }
            // Linux's URLSession labels an unlabelled body as a form, so always say what it is.
            prepared.urlRequest.setValue(body.contentType, forHTTPHeaderField: "Content-Type")
        }
        let fields = request.headerFields
        for field in fields {
            do {
                try HeaderValidator.validate(name: field.name, value: field.value)
            } catch {
                prepared.removeTemporaryFiles()
                throw error
            }
        }
        for field in fields {
            // Each name once, its values joined as RFC 9110 §5.3 allows: all a URLRequest holds.
            prepared.urlRequest.setValue(fields[field.name], forHTTPHeaderField: field.name)
        }
        prepared.headerFields = fields
        return prepared
    }

    /// Runs an encoder, turning any error it throws into a ``RequestError``.
    private func encoding<T>(_ parameters: some Parameters, _ encode: () throws -> T) throws(RequestError) -> T {
        do {
            return try encode()
        } catch let error as RequestError {
            throw error
        } catch {
            throw RequestError.invalidParameters(keyPath: "", reason:
                "\(type(of: parameters)) failed to encode: \(error)")
        }
    }

    /// Resolves a request path against the base URL and appends `query`.
    ///
    /// Characters that cannot stand in a URL path (spaces, non-ASCII, `#`, a `%` that starts
    /// no escape…) are percent-encoded; existing `%XX` escapes are kept. The URLs of the last
    /// few paths are reused (`RecentURLs`).
    func resolve(_ path: String, query: String? = nil) throws(RequestError) -> URL {
        try recentURLs.url(path: path, query: query) { () throws(RequestError) in try resolveAnew(path, query: query) }
    }

    private func resolveAnew(_ path: String, query: String?) throws(RequestError) -> URL {
        // Fast path: a relative path of plain path characters, the common case.
        if let basePrefix, Self.isPlainRelativePath(path) {
            var text = basePrefix
            if !path.isEmpty {
                text += "/"
                text += path.utf8.first == UInt8(ascii: "/") ? path.dropFirst() : Substring(path)
            }
            let queries = [baseQuery, query].compactMap { $0 }.filter { !$0.isEmpty }
            if !queries.isEmpty { text += "?" + queries.joined(separator: "&") }
            if let url = URL(string: text) { return url }
        }
        // Asked of the whole path: a scheme ends at its first colon, before any `?`.
        let isAbsolute = Self.hasScheme(path)
        let (rawPath, pathQuery) = Self.split(path, isAbsolute: isAbsolute)
        var text: String
        var queries: [String] = []
        if !isAbsolute, Self.containsDotSegment(rawPath.utf8) {
            // libcurl removes dot segments, so "../admin" would leave the base URL's path.
            throw RequestError.invalidURL(path, reason:
                "a relative path may not contain \".\" or \"..\" segments, which would move it outside the base URL's path; "
                + "use an absolute URL to reach another path")
        }
        if isAbsolute {
            text = percentEncoded(rawPath, .urlPath)
        } else {
            guard let baseURL else {
                throw RequestError.invalidURL(path, reason:
                    "the path is relative and the queue has no base URL; "
                    + "pass `baseURL` to RequestQueue(configuration:delegate:baseURL:) or use an absolute URL")
            }
            if let baseQuery { queries.append(baseQuery) }
            text = basePrefix ?? baseURL.absoluteString
            let relative = percentEncoded(String(rawPath.drop(while: { $0 == "/" })), .urlPath)
            if !relative.isEmpty || rawPath.hasPrefix("/") {
                while text.hasSuffix("/") { text.removeLast() }
                text += "/" + relative
            }
        }
        if let pathQuery { queries.append(percentEncoded(pathQuery, .urlQuery)) }
        if let query { queries.append(query) }
        queries.removeAll { $0.isEmpty }
        if !queries.isEmpty { text += "?" + queries.joined(separator: "&") }
        guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
            throw RequestError.invalidURL(text, reason: "it is not an absolute URL with a scheme and a host")
        }
        return url
    }

    /// Whether `path` is relative and made only of characters that stand unescaped in a path,
    /// with at most one leading slash and no `.` or `..` segment (no query, no escapes, no
    /// scheme, no `//`).
    private static func isPlainRelativePath(_ path: String) -> Bool {
        var previousWasSlash = false
        for byte in path.utf8 {
            guard PercentEncoding.urlPath.allowed.contains(byte), byte != UInt8(ascii: ":") else { return false }
            let isSlash = byte == UInt8(ascii: "/")
            if isSlash, previousWasSlash { return false }
            previousWasSlash = isSlash
        }
        return !containsDotSegment(path.utf8)
    }

    /// Whether a segment of `path` (what lies between slashes) is `.` or `..`. Read as bytes: a
    /// dot with a combining mark after it is no dot segment, as it is no `.` Character either.
    private static func containsDotSegment(_ path: some Collection<UInt8>) -> Bool {
        var length = 0, dots = 0
        for byte in path {
            if byte == UInt8(ascii: "/") {
                if length > 0, length == dots, dots <= 2 { return true }
                length = 0
                dots = 0
            } else {
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return length > 0 && length == dots && dots <= 2
    }

    /// Splits a URL or path at its first `?` into path and query. An absolute URL's fragment is
    /// dropped; a `#` in a relative request path is kept as a literal character (escaped later),
    /// since fragments are never sent.
    private static func split(_ text: String, isAbsolute: Bool) -> (path: String, query: String?) {
        var whole = Substring(text)
        if isAbsolute, let hash = text.utf8.firstIndex(of: UInt8(ascii: "#")) { whole = text[..<hash] }
        // Searched as bytes: the ASCII mark is one byte, and finding it as a Character costs
        // grapheme breaking on every request with a query.
        guard let mark = whole.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (String(whole), nil) }
        return (String(whole[..<mark]), String(whole[whole.index(after: mark)...]))
    }

    /// Whether `text` starts with `scheme://` (RFC 3986: a letter, then letters, digits, `+-.`).
    private static func hasScheme(_ text: String) -> Bool {
        guard let colon = text.utf8.firstIndex(of: UInt8(ascii: ":")), text.utf8[colon...].starts(with: "://".utf8) else { return false }
        let scheme = text[..<colon].utf8
        guard let first = scheme.first, isLetter(first) else { return false }
        return scheme.allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}
