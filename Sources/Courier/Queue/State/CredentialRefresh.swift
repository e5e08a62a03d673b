/// One refresh of the authenticator's credentials for all the requests they were refused for.
///
/// Invariants, checked by `CredentialRefreshTests`:
/// - at most one refresh runs at a time: of the attempts refused while none runs, exactly the
///   first is told to start one, and the others wait for it;
/// - an attempt sent with credentials older than the latest successful refresh is retried at
///   once instead of starting another refresh;
/// - every waiting attempt is handed back exactly once, when the refresh ends, unless its
///   request ended first (`forget`).
struct CredentialRefresh {
    /// Bumped by each successful refresh; attempts remember the generation they were sent with.
    private(set) var generation = 0
    private var isRefreshing = false
    private var waiting: [Attempt] = []

    enum Decision: Equatable {
        /// Credentials were refreshed since this attempt was sent: send it again now.
        case retryNow
        /// It waits for the refresh in progress.
        case wait
        /// It waits; the caller must start the refresh.
        case startRefresh
    }

    /// Takes an attempt whose credentials the server refused.
    mutating func refused(_ attempt: Attempt) -> Decision {
        if attempt.credentialGeneration < generation { return .retryNow }
        waiting.append(attempt)
        defer { isRefreshing = true }
        return isRefreshing ? .wait : .startRefresh
    }

    /// Ends the refresh; returns the attempts that waited for it.
    mutating func finish(succeeded: Bool) -> [Attempt] {
        isRefreshing = false
        if succeeded { generation += 1 }
        defer { waiting = [] }
        return waiting
    }

    /// Drops a request that ended while it waited.
    mutating func forget(_ id: RequestID) {
        waiting.removeAll { $0.id == id }
    }

    var waitingCount: Int { waiting.count }
}
