import Foundation

/// The limits of the journal of durable requests: it is bounded so that an app offline for days,
/// or an origin that never answers, cannot fill the disk. Adding a request that would exceed a
/// bound fails at once (`JournalError.Kind.boundsReached`) rather than accepting it and losing it.
struct JournalConfiguration: Sendable, Equatable {
    /// The most requests the journal holds that have not ended (10,000 by default): each is an
    /// app's write waiting for the network, and more than this is a sign that they never will.
    var maximumPendingRequests = 10_000
    /// The most bytes of requests (method, URL, header fields, body or body copy) and stored
    /// results the journal holds (64 MiB by default), which bounds its file and body copies.
    var maximumBytes = 64 * 1024 * 1024
    /// How long a result that has been delivered is kept (0 by default: `purge` removes it at
    /// once): kept longer, an observer that registers late still gets it.
    var deliveredResultRetention: TimeInterval = 0
    /// How long a result nobody has seen is kept (7 days by default) before `purge` removes it
    /// anyway: the app had that long to register an observer after a relaunch.
    var undeliveredResultRetention: TimeInterval = 7 * 24 * 60 * 60
    /// Checks the whole file at open with `PRAGMA integrity_check` instead of `quick_check`:
    /// off by default, since `quick_check` finds damaged pages and records (what could be
    /// replayed as garbage) in about a fifth of the time (60 ms against 280 ms for 100,000
    /// requests), leaving out only whether indexes agree with their tables.
    var checksIndexesAtOpen = false
    /// SQLite's limit on the file's pages (`PRAGMA max_page_count`; nil: SQLite's own, terabytes).
    /// Not a bound of the journal's (those are above): the tests use it to fill the "disk".
    var maximumPageCount: Int?
}
