import Foundation

/// A request's parameters: a value that Courier turns into a query string, a body, or both.
///
/// You rarely adopt `Parameters` directly. Adopt one of its refinements instead:
/// - ``QueryString`` to put the parameters in the URL's query,
/// - ``BodyData`` to send them as the request body,
/// - or ``EmptyParameters`` (the default) when a request has none.
///
/// Parameters cross from the thread that adds a request to the queue's background
/// work queue, so they are `Sendable`.
public protocol Parameters: Sendable {}

/// The parameters of a request that has none. This is the default `ParametersType` of a ``Request``.
public struct EmptyParameters: Parameters, Hashable {
    /// Creates empty parameters.
    public init() {}
}

/// Parameters that go into the URL's query string.
///
/// Adopt it directly to write the query yourself:
/// ```swift
/// struct Page: QueryString {
///     let number: Int
///     func encode() throws -> String { "page=\(number)" }
/// }
/// ```
/// The returned string is appended to the URL as it is, after `?` (or after `&` when the
/// path already has a query), so it must already be percent-encoded.
public protocol QueryString: Parameters {
    /// The percent-encoded query, without a leading `?`. An empty string adds nothing.
    /// Throw ``RequestError/invalidParameters(keyPath:reason:)`` for a value that cannot be encoded.
    func encode() throws -> String
}

/// Parameters that are sent as the request body.
///
/// Adopt it directly for a custom encoding:
/// ```swift
/// struct Plain: BodyData {
///     let text: String
///     var contentType: String { "text/plain; charset=utf-8" }
///     func encode() throws -> Data { Data(text.utf8) }
/// }
/// ```
/// Courier always sends ``contentType`` as the `Content-Type` header, so the server never
/// has to guess (URLSession on Linux would otherwise label the body as a form).
public protocol BodyData: Parameters {
    /// The value of the `Content-Type` header, for example `application/json`.
    var contentType: String { get }

    /// The body's bytes.
    /// Throw ``RequestError/invalidParameters(keyPath:reason:)`` for a value that cannot be encoded.
    func encode() throws -> Data
}

/// Where a request body's bytes come from when they are sent.
///
/// Small bodies are sent from memory; large ones (multipart uploads of files) are
/// streamed from a file so that memory stays bounded whatever the body's size.
enum RequestBodySource: Sendable {
    /// The bytes are in memory.
    case data(Data)
    /// The bytes are the whole content of a file; `isTemporary` files are removed once the request ends.
    case file(URL, isTemporary: Bool)
}

/// A body that may stream from disk instead of memory. Courier's multipart form adopts it.
protocol StreamableBodyData: BodyData {
    /// Returns the body, written to a file when it is too large to hold in memory.
    /// Throws ``RequestError/invalidParameters(keyPath:reason:)`` naming the file that cannot be read.
    func makeBodySource() throws -> RequestBodySource
}
