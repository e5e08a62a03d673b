import Foundation

/// How a ``Resource`` decides its value is stale, retries after failures, and where it changes.
///
/// ```swift
/// let timeline = queue.resource(TimelineRequest(), options: ResourceOptions(staleAfter: .seconds(30)))
/// ```
/// Resources of equal requests are shared only when their options are equal too.
public struct ResourceOptions: Sendable, Hashable {
    // The stored properties are in this order for size (no padding between them): the registry
    // keeps each resource's options, and an app may keep thousands.

    /// How long a value stays fresh after it arrived, replacing the response's HTTP freshness.
    /// Default: `nil`, the response's own (`Cache-Control: max-age`, `Expires`, or a heuristic
    /// from `Last-Modified`, as the queue's cache reads them; a response without them is stale
    /// at once, so `loadIfNeeded()` always loads it).
    public var staleAfter: Duration?

    /// The priority of the resource's requests. Default: `.normal`.
    public var priority: RequestPriority

    /// Whether the resource keeps the head of its value's response (the pages of a ``PagedResource``).
    var keepsHead = false

    /// Where the resource changes. Default: ``ResourceContext/mainActor``.
    public var updatesOn: ResourceContext

    /// Time as the resource sees it; tests replace it.
    var clock: ResourceClock = .system

    /// The delays between loads of a watched resource whose load failed: `initialDelay` after
    /// the first failure, doubled after each further one, at most `maximumDelay`. Default:
    /// 1 second to 60 seconds. `nil` never retries (a watched resource still loads again when it
    /// is invalidated). A resource nobody watches never retries.
    public var retry: Retry?

    /// Retries after failures: see ``ResourceOptions/retry``.
    public struct Retry: Sendable, Hashable {
        /// The delay after the first failure. Default: 1 second.
        public var initialDelay: Duration
        /// The longest delay. Default: 60 seconds.
        public var maximumDelay: Duration

        /// Creates a retry rule.
        /// - Parameters:
        ///   - initialDelay: The delay after the first failure. Default: 1 second.
        ///   - maximumDelay: The longest delay. Default: 60 seconds.
        public init(initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(60)) {
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
        }

        /// The delay, in seconds, after `failures` failures in a row (at least 1).
        func delay(after failures: Int) -> Double {
            let initial = max(0, initialDelay.seconds)
            let maximum = max(initial, maximumDelay.seconds)
            return min(maximum, initial * pow(2, Double(min(max(failures, 1) - 1, 62))))
        }
    }

    /// Creates options.
    /// - Parameters:
    ///   - staleAfter: How long a value stays fresh. Default: `nil`, its HTTP freshness.
    ///   - retry: Retries of a watched resource after failures. Default: 1 s doubling to 60 s.
    ///   - updatesOn: Where the resource changes. Default: the main actor.
    ///   - priority: The priority of its requests. Default: `.normal`.
    public init(staleAfter: Duration? = nil, retry: Retry? = Retry(), updatesOn: ResourceContext = .mainActor,
                priority: RequestPriority = .normal) {
        self.staleAfter = staleAfter
        self.retry = retry
        self.updatesOn = updatesOn
        self.priority = priority
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
