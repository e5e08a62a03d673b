import Synchronization

/// The process-wide source of request IDs. Atomic so that threads adding at once never share one.
private let requestIDCounter = Atomic<UInt64>(0)

/// Identifies one request added to a ``RequestQueue``.
///
/// IDs are unique within the process (across all queues) and increase monotonically:
/// a request added later has a larger ID.
public struct RequestID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The ID's number, starting at 1.
    public let rawValue: UInt64

    init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// The next ID of the process.
    static func next() -> RequestID {
        RequestID(rawValue: requestIDCounter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    public static func < (lhs: RequestID, rhs: RequestID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    public var description: String { "#\(rawValue)" }
}
