import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a request ended without a response.
///
/// Every request added to a ``RequestQueue`` ends in exactly one result; when that result is
/// a failure, this error says what went wrong and carries what is needed to act on it.
/// Its `description` is a sentence meant for logs and bug reports.
///
/// ```swift
/// switch result {
/// case .success(let profile): show(profile)
/// case .failure(.validationFailed(let response, let body)) where response.statusCode == 404:
///     showNotFound(body.string)
/// case .failure(.cancelled): break
/// case .failure(let error): log(error)
/// }
/// ```
public enum RequestError: Error, Sendable, CustomStringConvertible {
    /// The request's path and the queue's base URL do not make a valid URL.
    /// The associated values are the text that was tried and why it failed.
    case invalidURL(String, reason: String)

    /// A parameter could not be encoded. `keyPath` names it, as in `user.friends[2].pet`
    /// (empty for the parameters value as a whole).
    case invalidParameters(keyPath: String, reason: String)

    /// A header name or value would corrupt the request (CR, LF or NUL, or an invalid name).
    /// Nothing was sent.
    case invalidHeader(name: String, reason: String)

    /// The request never got a complete HTTP response: connection refused, DNS failure,
    /// connection lost, TLS failure…  The `URLError` says which.
    case transportFailed(URLError)

    /// The server answered, but the response was not accepted (``Request/accepts(_:)``; by
    /// default a status outside 200–299). Carries the response and its body; the body decoded as
    /// the request's ``Request/ErrorBody`` is ``errorBody(as:)``.
    case validationFailed(HTTPURLResponse, body: ResponseData)

    /// The response passed validation but the response type could not be made from it.
    /// `type` names the response type; `underlying` is the error its initialiser threw.
    case serializationFailed(type: String, underlying: any Error)

    /// The request was cancelled: by ``RequestQueue/cancel(_:)``, by cancelling the `Task`
    /// around ``RequestQueue/send(_:priority:)``, or because its queue was released.
    case cancelled

    /// No response arrived within the request's timeout.
    case timedOut

    /// A ``FixtureTransport`` has no fixture for the request. `request` summarises it
    /// (`GET /users/3?expand=true`); `nearest` lists the closest fixtures and why each missed.
    case noFixture(request: String, nearest: [String])

    /// The response body is larger than ``RequestQueueConfiguration/maximumResponseSize`` (64 MiB
    /// by default); the transfer was stopped without buffering the rest. Stream or download
    /// bodies that large instead.
    case responseTooLarge(limit: Int)

    /// The request was redirected more times than ``RequestQueueConfiguration/redirectPolicy`` allows.
    case tooManyRedirects(Int)

    /// A streamed response broke one of its stream's limits (``StreamOptions``): a line or an
    /// event longer than allowed, or a consumer so far behind a transport that cannot pause that
    /// the bytes waiting for it outgrew the buffer. The transfer was stopped.
    case streamLimitExceeded(StreamLimit)

    /// The server refused the credentials and the ``Authenticator``'s refresh failed.
    case authenticationFailed(underlying: any Error)

    /// An observer was added for a request ID whose result this queue no longer keeps
    /// (or never had: the ID belongs to another queue). See
    /// ``RequestQueueConfiguration/resultRetentionCount``.
    case resultUnavailable(RequestID)

    /// An observer asked for a different response type than the one its request produces.
    case responseTypeMismatch(expected: String, actual: String)

    /// The request may not use the network (``CachePolicy/onlyCached``, or a request
    /// `Cache-Control: only-if-cached`) and the cache holds no response that may answer it.
    /// The associated value is the request's URL.
    case notCached(URL?)

    /// A durable request added before a restart got a response, but its response type (the
    /// associated name) is not among the queue's ``Durability/responseTypes``, so it cannot be
    /// made: the response is kept as it came, status, header fields and body. Register the type
    /// at start-up (see ``DurableResponseTypes``).
    /// ```swift
    /// if case .failure(.responseTypeNotRegistered(let name, let response, let body)) = result {
    ///     log("\(name) not registered; status \(response.statusCode), \(body.data.count) bytes")
    /// }
    /// ```
    case responseTypeNotRegistered(String, response: HTTPURLResponse, body: ResponseData)

    /// A durable request ended in an earlier run of the app with a failure that cannot be made
    /// again as it was (the associated text is how it was described then). Failures on the wire,
    /// timeouts and cancellations come back as themselves.
    case failedBeforeRestart(String)

    /// The HTTP status code, when the server's response is known.
    public var statusCode: Int? {
        if case .validationFailed(let response, _) = self { return response.statusCode }
        if case .responseTypeNotRegistered(_, let response, _) = self { return response.statusCode }
        return nil
    }

    /// The server's error body of a rejected response, decoded: as the request's
    /// ``Request/ErrorBody`` when it names one, otherwise from JSON now, with the decoding the
    /// request's response had (so an ``Endpoint`` needs nothing more). `nil` for other errors, for
    /// an empty body, or when the body does not decode as `type` (the raw body is still in
    /// ``validationFailed(_:body:)``).
    ///
    /// ```swift
    /// struct APIError: Decodable { let error: String; let code: Int }
    /// struct SignUp: Request {
    ///     typealias ResponseType = Account
    ///     typealias ErrorBody = APIError
    ///     …
    /// }
    /// do { _ = try await queue.send(SignUp(…)) }
    /// catch { showAlert(error.errorBody(as: APIError.self)?.error ?? error.description) }
    /// ```
    public func errorBody<Body>(as type: Body.Type = Body.self) -> Body? {
        guard case .validationFailed(_, let body) = self else { return nil }
        if let decoded = body.errorBody as? Body { return decoded }
        guard let decodable = Body.self as? any Decodable.Type, !body.data.isEmpty else { return nil }
        return (try? (body.decoding ?? .default).decode(decodable, from: body)) as? Body
    }

