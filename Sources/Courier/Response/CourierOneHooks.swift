import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Courier 1 hooks that take an `HTTPURLResponse` (`Response.validate(_:)`, the queue
/// delegate's `requestQueue(_:didReceive:)`, `Authenticator.isAuthenticationFailure(_:)`), called
/// only for types that implement them.
///
/// Their new forms take a ``ResponseHead`` and, by default, call the old ones, so that types
/// written for Courier 1 keep working. But most types implement neither, and calling an old default
/// would make an `HTTPURLResponse` for every response for nothing (on Linux it costs as much as
/// the rest of a response's handling). Swift cannot say whether a type implements a requirement,
/// so the queue learns it: the first time a type's hook is asked, the old form runs as it always
/// did, and its default, if that is what runs, marks the type. From then on a marked type's new
/// form answers as the old default would, without an `HTTPURLResponse`; any other type's old
/// form keeps being called.
enum CourierOneHooks {
    enum Hook: Hashable, Sendable {
        case validate, didReceive, isAuthenticationFailure
    }

    private struct Key: Hashable {
        let type: ObjectIdentifier
        let hook: Hook
    }

    /// Whether each type asked so far leaves each hook at its default.
    private static let usesDefault = Locked<[Key: Bool]>([:])

    /// The types whose default ran during one first call: only that call's thread touches it.
    private final class Marks: @unchecked Sendable {
        var types: Set<ObjectIdentifier> = []
    }

    @TaskLocal private static var marks: Marks?

    /// The old form's answer (`legacy`), unless `type` is known to leave `hook` at its default:
    /// then what that default answers (`byDefault`), without calling it.
    static func call<T>(_ hook: Hook, of type: Any.Type, legacy: () -> T, byDefault: () -> T) -> T {
        let key = Key(type: ObjectIdentifier(type), hook: hook)
        switch usesDefault.withLock({ $0[key] }) {
        case true?:
            return byDefault()
        case false?:
            return legacy()
        case nil:
            let marks = Marks()
            let answer = $marks.withValue(marks) { legacy() }
            // Only `type`'s own default counts: an old form of its own may call another type's.
            let isDefault = marks.types.contains(key.type)
            usesDefault.withLock { $0[key] = isDefault }
            return answer
        }
    }

    /// Called by an old form's default implementation, for `type`.
    static func defaultRan(for type: Any.Type) {
        marks?.types.insert(ObjectIdentifier(type))
    }
}
