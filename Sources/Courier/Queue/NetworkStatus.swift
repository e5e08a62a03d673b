import Foundation

/// What a queue knows of the network: the app's pause, and what its own traffic found gone.
///
/// ```swift
/// for await status in queue.networkStatusUpdates {
///     banner.isHidden = status.isOnline && status.unreachableOrigins.isEmpty
/// }
/// ```
/// The queue learns from its requests' failures (also those a cached response answered in place
/// of, `stale-if-error`): the system saying there is no network
/// (`notConnectedToInternet`, roaming or data not allowed) takes it offline; a host that cannot be
/// found or connected to, or a connection lost, makes that origin unreachable while the others
/// go on. Then one waiting request at a time goes out as a probe, after 1 s, doubling to 60 s;
/// any response from an origin (any status) says it and the network are back, and the requests
/// that waited go out. On Linux, where no system service says the network is gone, a lost network
/// shows as its origins unreachable.
public struct NetworkStatus: Sendable, Equatable, CustomStringConvertible {
    /// Whether the app paused the queue (``RequestQueue/pause()``): no attempt starts until
    /// ``RequestQueue/resume()``; those under way go on.
    public var isPaused: Bool
    /// When the queue found the system's network gone; nil while it is there.
    public var offlineSince: Date?
    /// The origins (`https://api.example.com:443`) whose hosts could not be found or reached,
    /// and since when. Requests to them that wait (durable ones, and ``OfflinePolicy/wait``) wait.
    public var unreachableOrigins: [String: Date]

    /// Whether attempts go out: the queue is not paused and the network is there (origins in
    /// ``unreachableOrigins`` aside).
    public var isOnline: Bool { !isPaused && offlineSince == nil }

    /// A status, for tests and previews of screens that show one; a queue makes its own.
    /// - Parameters:
    ///   - isPaused: Whether the app paused the queue. Default: false.
    ///   - offlineSince: When the network was found gone. Default: nil, it is there.
    ///   - unreachableOrigins: Origins found unreachable, and since when. Default: none.
    public init(isPaused: Bool = false, offlineSince: Date? = nil, unreachableOrigins: [String: Date] = [:]) {
        self.isPaused = isPaused
        self.offlineSince = offlineSince
        self.unreachableOrigins = unreachableOrigins
    }

    public var description: String {
        var parts = isPaused ? ["paused"] : []
        parts.append(offlineSince == nil ? "online" : "offline")
        parts += unreachableOrigins.keys.sorted().map { "\($0) unreachable" }
        return parts.joined(separator: ", ")
    }
}

/// What a request does while the network, or its origin, is gone (see ``NetworkStatus``).
///
/// ```swift
/// var configuration = RequestQueueConfiguration.default
/// configuration.whileOffline = .wait   // requests wait for their origin; their timeout still runs
/// ```
/// Durable requests (``RequestQueue/addDurably(_:lane:key:)``) always wait. The app's
/// ``RequestQueue/pause()`` holds every request, whatever its policy.
public enum OfflinePolicy: Sendable, Hashable {
    /// The request is sent anyway and fails as the network fails: at once when its host refuses
    /// or cannot be found, with ``RequestError/transportFailed(_:)``; its retry policy applies.
    case fail
    /// The request waits, out of its concurrency slot, until its origin answers again (a probe's
    /// response, or another request's), then goes out. A failure that finds the network or the
    /// origin gone does not count as a retry. Its timeout still runs while it waits.
    case wait
}
