import Foundation

/// A ready-made request for one-off calls: a method, a path, parameters if any, and the type the
/// response decodes into, with no type of your own to declare.
///
/// ```swift
/// let posts = try await queue.send(.get("/posts", as: [Post].self))
/// let found = try await queue.send(.get("/search", query: SearchQuery(text: "swift"), as: [Post].self))
/// let created = try await queue.reply(to: .post("/posts", NewPost(title: "Hello"), as: Post.self))
/// try await queue.send(.delete("/posts/3"))
/// ```
/// Parameters are encoded by their type, as for any request (``Request/parameters``): a
/// ``QueryString`` in the URL, a ``JSONBodyData``, ``URLEncodedBodyData`` or ``MultipartFormData``
/// as the body. The response type is any `Decodable` (``EmptyResponse`` when the body does not
/// matter). Declare a ``Request`` type instead for the calls an app makes often: it names them,
/// and can say more (its cache policy, its error body, how it accepts and decodes responses).
public struct Endpoint<ParametersType: Parameters, ResponseType: Decodable & Sendable>: Request {
    public var method: HTTPMethod
    public var path: String
    public var parameters: ParametersType
    public var headerFields: HTTPFields
    public var timeout: TimeInterval?

    /// A request of any method.
    /// - Parameters:
    ///   - method: The method.
    ///   - path: The path, relative to the queue's base URL, or an absolute URL.
    ///   - parameters: The parameters, encoded by their type.
    ///   - headers: Header fields to send, in order (a dictionary literal works). Default: none.
    ///   - timeout: The request's timeout in seconds. Default: `nil`, the queue's.
    ///   - type: The type the response decodes into.
    public init(_ method: HTTPMethod, _ path: String, parameters: ParametersType, headers: HTTPFields = [],
                timeout: TimeInterval? = nil, as type: ResponseType.Type = ResponseType.self) {
        self.method = method
        self.path = path
        self.parameters = parameters
        self.headerFields = headers
        self.timeout = timeout
    }
}

extension Endpoint where ParametersType == EmptyParameters {
    /// A request without parameters.
    public init(_ method: HTTPMethod, _ path: String, headers: HTTPFields = [], timeout: TimeInterval? = nil,
                as type: ResponseType.Type = ResponseType.self) {
        self.init(method, path, parameters: EmptyParameters(), headers: headers, timeout: timeout)
    }
}

extension Request {
    /// A `GET` of `path` whose response decodes into `type`: `.get("/posts", as: [Post].self)`.
    public static func get<Value>(_ path: String, headers: HTTPFields = [], as type: Value.Type = Value.self) -> Self
    where Self == Endpoint<EmptyParameters, Value> {
        Endpoint(.get, path, headers: headers)
    }

    /// A `GET` of `path` with query parameters: `.get("/search", query: SearchQuery(text: "swift"), as: [Post].self)`.
    public static func get<Query: QueryString, Value>(_ path: String, query: Query, headers: HTTPFields = [],
                                                      as type: Value.Type = Value.self) -> Self
    where Self == Endpoint<Query, Value> {
        Endpoint(.get, path, parameters: query, headers: headers)
    }

    /// A `POST` of `body` to `path`: `.post("/posts", NewPost(title: "Hello"), as: Post.self)`.
    public static func post<Body: Parameters, Value>(_ path: String, _ body: Body, headers: HTTPFields = [],
                                                     as type: Value.Type = Value.self) -> Self
    where Self == Endpoint<Body, Value> {
        Endpoint(.post, path, parameters: body, headers: headers)
    }

    /// A `PUT` of `body` to `path`.
    public static func put<Body: Parameters, Value>(_ path: String, _ body: Body, headers: HTTPFields = [],
                                                    as type: Value.Type = Value.self) -> Self
    where Self == Endpoint<Body, Value> {
        Endpoint(.put, path, parameters: body, headers: headers)
    }

    /// A `PATCH` of `body` to `path`.
    public static func patch<Body: Parameters, Value>(_ path: String, _ body: Body, headers: HTTPFields = [],
                                                      as type: Value.Type = Value.self) -> Self
    where Self == Endpoint<Body, Value> {
        Endpoint(.patch, path, parameters: body, headers: headers)
    }

    /// A `DELETE` of `path` whose response body does not matter (a `204`, say): `.delete("/posts/3")`.
    public static func delete(_ path: String, headers: HTTPFields = []) -> Self
    where Self == Endpoint<EmptyParameters, EmptyResponse> {
        Endpoint(.delete, path, headers: headers)
    }

    /// A `DELETE` of `path` whose response decodes into `type`.
    public static func delete<Value>(_ path: String, headers: HTTPFields = [], as type: Value.Type) -> Self
    where Self == Endpoint<EmptyParameters, Value> {
        Endpoint(.delete, path, headers: headers)
    }
}
