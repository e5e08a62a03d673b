import Foundation

/// A response as the cache keeps it: what is needed to answer a later request with it, to
/// compute its age, and to validate it with the origin.
///
/// Only complete responses to `GET` are stored, so the primary key (RFC 9111 §2) is the target
/// URI alone: ``url``, absolute, without its fragment. Several responses for one URL may be
/// stored when the origin varies them (`Vary`); ``secondaryKey`` tells them apart.
struct StoredResponse: Sendable, Hashable {
    /// The primary key: the absolute request URL without its fragment (see ``CacheKey``).
    var url: String
    /// The status code (only final statuses the cache may store).
    var statusCode: Int {
        didSet { parsed = nil }
    }
    /// The response's header fields as the transport handed them over: in order, names as they
    /// came, repeated names kept.
    var headers: HTTPFields {
        didSet { parsed = nil }
    }
    /// The whole body, decoded from any content coding the transport asked for.
    var body: Data
    /// When the request that got this response was sent, in seconds since 1970
    /// (`request_time` of RFC 9111 §4.2.3).
    var requestTime: Double {
        didSet { parsed = nil }
    }
    /// When the response was received, in seconds since 1970 (`response_time`).
    var responseTime: Double {
        didSet { parsed = nil }
    }
    /// The values of the request fields that the response's `Vary` names, as
    /// ``Vary/secondaryKey(for:)`` made them from the request that got it; empty without `Vary`.
    var secondaryKey: [String?]
    /// A digest of the `Authorization` of the request that got the response, when the response
    /// may answer only requests with the same credentials; nil when it may answer any request
    /// (the request had none, or the response is explicitly shareable: `public`,
    /// `must-revalidate`, `s-maxage`). The value itself is never stored.
    var credentialKey: String?

    /// What a store has read of its fields once it is used (``rememberParsedFields(now:)``): its
    /// ``FreshnessBasis`` and its `Vary`, which every later lookup would read again; forgotten
    /// when a field they depend on changes. Boxed: most stored responses are never read, and the
    /// basis is larger than the rest of the value. Not part of the response's equality.
    private var parsed: ParsedFields?

    private final class ParsedFields: Sendable {
        let basis: FreshnessBasis
        let vary: Vary
        init(_ basis: FreshnessBasis, vary: Vary) {
            self.basis = basis
            self.vary = vary
        }
    }

    init(url: String, statusCode: Int, headers: HTTPFields, body: Data, requestTime: Double, responseTime: Double,
         secondaryKey: [String?], credentialKey: String?) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.secondaryKey = secondaryKey
        self.credentialKey = credentialKey
    }

    /// The basis a store keeps with the response, if any.
    var freshnessBasis: FreshnessBasis? { parsed?.basis }

    /// Whether a store has read the response's fields (``rememberParsedFields(now:)``): asked
    /// without copying the basis out.
    var hasParsedFields: Bool { parsed != nil }

    /// Reads the response's freshness basis at `now` (seconds since 1970) and its `Vary`, and
    /// keeps them with the response, unless it has them already.
    mutating func rememberParsedFields(now: Double) {
        if parsed == nil { parsed = ParsedFields(FreshnessBasis(of: self, now: now), vary: Vary(of: headers)) }
    }

    static func == (first: StoredResponse, second: StoredResponse) -> Bool {
        first.url == second.url && first.statusCode == second.statusCode && first.headers == second.headers
            && first.body == second.body && first.requestTime == second.requestTime
            && first.responseTime == second.responseTime && first.secondaryKey == second.secondaryKey
            && first.credentialKey == second.credentialKey
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(statusCode)
        hasher.combine(headers)
        hasher.combine(body)
        hasher.combine(requestTime)
        hasher.combine(responseTime)
        hasher.combine(secondaryKey)
        hasher.combine(credentialKey)
    }

    /// The value of a header field, its name compared case-insensitively.
    func header(_ name: String) -> String? {
        headers[name]
    }

    /// The stored response's `Vary`; fields none when it has no `Vary` field.
    var vary: Vary {
        parsed?.vary ?? Vary(of: headers)
    }

    /// What the response costs a store, in bytes: an estimate of the memory it takes, so that a
    /// memory store's capacity bounds the process's memory. Measured on Linux: besides the body
    /// and the text, a stored response takes about 320 bytes of its own (the value, the store's
    /// index and use order), 176 more from its first use (its ``FreshnessBasis``, counted from
    /// the start so that the bound holds however many are used), and each header field about 64
    /// (its slot and string storage); the URL is kept twice (the response and the index).
    var cost: Int {
        var fieldBytes = 0
        for field in headers { fieldBytes += field.name.utf8.count + field.value.utf8.count }
        return Self.cost(urlLength: url.utf8.count, fieldCount: headers.count, fieldBytes: fieldBytes,
                         bodyCount: body.count, secondaryKey: secondaryKey, credentialKey: credentialKey)
    }

    /// ``cost`` from the parts of a response, for those who count its fields' bytes anyway
    /// (``PackedResponse``): `urlLength` and `fieldBytes` are the UTF-8 of the URL and of every
    /// field's name and value.
    static func cost(urlLength: Int, fieldCount: Int, fieldBytes: Int, bodyCount: Int, secondaryKey: [String?],
                     credentialKey: String?) -> Int {
        var total = bodyCount + 2 * urlLength + 496 + fieldBytes + 64 * fieldCount
        for value in secondaryKey { total += (value?.utf8.count ?? 0) + 16 }
        total += credentialKey?.utf8.count ?? 0
        return total
    }
}

