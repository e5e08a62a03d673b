import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A queue's journal of durable requests with what the queue needs around it: the response
/// types the app registered, the limits, what an earlier run left pending, and a serial queue for
/// the writes that need not hold up anything (a result noted as delivered).
final class DurableJournal: Sendable {
    let durability: Durability
    /// The journal, or why it could not be opened (every `addDurably` then throws it).
    let opened: Result<Journal, JournalError>
    /// The requests an earlier run left pending, in the order added.
    let pendingAtOpen: [JournalEntry]
    /// Writes made after the fact, in order; `close` waits for them.
    private let writes = DispatchQueue(label: "Courier.DurableJournal.writes")

    /// The folder as this process names it among the ones it holds; nil when it could not be
    /// claimed (then the journal did not open either).
    private let heldFolder: String?

    init(_ durability: Durability) {
        self.durability = durability
        let folder = durability.folder.standardizedFileURL.path
        var pending: [JournalEntry] = []
        // A queue of this process released a moment ago may still hold the folder while it hands
        // out its last results: wait for it rather than failing as held elsewhere.
        let claimed = HeldFolders.shared.claim(folder, waitingUpTo: 10)
        heldFolder = claimed ? folder : nil
        do throws(JournalError) {
            let journal = try Journal(folder: durability.folder, configuration: durability.limits.journalConfiguration)
            do throws(JournalError) {
                try journal.purge()
                pending = try journal.pending()
                for entry in pending { Self.noteID(entry.requestID) }
                for result in try journal.results(undeliveredOnly: false) { Self.noteID(result.requestID) }
            } catch {
                journal.close()
                throw error
            }
            opened = .success(journal)
        } catch {
            if claimed { HeldFolders.shared.letGo(folder) }
            opened = .failure(error)
        }
        pendingAtOpen = pending
    }

    /// The journal, or the error that it could not be opened.
    func journal() throws(JournalError) -> Journal {
        try opened.get()
    }

    private static func noteID(_ journalID: String) {
        if let raw = UInt64(journalID), let id = RequestID(durableRawValue: raw) { RequestID.noteDurable(id) }
    }

    /// Durable requests whose attempt was stopped at its deadline, until that attempt's end is
    /// seen (as a cancellation, which it then is not).
    private let timedOut = Locked<Set<RequestID>>([])

    func noteTimedOut(_ id: RequestID) {
        timedOut.withLock { _ = $0.insert(id) }
    }

    /// Whether the attempt of `id` that just ended was stopped at its deadline.
    func takeTimedOut(_ id: RequestID) -> Bool {
        timedOut.withLock { $0.remove(id) != nil }
    }

    /// Deliveries of durable results under way, and whether the queue asked to close.
    private let deliveries = Locked<(running: Int, closing: Bool)>((0, false))
    /// Results seen whose notes are not yet written (see ``beginDelivery(of:)``).
    private let seenNotes = Locked<[String]>([])

    /// A durable result is being handed to observers. The journal stays open (the queue's close
    /// waits) until the returned closure is called, once, at the delivery's end, saying whether
    /// an observer got the result: then the journal notes it as seen, so that no later run gives
    /// it again.
    func beginDelivery(of journalID: String) -> @Sendable (_ seen: Bool) -> Void {
        deliveries.withLock { $0.running += 1 }
        return { seen in
            if seen, case .success(let journal) = self.opened {
                // Noted in batches: results come in bursts (a queue of writes ends together when
                // their origin comes back), and one note at a time on the serial write queue
                // waited for a flush each, so the notes trailed the deliveries by a hundred, all
                // given again after a crash. The first note of a batch schedules the write, which
                // takes every note queued by the time it runs.
                let first = self.seenNotes.withLock { notes in
                    notes.append(journalID)
                    return notes.count == 1
                }
                if first {
                    self.writes.async {
                        let notes = self.seenNotes.withLock { notes in defer { notes = [] }; return notes }
                        try? journal.markDelivered(notes)
                    }
                }
            }
            let closes = self.deliveries.withLock { deliveries in
                deliveries.running -= 1
                return deliveries.closing && deliveries.running == 0
            }
            if closes { self.closeNow() }
        }
    }

    /// Whether handing `result` to an observer gives it the request's result: not when it says
    /// there is none to give.
    static func gives(_ result: AnyResult) -> Bool {
        if case .failure(.resultUnavailable) = result { return false }
        return true
    }

    /// Closes the journal once the deliveries under way have ended and the writes queued before
    /// have been made: the queue's, when it goes. Until then its folder stays held.
    func close() {
        let now = deliveries.withLock { deliveries in
            deliveries.closing = true
            return deliveries.running == 0
        }
        if now { closeNow() }
    }