    public var description: String {
        switch self {
        case .invalidURL(let text, let reason):
            return "Invalid URL \"\(text.truncatedForMessages)\": \(reason)."
        case .invalidParameters(let keyPath, let reason):
            let subject = keyPath.isEmpty ? "the parameters" : "parameter \"\(keyPath)\""
            return "Cannot encode \(subject): \(reason)."
        case .invalidHeader(let name, let reason):
            return "Invalid header \"\(name.debugEscaped)\": \(reason). Nothing was sent."
        case .transportFailed(let error):
            return "The request failed before a response arrived: \(error.courierDescription)."
        case .validationFailed(let response, let body):
            let url = response.url.map { " from \($0.absoluteString.truncatedForMessages)" } ?? ""
            var text = "The server answered with status \(response.statusCode) "
                + "(\(HTTPURLResponse.localizedString(forStatusCode: response.statusCode)))\(url)"
            if let snippet = body.snippet { text += "; body: \(snippet)" }
            return text + "."
        case .serializationFailed(let type, let underlying):
            return "Cannot make \(type) from the response: \(describeDecodingError(underlying))."
        case .cancelled:
            return "The request was cancelled."
        case .timedOut:
            return "The request timed out: no response arrived within its timeout. "
                + "Raise the request's `timeout` or the queue's `timeoutInterval` if the server is slow."
        case .noFixture(let request, let nearest):
            let list = nearest.isEmpty ? " There are no fixtures at all." : " Nearest: " + nearest.joined(separator: "; ") + "."
            return "No fixture matches \(request).\(list)"
        case .responseTooLarge(let limit):
            return "The response is larger than the \(limit)-byte limit (maximumResponseSize); the transfer was stopped. "
                + "Receive large bodies with queue.stream or queue.download, which have no such limit, "
                + "or raise the queue's maximumResponseSize."
        case .tooManyRedirects(let count):
            return "The request was redirected \(count) times, more than the redirect policy allows."
        case .streamLimitExceeded(let limit):
            return "The stream was stopped: \(limit)."
        case .authenticationFailed(let underlying):
            return "The server refused the credentials, and refreshing them failed: \(underlying)."
        case .resultUnavailable(let id):
            return "No result is kept for request \(id): it finished longer ago than the queue keeps results, "
                + "or it was added to another queue. Add the observer right after `add`, or use `send`."
        case .responseTypeMismatch(let expected, let actual):
            return "An observer expected \(expected), but the request produces \(actual)."
        case .notCached(let url):
            let subject = url.map { " for \($0.absoluteString.truncatedForMessages)" } ?? ""
            return "No stored response\(subject) may answer, and the request may not use the network "
                + "(cache policy onlyCached, or Cache-Control: only-if-cached). Load it once with the network "
                + "available, or use the returnCachedElseLoad policy to fall back to the network."
        case .responseTypeNotRegistered(let name, let response, let body):
            return "The durable request's response (status \(response.statusCode), \(body.data.count) bytes) cannot be made "
                + "into \(name): the type is not registered in the queue's Durability.responseTypes. "
                + "Register it at start-up; the raw response is kept in this error."
        case .failedBeforeRestart(let text):
            return "The durable request failed before the app restarted: \(text)"
        }
    }
}

extension URLError {
    /// A readable name for the code, which `URLError`'s own description lacks on Linux.
    var courierDescription: String {
        let name: String
        switch code {
        case .cannotConnectToHost: name = "cannot connect to host (connection refused?)"
        case .cannotFindHost: name = "cannot find host"
        case .networkConnectionLost: name = "network connection lost"
        case .notConnectedToInternet: name = "not connected to the internet"
        case .timedOut: name = "timed out"
        case .badServerResponse: name = "bad server response"
        case .unsupportedURL: name = "unsupported URL"
        case .secureConnectionFailed: name = "secure connection failed"
        case .cancelled: name = "cancelled"
        case .cannotOpenFile: name = "cannot open file"
        case .cannotCreateFile: name = "cannot create file"
        case .cannotWriteToFile: name = "cannot write to file"
        case .cannotMoveFile: name = "cannot move file"
        default: name = "URLError"
        }
        let url = failingURL.map { " for \($0.absoluteString.truncatedForMessages)" } ?? ""
        // Courier's own errors say what happened and what to do in their description; the
        // platform's generic ones ("The operation could not be completed") add nothing.
        let detail = (userInfo[NSLocalizedDescriptionKey] as? String).map { ": \($0)" } ?? ""
        return "\(name) (code \(code.rawValue))\(url)\(detail)"
    }
}

/// Describes a `DecodingError` with the coding path, which its own description hides.
func describeDecodingError(_ error: any Error) -> String {
    guard let decodingError = error as? DecodingError else { return String(describing: error) }
    func path(_ context: DecodingError.Context) -> String {
        let text = context.codingPath.map { key in
            key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)"
        }.joined()
        return text.isEmpty ? "the top level" : String(text.drop(while: { $0 == "." }))
    }
    switch decodingError {
    case .typeMismatch(let type, let context):
        return "expected \(type) at \(path(context)): \(context.debugDescription)"
    case .valueNotFound(let type, let context):
        return "missing \(type) value at \(path(context)): \(context.debugDescription)"
    case .keyNotFound(let key, let context):
        return "missing key \"\(key.stringValue)\" at \(path(context))"
    case .dataCorrupted(let context):
        return "invalid data at \(path(context)): \(context.debugDescription)"
    @unknown default:
        return String(describing: decodingError)
    }
}
