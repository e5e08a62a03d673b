import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response's status line and header fields, and the URL it answered.
///
/// ```swift
/// head.status                          // 200
/// head.headerFields["content-type"]    // "application/json" (names in any case)
/// head.headerFields.values(for: "Link")
/// ```
/// A `Sendable` value: read it on any thread. ``httpURLResponse`` makes a Foundation
/// `HTTPURLResponse` for APIs that want one.
public struct ResponseHead: Sendable, Hashable, CustomStringConvertible {
    /// The status code: `200`, `304`, `404`…
    public let status: Int
    /// The URL the response answered: the request's, or the last one a redirect led to.
    public let url: URL
    private let fields: Fields

    /// Where the fields are: a head of Courier's own holds them; one made from an
    /// `HTTPURLResponse` reads them from it only when asked, so that making it costs nothing.
    private enum Fields: Sendable {
        case own(HTTPFields)
        case foundation(HTTPURLResponse)
    }

    /// Creates a head.
    /// - Parameters:
    ///   - status: The status code.
    ///   - headerFields: The header fields. Default: none.
    ///   - url: The URL the response answered.
    public init(status: Int, headerFields: HTTPFields = [], url: URL) {
        self.status = status
        self.url = url
        fields = .own(headerFields)
    }

    /// The head of a Foundation response. Its fields are sorted by name, since an
    /// `HTTPURLResponse` keeps neither their order nor repeated names.
    public init(_ response: HTTPURLResponse) {
        status = response.statusCode
        url = response.url ?? URL(fileURLWithPath: "/")
        fields = .foundation(response)
    }

    /// The header fields, in order, with repeated names kept.
    public var headerFields: HTTPFields {
        switch fields {
        case .own(let fields):
            return fields
        case .foundation(let response):
            var fields: [HTTPField] = []
            fields.reserveCapacity(response.allHeaderFields.count)
            for (name, value) in response.allHeaderFields {
                fields.append(HTTPField(name: "\(name)", value: "\(value)"))
            }
            fields.sort { $0.name < $1.name }
            return HTTPFields(fields)
        }
    }

    /// Whether the status is a success: 200–299.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The head as a Foundation `HTTPURLResponse` (repeated names joined with `", "`), for APIs
    /// that take one. Made when asked for, since on Linux making one costs as much as the rest of
    /// a response's handling; a head made from an `HTTPURLResponse` returns that one.
    public var httpURLResponse: HTTPURLResponse {
        if case .foundation(let response) = fields { return response }
        // Status codes outside 100–599 are refused by the transports, so this cannot fail for a
        // head the queue made; a user's out-of-range status gets the nearest valid one.
        return HTTPURLResponse(url: url, statusCode: min(max(status, 100), 599), httpVersion: "HTTP/1.1",
                               headerFields: headerFields.dictionary)!
    }

    public var description: String {
        "\(status) \(url.absoluteString.debugEscaped) \(headerFields)"
    }

    public static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.status == rhs.status && lhs.url == rhs.url && lhs.headerFields == rhs.headerFields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(url)
        hasher.combine(headerFields)
    }
}
