/// Where a response came from: the network, or the queue's HTTP cache and how.
///
/// Every request's ``RequestMetrics/source`` says it, and so does every ``ResponseUpdate``:
/// ```swift
/// switch update.source {
/// case .network: badge = nil
/// case .cache(.fresh), .cache(.revalidated): badge = nil
/// case .cache(.stale): badge = "Offline: showing saved data"
/// case nil: break  // a failure
/// }
/// ```
public enum ResponseSource: Sendable, Hashable, CustomStringConvertible {
    /// From the origin server: nothing stored could answer (or the policy said reload).
    case network
    /// From the cache (see ``CacheFreshness``).
    case cache(CacheFreshness)

    public var description: String {
        switch self {
        case .network: "network"
        case .cache(let freshness): "cache (\(freshness))"
        }
    }
}

/// How a response the cache answered with stood with the origin.
public enum CacheFreshness: Sendable, Hashable, CustomStringConvertible {
    /// Still fresh by its headers: no request was sent.
    case fresh
    /// Stale, then confirmed by the origin (`304 Not Modified`): one small request, no body.
    case revalidated
    /// Past its freshness and not confirmed: served because the policy accepts any age
    /// (``CachePolicy/returnCachedElseLoad``, ``CachePolicy/onlyCached``), while it revalidates
    /// (`stale-while-revalidate`), or because the origin failed (`stale-if-error`).
    case stale

    public var description: String {
        switch self {
        case .fresh: "fresh"
        case .revalidated: "revalidated"
        case .stale: "stale"
        }
    }
}
