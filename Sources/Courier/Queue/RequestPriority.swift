/// Which waiting requests start first when ``RequestQueueConfiguration/maxConcurrentRequests``
/// holds requests back. Requests of one priority start in the order they were added.
///
/// ```swift
/// queue.add(ThumbnailRequest(id: 7), priority: .low)
/// queue.add(ProfileRequest(), priority: .high)   // starts before every waiting .normal and .low
/// ```
public enum RequestPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// Starts after every waiting `.normal` and `.high` request: prefetching, thumbnails.
    case low
    /// The default.
    case normal
    /// Starts before every waiting `.normal` and `.low` request: what the user is waiting for.
    case high

    public static func < (lhs: RequestPriority, rhs: RequestPriority) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
