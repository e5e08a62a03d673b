import Foundation

/// A durable request the journal holds that has not ended yet: what an app shows as "waiting to
/// send", after a relaunch too.
///
/// ```swift
/// let waiting = try queue.pendingDurableRequests()
/// badge.text = waiting.isEmpty ? nil : "\(waiting.count) waiting to send"
/// ```
public struct PendingDurableRequest: Sendable, Equatable {
    /// Its ID, the one ``RequestQueue/addDurably(_:lane:key:)`` returned.
    public let id: RequestID
    /// The `Idempotency-Key` every attempt carries: the app's `key`, or one the queue made.
    public let key: String
    /// Its lane, if it was added in one.
    public let lane: String?
    /// The method it is sent with.
    public let method: String
    /// The URL it is sent to.
    public let url: URL
    /// Attempts that failed and were counted, across runs (a failure that found the network or
    /// its origin gone is not counted, nor an attempt under way).
    public let attempts: Int
    /// When it was added.
    public let addedAt: Date
    /// When its next attempt may start (after a failure's backoff; the time it was added before any).
    public let nextAttemptAt: Date
}

extension PendingDurableRequest {
    /// The entry of a journaled request, if its journal ID is a durable request ID.
    init?(_ entry: JournalEntry) {
        guard let raw = UInt64(entry.requestID), let id = RequestID(durableRawValue: raw) else { return nil }
        self.init(id: id, key: entry.idempotencyKey, lane: entry.request.lane, method: entry.request.method,
                  url: entry.request.url, attempts: entry.attempts, addedAt: entry.addedAt,
                  nextAttemptAt: entry.nextAttemptAt)
    }
}
