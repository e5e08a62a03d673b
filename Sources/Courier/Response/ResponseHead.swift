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

    /// Where the fields are: a head of Courier's own holds them, with the `HTTPURLResponse` made
    /// from them once asked for; one made from an `HTTPURLResponse` reads them from it only when
    /// asked, so that making it costs nothing.
    private enum Fields: Sendable {
        case own(HTTPFields, FoundationResponse)
        case foundation(HTTPURLResponse)
    }

    /// The `HTTPURLResponse` of a head of Courier's own, made on the first request for it and
    /// shared by the head's copies: a delegate, an authenticator and a Courier 1 response type
    /// may each ask for it, and it costs as much to make as the rest of a response's handling.
    ///
    /// Every head has one, and few are ever asked: it takes a lock it shares with other objects
    /// (``LockStripes``) rather than one of its own, which every response would make and destroy.
    /// It is made outside the lock (two asking at once may both make one; the first kept wins),
    /// so that no other lock is ever taken while a stripe is held. `made` is only touched with
    /// the lock held, which is what makes the `@unchecked Sendable` sound.
    private final class FoundationResponse: @unchecked Sendable {
        private var made: HTTPURLResponse?

        private var lock: NSLock { LockStripes.lock(for: self) }

        func value(_ make: () -> HTTPURLResponse) -> HTTPURLResponse {
            if let made = lock.withLock({ made }) { return made }
            let response = make()
            return lock.withLock {
                if let made { return made }
                made = response
                return response
            }
        }

        var isMade: Bool {
            lock.withLock { made != nil }
        }
    }

    /// Creates a head.
    /// - Parameters:
    ///   - status: The status code.
    ///   - headerFields: The header fields. Default: none.
    ///   - url: The URL the response answered.
    public init(status: Int, headerFields: HTTPFields = [], url: URL) {
        self.status = status
        self.url = url
        fields = .own(headerFields, FoundationResponse())
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
        case .own(let fields, _):
            return fields
        case .foundation:
            return HTTPFields(fieldDictionary)
        }
    }

    /// The fields as one dictionary (repeated names joined): what the cache stores. Read
    /// straight from an `HTTPURLResponse`'s own dictionary when the head wraps one.
    var fieldDictionary: [String: String] {
        switch fields {
        case .own(let fields, _):
            return fields.dictionary
        case .foundation(let response):
            let all = response.allHeaderFields
            var fields: [String: String] = [:]
            fields.reserveCapacity(all.count)
            for (name, value) in all {
                // Both are strings in practice; interpolating them costs a microsecond a response.
                if let name = name.base as? String, let value = value as? String {
                    fields[name] = value
                } else {
                    fields["\(name)"] = "\(value)"
                }
            }
            return fields
        }
    }

    /// Whether ``httpURLResponse`` was made (or the head came with one): for tests of the paths
    /// that should not make it.
    var hasHTTPURLResponse: Bool {
        switch fields {
        case .foundation: true
        case .own(_, let foundation): foundation.isMade
        }
    }

    /// Whether the status is a success: 200–299.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The head as a Foundation `HTTPURLResponse` (repeated names joined with `", "`), for APIs
    /// that take one. Made when asked for, since on Linux making one costs as much as the rest of
    /// a response's handling; a head made from an `HTTPURLResponse` returns that one.
    public var httpURLResponse: HTTPURLResponse {
        switch fields {
        case .foundation(let response):
            return response
        case .own(let headerFields, let foundation):
            return foundation.value {
                // A status outside 100–599 (a server's 999, a user's 0) gets the nearest one that
                // Foundation accepts, so that this cannot fail; `status` keeps the real one.
                HTTPURLResponse(url: url, statusCode: min(max(status, 100), 599), httpVersion: "HTTP/1.1",
                                headerFields: headerFields.dictionary)!
            }
        }
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
