import Foundation

/// A typed HTTP request: where it goes, what it sends, and what type its response makes.
///
/// ```swift
/// struct PostsRequest: Request {
///     typealias ResponseType = [Post]            // any Decodable & Sendable type
///     var path: String { "/posts" }              // a GET unless `method` says otherwise
/// }
///
/// struct LogInRequest: Request {
///     typealias ResponseType = Session
///     var parameters: LogInParameters
///     var path: String { "/login" }
///     var method: HTTPMethod { .post }
/// }
/// let posts = try await queue.send(PostsRequest())
/// ```
///
/// Requests are values: the queue copies one when it is added and reads it on its
/// background work queue, so requests are `Sendable`.
public protocol Request: Sendable {
    /// The parameters' type; ``EmptyParameters`` when the request has none.
    associatedtype ParametersType: Parameters = EmptyParameters
    /// The type a rejected response's body decodes into, with the request's ``Request/decoding``: the
    /// server's error (`{"error": "…", "code": 42}`), reached with
    /// ``RequestError/errorBody(as:)``, which then returns it decoded already and typed by the
    /// request. Default: `Never`: the body is decoded only when `errorBody(as:)` asks for a type.
    associatedtype ErrorBody: Decodable & Sendable = Never
    /// The type the queue makes from the server's response and hands to observers: any
    /// `Decodable & Sendable` type, decoded from JSON (`[Post]`, `Post?`, which is `nil` for an
    /// empty body, `[String: Int]`); `String` for the body as text, `Data` for its bytes,
    /// ``EmptyResponse`` when it does not matter; or a ``Response`` of your own. A type that is
    /// neither `Decodable` nor a ``Response`` does not compile.
    associatedtype ResponseType: Sendable

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

    /// The HTTP method. Default: ``HTTPMethod/get``.
    var method: HTTPMethod { get }

    /// Headers to send, as a dictionary: the simple form of ``headerFields``, which sends them
    /// sorted by name. Default: none.
    var headers: [String: String] { get }

    /// Header fields to send, in this order, with repeated names as separate lines: added after
    /// the session's own headers and before delegates run.
    ///
    /// ```swift
    /// var headerFields: HTTPFields {
    ///     var fields: HTTPFields = ["Accept": "application/json"]
    ///     fields.append("en", for: "Accept-Language")
    ///     fields.append("fr;q=0.5", for: "Accept-Language")
    ///     return fields
    /// }
    /// ```
    /// The curl transport sends each field as its own line; URLSession, which holds one value
    /// per name, sends repeated values joined with `", "` (RFC 9110 §5.3 makes the two equal).
    ///
    /// Default: ``headers``, sorted by name.
    var headerFields: HTTPFields { get }

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

    /// Whether and how far this request follows redirects. Default: `nil`, the queue's
    /// ``RequestQueueConfiguration/redirectPolicy``. `.never` makes a 3xx the response: with
    /// ``RawResponse`` as the response type it is the value, whatever its status.
    var redirectPolicy: RedirectPolicy? { get }

    /// Whether the request waits while the network or its origin is gone, or fails as the
    /// network fails (see ``NetworkStatus``). Default: `nil`, the queue's
    /// ``RequestQueueConfiguration/whileOffline``.
    var whileOffline: OfflinePolicy? { get }

    /// How a JSON body is decoded into ``Request/ResponseType``. Default: `nil`, the queue's
    /// ``RequestQueueConfiguration/decoding``.
    var decoding: ResponseDecoding? { get }

    /// Whether a response is acceptable, so that a value is made from it; a rejected one ends the
    /// request with ``RequestError/validationFailed(_:body:)``. Default: a ``Response`` type's
    /// ``Response/accepts(_:)``; for any other type a status in 200–299.
    func accepts(_ head: ResponseHead) -> Bool

    /// Makes the value from an accepted response. Called on the queue's background work queue;
    /// a thrown error ends the request with ``RequestError/serializationFailed(type:underlying:)``
    /// (a thrown ``RequestError`` is passed on as it is).
    ///
    /// Default: a ``Response`` type makes itself with ``Response/init(body:head:)``; any other
    /// `Decodable` type is decoded from JSON with `decoding`, an `Optional` being `nil` for an
    /// empty body. Implement it for a request whose value is not its whole body:
    /// ```swift
    /// struct Envelope<T: Decodable>: Decodable { let data: T }
    /// func makeResponse(body: ResponseData, head: ResponseHead, decoding: ResponseDecoding) throws -> [Post] {
    ///     try decoding.decode(Envelope<[Post]>.self, from: body).data
    /// }
    /// ```
    /// - Parameters:
    ///   - body: The body, decoded from any `Content-Encoding` the transport asked for.
    ///   - head: The status and header fields.
    ///   - decoding: The request's ``Request/decoding``, or the queue's.
    func makeResponse(body: ResponseData, head: ResponseHead, decoding: ResponseDecoding) throws -> ResponseType
}

extension Request {
    public var queryParameters: (any QueryString)? { nil }
    public var headers: [String: String] { [:] }
    public var headerFields: HTTPFields { HTTPFields(headers) }
    public var timeout: TimeInterval? { nil }
    public var cachePolicy: CachePolicy { .useProtocol }
    public var sharesIdenticalRequests: Bool { true }
    public var method: HTTPMethod { .get }
    public var decoding: ResponseDecoding? { nil }
    public var redirectPolicy: RedirectPolicy? { nil }
    public var whileOffline: OfflinePolicy? { nil }
}

extension Request where ParametersType == EmptyParameters {
    /// No parameters: requests without any need not declare `parameters`.
    public var parameters: EmptyParameters { EmptyParameters() }
}
