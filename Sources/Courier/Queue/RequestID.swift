import Foundation
import Synchronization

/// The process-wide source of request IDs. Atomic so that threads adding at once never share one.
private let requestIDCounter = Atomic<UInt64>(0)
/// The number of the last durable ID made or seen in a journal by this process (without the flag).
private let durableIDLast = Atomic<UInt64>(0)

/// Identifies one request added to a ``RequestQueue``.
///
/// IDs are unique within the process (across all queues) and increase monotonically:
/// a request added later has a larger ID.
///
/// Durable requests (``RequestQueue/addDurably(_:lane:key:)``) have IDs of their own range, above
/// every other ID (``isDurable``): an ID made from the time it was added in milliseconds and a
/// count, kept in the journal, so that it is the same after a restart and never taken by a later
/// request, in this process or the next one (the count also starts above every ID still in the
/// journal, should the clock go back). Durable IDs increase among themselves.
/// ```swift
/// let id = try queue.addDurably(SendMessage(text: "On my way"))
/// UserDefaults.standard.set(String(id.rawValue), forKey: "pending-message")   // observe it after a relaunch
/// ```
public struct RequestID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The ID's number, starting at 1; a durable request's has its top bit set.
    public let rawValue: UInt64

    /// The bit that marks a durable request's ID.
    static let durableFlag: UInt64 = 1 << 63
    /// The low bits of a durable ID that count requests within one millisecond.
    private static let durableCountBits: UInt64 = 10

    init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// The ID with this number, such as one the app stored from ``rawValue``: how an app names
    /// a durable request again after a relaunch.
    /// ```swift
    /// let id = RequestID(durableRawValue: storedNumber)
    /// queue.addObserver(for: id) { (result: Result<Message, RequestError>) in … }
    /// ```
    /// - Returns: nil when the number is not a durable request's (its top bit is clear).
    public init?(durableRawValue rawValue: UInt64) {
        guard rawValue & Self.durableFlag != 0 else { return nil }
        self.rawValue = rawValue
    }

    /// Whether this is a durable request's ID, which stays valid across restarts.
    public var isDurable: Bool { rawValue & Self.durableFlag != 0 }

    /// The next ID of the process.
    static func next() -> RequestID {
        RequestID(rawValue: requestIDCounter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// The next durable ID: at least the time in milliseconds shifted by the count's bits, and
    /// above every durable ID made or seen (`noteDurable`) by this process.
    static func nextDurable(now: Date = Date()) -> RequestID {
        let floor = UInt64(max(0, now.timeIntervalSince1970 * 1000)) << durableCountBits
        var last = durableIDLast.load(ordering: .relaxed)
        while true {
            let next = max(last + 1, floor) & ~durableFlag
            let (exchanged, original) = durableIDLast.compareExchange(expected: last, desired: next, ordering: .relaxed)
            if exchanged { return RequestID(rawValue: durableFlag | next) }
            last = original
        }
    }

    /// Keeps later durable IDs above one read back from a journal.
    static func noteDurable(_ id: RequestID) {
        durableIDLast.max(id.rawValue & ~durableFlag, ordering: .relaxed)
    }

    public static func < (lhs: RequestID, rhs: RequestID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    public var description: String { "#\(rawValue)" }
}
