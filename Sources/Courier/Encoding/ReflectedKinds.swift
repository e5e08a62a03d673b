import Foundation

// Protocols that let the encoder open generic containers held in an `Any`
// without bridging them to `[Any]` or `[String: Any]` (which copies every element).

protocol OptionalProtocol {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalProtocol {
    var wrappedAny: Any? {
        switch self {
        case .some(let wrapped): wrapped
        case .none: nil
        }
    }
}

protocol ArrayProtocol {
    func forEachElement<E: Error>(_ body: (Int, Any) throws(E) -> Void) throws(E)
}

extension Array: ArrayProtocol {
    func forEachElement<E: Error>(_ body: (Int, Any) throws(E) -> Void) throws(E) {
        for index in indices { try body(index, self[index]) }
    }
}

extension ContiguousArray: ArrayProtocol {
    func forEachElement<E: Error>(_ body: (Int, Any) throws(E) -> Void) throws(E) {
        for index in indices { try body(index, self[index]) }
    }
}

extension ArraySlice: ArrayProtocol {
    func forEachElement<E: Error>(_ body: (Int, Any) throws(E) -> Void) throws(E) {
        for (offset, element) in enumerated() { try body(offset, element) }
    }
}

protocol StringKeyedDictionaryProtocol {
    /// Entries sorted by key, so output does not depend on hashing.
    func forEachSortedEntry<E: Error>(_ body: (String, Any) throws(E) -> Void) throws(E)
}

extension Dictionary: StringKeyedDictionaryProtocol where Key == String {
    func forEachSortedEntry<E: Error>(_ body: (String, Any) throws(E) -> Void) throws(E) {
        // By UTF-8 bytes, a total order: String's `<` leaves some distinct keys unordered both
        // ways ("e\u{301}" and "\u{E9}\u{0}"), which would leave their order to hashing.
        // For ASCII keys the two orders agree.
        for entry in sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            try body(entry.key, entry.value)
        }
    }
}
