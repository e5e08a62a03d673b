/// How a request uses the queue's HTTP cache (``RequestQueueConfiguration/cache``).
///
/// A request chooses it with ``Request/cachePolicy``:
/// ```swift
/// struct TimelineRequest: Request {
///     typealias ResponseType = Timeline
///     var path: String { "/timeline" }
///     var method: HTTPMethod { .get }
///     var cachePolicy: CachePolicy { .returnCachedElseLoad }   // show something even offline
/// }
/// ```
/// Whatever the policy, only responses to `GET` are stored and served, `Vary` is honoured, and
/// a response stored for one user's `Authorization` never answers another's.
public enum CachePolicy: Sendable, Hashable {
    /// HTTP caching as RFC 9111 defines it (the default): a fresh stored response answers at
    /// once without a request; a stale one is validated with the origin (`If-None-Match`,
    /// `If-Modified-Since`), or served while it revalidates (`stale-while-revalidate`), or served
    /// when the origin fails (`stale-if-error`); responses are stored as their headers allow.
    case useProtocol

    /// Ignores stored responses and loads from the origin; the response is stored as the
    /// protocol allows. For pull-to-refresh.
    case reload

    /// A stored response of any age, without asking the origin; the origin only when nothing
    /// is stored. Also what a failed request falls back to. For data that may be old but must
    /// show at once.
    ///
    /// Stored responses are used whatever their freshness or `must-revalidate`: the app asked
    /// for old data explicitly.
    case returnCachedElseLoad

    /// Only a stored response of any age, never the network: with nothing stored, the request
    /// ends with ``RequestError/notCached(_:)``. For offline mode.
    case onlyCached
}
