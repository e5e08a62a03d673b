import Foundation

/// A request as the journal keeps it: everything needed to send it again after a restart.
struct JournalRequest: Sendable, Equatable {
    /// Requests of one lane are sent one at a time, in the order they were added; nil: no lane.
    var lane: String?
    var method: String
    var url: URL
    /// In the order they are sent.
    var headerFields: HTTPFields
    var body: JournalBody
    /// The name the app registered the response type under, to decode into after a restart.
    var responseType: String
}

/// A journaled request's body.
enum JournalBody: Sendable, Equatable {
    case none
    case bytes(Data)
    /// A file: `append` copies it into the journal's folder (the app may delete the original);
    /// entries read back name the copy.
    case file(URL)
}

/// Whether a journaled request still waits for its result.
enum JournalRequestState: String, Sendable, Equatable {
    case pending
    case ended
}

/// A request in the journal.
struct JournalEntry: Sendable, Equatable {
    /// The order of adding (SQLite's rowid), which orders a lane.
    let sequence: Int64
    /// The request's ID, made by `append`; stable across restarts.
    let requestID: String
    /// The Idempotency-Key sent with every attempt, made once by `append`.
    let idempotencyKey: String
    let request: JournalRequest
    /// Attempts started so far.
    let attempts: Int
    /// When the next attempt may start.
    let nextAttemptAt: Date
    let state: JournalRequestState
    let addedAt: Date
}

/// How a journaled request ended.
enum JournalOutcome: Sendable, Equatable {
    /// A response: its status, header fields and body, as received (decoded after a restart).
    case response(status: Int, headerFields: HTTPFields, body: Data)
    /// A failure, as its description (the request ended without a response to keep).
    case failure(String)
}

/// The result of a journaled request, kept until the app has seen it.
struct JournalResult: Sendable, Equatable {
    let requestID: String
    let outcome: JournalOutcome
    let endedAt: Date
    let delivered: Bool
}

/// What `purge` removed.
struct JournalPurge: Sendable, Equatable {
    var results = 0
    var requests = 0
}

extension Date {
    /// Milliseconds since 1970, as the journal stores times.
    var journalMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    init(journalMilliseconds: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(journalMilliseconds) / 1000)
    }
}