    private func closeNow() {
        guard case .success(let journal) = opened else { return }
        writes.sync { journal.close() }
        if let heldFolder { HeldFolders.shared.letGo(heldFolder) }
    }

    // MARK: Outcomes

    /// What the journal keeps of a request's final result: the response it came from (a value,
    /// or a rejection), or the failure.
    static func outcome(of result: AnyResult) -> JournalOutcome {
        switch result {
        case .success(let success):
            if let made = success as? MadeValue, let body = made.rawBody {
                return .response(status: made.head.status, headerFields: made.head.headerFields, body: body)
            }
            return .failure(JournaledFailure(kind: .other, text: "the response was not kept").encoded)
        case .failure(let error):
            switch error {
            case .validationFailed(let response, let body), .responseTypeNotRegistered(_, let response, let body):
                let head = ResponseHead(response)
                return .response(status: head.status, headerFields: head.headerFields, body: body.data)
            default:
                return .failure(JournaledFailure(error).encoded)
            }
        }
    }

    /// A journaled result as the queue delivers it, made into the registered type.
    func result(of outcome: JournalOutcome, entry: JournalEntry?, decoding: ResponseDecoding) -> AnyResult {
        switch outcome {
        case .response(let status, let fields, let body):
            let url = entry?.request.url ?? URL(string: "about:blank")!
            let typeName = entry?.request.responseType ?? "an unknown type"
            return DurableBox.make(ResponseHead(status: status, headerFields: fields, url: url), body: body,
                                   maker: durability.responseTypes[typeName], typeName: typeName, decoding: decoding)
        case .failure(let text):
            return .failure(JournaledFailure(decoding: text).error)
        }
    }
}

/// The journal folders this process holds, so that opening one a released queue still holds
/// (its last deliveries under way) waits for it to be let go instead of failing.
final class HeldFolders: Sendable {
    static let shared = HeldFolders()

    private let condition = NSCondition()
    private let held = Locked<Set<String>>([])

    /// Marks `folder` held by the caller, waiting up to `seconds` while this process holds it.
    /// Returns false when it was still held then (the journal's own lock will say so).
    func claim(_ folder: String, waitingUpTo seconds: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while !held.withLock({ $0.insert(folder).inserted }) {
            guard condition.wait(until: deadline) else { return false }
        }
        return true
    }

    func letGo(_ folder: String) {
        condition.lock()
        held.withLock { _ = $0.remove(folder) }
        condition.broadcast()
        condition.unlock()
    }
}

/// A failure as the journal keeps it: a small JSON object with what makes the error again
/// (a transport error's code, a count, a limit) and its description.
struct JournaledFailure: Codable, Equatable {
    enum Kind: String, Codable {
        case transport, timedOut, cancelled, tooManyRedirects, responseTooLarge, other
    }

    var kind: Kind
    var code: Int?
    var text: String

    init(kind: Kind, code: Int? = nil, text: String) {
        self.kind = kind
        self.code = code
        self.text = text
    }

    init(_ error: RequestError) {
        switch error {
        case .transportFailed(let urlError): self.init(kind: .transport, code: urlError.code.rawValue, text: error.description)
        case .timedOut: self.init(kind: .timedOut, text: error.description)
        case .cancelled: self.init(kind: .cancelled, text: error.description)
        case .tooManyRedirects(let count): self.init(kind: .tooManyRedirects, code: count, text: error.description)
        case .responseTooLarge(let limit): self.init(kind: .responseTooLarge, code: limit, text: error.description)
        default: self.init(kind: .other, text: error.description)
        }
    }

    /// Reads what `encoded` wrote; any other text is an `.other` failure saying it.
    init(decoding text: String) {
        self = (try? JSONDecoder().decode(Self.self, from: Data(text.utf8))) ?? Self(kind: .other, text: text)
    }

    var encoded: String {
        // Encoding a struct of strings and integers cannot fail.
        (try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    /// The error again, as it was when it can be made so.
    var error: RequestError {
        switch (kind, code) {
        case (.transport, let code?):
            // Failable on Linux, not on Apple platforms.
            let urlCode: URLError.Code? = URLError.Code(rawValue: code)
            return .transportFailed(URLError(urlCode ?? .unknown))
        case (.timedOut, _): return .timedOut
        case (.cancelled, _): return .cancelled
        case (.tooManyRedirects, let count?): return .tooManyRedirects(count)
        case (.responseTooLarge, let limit?): return .responseTooLarge(limit: limit)
        default: return .failedBeforeRestart(text)
        }
    }
}
