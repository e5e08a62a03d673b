import Foundation

/// The network as the queue sees it, and the app's switch (``NetworkStatus``, ``OfflinePolicy``).
extension RequestQueue {
    /// What the queue knows of the network now: paused by the app, offline, or origins that
    /// could not be reached.
    ///
    /// ```swift
    /// if !queue.networkStatus.isOnline { showOfflineBanner() }
    /// ```
    public var networkStatus: NetworkStatus {
        state.withLock { $0.networkStatus(now: Self.now()) }
    }

    /// The network status now, then each change, for as long as the queue lives (the stream
    /// ends with it) or the caller iterates.
    ///
    /// ```swift
    /// Task {
    ///     for await status in queue.networkStatusUpdates {
    ///         print(status)   // "online", then "online, https://api.example.com:443 unreachable", …
    ///     }
    /// }
    /// ```
    /// Each use is a stream of its own; a slow reader gets every change, in order.
    public var networkStatusUpdates: AsyncStream<NetworkStatus> {
        AsyncStream { continuation in
            let token = NetworkWatchers.nextToken()
            let weakSelf = WeakRequestQueue(self)
            continuation.onTermination = { _ in weakSelf.queue?.state.withLock { $0.unwatchNetwork(token) } }
            state.withLock { $0.watchNetwork(continuation, token: token, now: Self.now()) }
        }
    }

    /// Holds every request's next attempt until ``resume()``: the app's own switch (a user's
    /// "sync paused", a metered connection, the app going to the background).
    ///
    /// Requests keep their places and their IDs; attempts under way go on; no probe goes out.
    /// Timeouts still run: a request with one ends with ``RequestError/timedOut`` if it passes
    /// while paused (durable requests' timeouts are per attempt, so they just wait). Pausing a
    /// paused queue changes nothing.
    public func pause() {
        state.withLock { $0.pauseNetwork(now: Self.now()) }
    }

    /// Lets the requests a ``pause()`` held go, oldest first (those that wait for an origin still
    /// gone keep waiting for it).
    public func resume() {
        follow(state.withLock { $0.resumeNetwork(now: Self.now()) })
    }

    /// Does what a connectivity event left to do outside the lock: requests that waited go, and
    /// watched resources where the network came back load again.
    func follow(_ news: QueueState.NetworkNews) {
        if news.startRun { runStartLoop() }
        for origin in news.cameBack { resources.reconnected(origin) }
    }
}
