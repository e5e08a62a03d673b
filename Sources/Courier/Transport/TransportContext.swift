/// What a queue's own layers between its stages and the transport need to know of a request:
/// ``SharingTransport`` (identical requests share one transfer) and the cache layer. A transport
/// of the user's never sees it; requests made outside a queue carry the default (no sharing,
/// caching by the protocol).
struct TransportContext: Sendable {
    /// The request's ``Request/cachePolicy``.
    var cachePolicy = CachePolicy.useProtocol
    /// Whether an identical request in flight may answer this one (``Request/sharesIdenticalRequests``
    /// and the queue's ``RequestQueueConfiguration/sharesIdenticalRequests``).
    var sharesTransfer = false
    /// For a request added with ``RequestQueue/load(_:priority:owner:handler:)``: called with a
    /// stored response before the request goes to the network, so that observers see it at once.
    var cachedFirst: (@Sendable (TransportResponse) -> Void)?
}
