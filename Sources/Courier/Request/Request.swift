import Foundation

/// A typed HTTP request: where it goes, what it sends, and which ``Response`` type it produces.
///
/// ```swift
/// struct LogInRequest: Request {
///     typealias ResponseType = LogInResponse
///     var parameters: LogInParameters
///     var path: String { "/login" }
///     var method: HTTPMethod { .post }
/// }
/// let id = queue.add(LogInRequest(parameters: .init(username: "ada", password: "…")))
/// ```
///
/// Requests are values: the queue copies one when it is added and reads it on its
/// background work queue, so requests are `Sendable`.
public protocol Request: Sendable {
    /// The parameters' type; ``EmptyParameters`` when the request has none.
    associatedtype ParametersType: Parameters = EmptyParameters
    /// The type the queue makes from the server's response and hands to observers.
    associatedtype ResponseType: Response

    /// The parameters, encoded according to their type: ``QueryString`` (and
    /// ``DefaultQueryString``) in the URL; ``BodyData`` (``JSONBodyData``, ``URLEncodedBodyData``,
    /// ``MultipartFormData``) as the body, which GET and HEAD refuse; and a value that is only
    /// ``Serializable`` in the query for GET, HEAD and DELETE, else as a URL-encoded form body.
    var parameters: ParametersType { get }

    /// Query parameters sent in addition to ``parameters``, for a request whose parameters go in
    /// the body (a POST with `?version=2` and a JSON body). Default: `nil`.
    var queryParameters: (any QueryString)? { get }

    /// The path, resolved against the queue's base URL by appending it to the base URL's path
    /// (`/login` on `https://api.example.com/v1` is `https://api.example.com/v1/login`).
    /// An absolute URL (`https://other.example.com/x`) is used as it is, ignoring the base URL.
    /// A path may carry a query (`/search?version=2`); query parameters are appended to it.
    var path: String { get }

    /// The HTTP method.
    var method: HTTPMethod { get }

    /// Headers to send, added after the session's own headers and before delegates run.
    /// Default: none.
    var headers: [String: String] { get }

    /// The longest time in seconds from sending the request to having its whole response;
    /// past it the request ends with ``RequestError/timedOut``. `nil` (the default) uses the
    /// queue's ``RequestQueueConfiguration/timeoutInterval``; `.infinity` sets no limit.
    /// Give large uploads and downloads a timeout that fits their size.
    var timeout: TimeInterval? { get }

    /// How the request uses the queue's HTTP cache (``RequestQueueConfiguration/cache``).
    /// Default: ``CachePolicy/useProtocol``, HTTP caching as the response headers allow.
    var cachePolicy: CachePolicy { get }

    /// Whether an identical request already in flight may answer this one, sharing its transfer
    /// (`GET` and `HEAD` only; see ``RequestQueueConfiguration/sharesIdenticalRequests``). Each
    /// request keeps its own ID, delegates, observers and result. Default: `true`. Return `false`
    /// for a request whose every send must reach the server.
    var sharesIdenticalRequests: Bool { get }
}

extension Request {
    public var queryParameters: (any QueryString)? { nil }
    public var headers: [String: String] { [:] }
    public var timeout: TimeInterval? { nil }
    public var cachePolicy: CachePolicy { .useProtocol }
    public var sharesIdenticalRequests: Bool { true }
}

extension Request where ParametersType == EmptyParameters {
    /// No parameters: requests without any need not declare `parameters`.
    public var parameters: EmptyParameters { EmptyParameters() }
}