/// The primary cache key of a request: its absolute URL without the fragment (RFC 9111 §2,
/// RFC 9110 §4.2.3), or nil when the URL has no scheme and host (nothing a cache can name).
///
/// Scheme and host are compared case-insensitively and a default port is the same as none,
/// so `HTTP://Example.com:80/a` and `http://example.com/a` share an entry; the path and query
/// are kept byte for byte (normalising percent-encoding could merge different resources).
enum CacheKey {
    static func make(for url: URL) -> String? {
        let text = url.absoluteString
        if isCanonical(text) { return text }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
              let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty
        else { return nil }
        components.fragment = nil
        components.scheme = scheme
        components.host = host.lowercased()
        if (scheme == "http" && components.port == 80) || (scheme == "https" && components.port == 443) {
            components.port = nil
        }
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        return components.string
    }

    /// Whether a URL's text is its key already (the usual case, checked byte by byte because
    /// parsing it into components costs microseconds on every cache hit): `http` or `https`, a
    /// lowercase host without user info, no default port, a path, and no fragment. One pass over
    /// the bytes in place (a `Span`), allocating nothing: it runs for every request the cache sees.
    static func isCanonical(_ text: String) -> Bool {
        let bytes = text.utf8.span
        // `http://` or `https://`, compared byte by byte (stepping a literal's `UTF8View` costs
        // more than the rest of the scan).
        guard bytes.count > 8, bytes[0] == UInt8(ascii: "h"), bytes[1] == UInt8(ascii: "t"),
              bytes[2] == UInt8(ascii: "t"), bytes[3] == UInt8(ascii: "p") else { return false }
        let secure = bytes[4] == UInt8(ascii: "s")
        let colon = secure ? 5 : 4
        guard bytes[colon] == UInt8(ascii: ":"), bytes[colon + 1] == UInt8(ascii: "/"),
              bytes[colon + 2] == UInt8(ascii: "/") else { return false }
        let authorityStart = colon + 3
        // The authority: lowercase host characters and an optional port; anything unusual
        // (user info, IPv6 brackets, upper case, percent-encoding) takes the slow path.
        var index = authorityStart
        var lastColon = -1
        while index < bytes.count, bytes[index] != UInt8(ascii: "/") {
            switch bytes[index] {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                 UInt8(ascii: "."):
                break
            case UInt8(ascii: ":"):
                lastColon = index
            default:
                return false
            }
            index += 1
        }
        let authorityEnd = index
        guard authorityEnd > authorityStart, bytes[authorityStart] != UInt8(ascii: ":"), authorityEnd < bytes.count else { return false }
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "#") { return false }
            index += 1
        }
        // No default port: `:443` for https, `:80` for http.
        guard lastColon >= 0 else { return true }
        let port = (lastColon + 1)..<authorityEnd
        let isDefault = secure
            ? port.count == 3 && bytes[port.lowerBound] == UInt8(ascii: "4") && bytes[port.lowerBound + 1] == UInt8(ascii: "4")
                && bytes[port.lowerBound + 2] == UInt8(ascii: "3")
            : port.count == 2 && bytes[port.lowerBound] == UInt8(ascii: "8") && bytes[port.lowerBound + 1] == UInt8(ascii: "0")
        return !isDefault
    }
}

/// Where the cache keeps responses: in memory or on disk. Each store is bounded in bytes and
/// evicts the least recently used responses first; each is safe to use from any thread.
protocol CacheStore: AnyObject, Sendable {
    /// The stored responses for a primary key (one per secondary key), most recently stored
    /// first; reading them counts as a use for the eviction order.
    func responses(for url: String) -> [StoredResponse]

    /// Stores a response, replacing any stored one with the same URL and secondary key. A
    /// response larger than the store's capacity is not stored (and replaces nothing).
    func store(_ response: StoredResponse)

    /// Removes every response stored for a primary key.
    func removeResponses(for url: String)

    /// Removes everything.
    func removeAll()

    /// Waits until the changes asked so far are done where the store keeps them (a disk store
    /// writes its files in the background; a memory store has nothing to wait for). For tests
    /// and a clean shutdown.
    func flush()

    /// The bytes the stored responses cost (``StoredResponse/cost`` for memory, file sizes on disk).
    var size: Int { get }

    /// The most bytes the store keeps.
    var capacity: Int { get }
}
