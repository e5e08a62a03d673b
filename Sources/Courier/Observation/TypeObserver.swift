import Synchronization

/// An observer of every result of one response type, for as long as its owner lives.
///
/// `@unchecked Sendable` because of the weak `owner`: the queue only ever compares it by
/// identity and tests it for `nil`, never touches the owner's members, and the Swift runtime
/// makes reading and zeroing weak references thread-safe.
final class TypeObserver: @unchecked Sendable {
    private weak var owner: AnyObject?
    private let removed = Atomic<Bool>(false)
    private let handler: @Sendable (AnyUpdate) -> Void
    /// Called where the result is produced rather than on the callback queue (for streams of
    /// results, which must not depend on the main queue running).
    let isDirect: Bool
    /// Whether it also sees stored responses shown before a result (``ResponseUpdate``); others
    /// see results only.
    let wantsUpdates: Bool

    init(owner: AnyObject, isDirect: Bool = false, wantsUpdates: Bool = false,
         handler: @escaping @Sendable (AnyUpdate) -> Void) {
        self.owner = owner
        self.isDirect = isDirect
        self.wantsUpdates = wantsUpdates
        self.handler = handler
    }

    /// Whether it should still be called: its owner lives and it was not removed.
    var isActive: Bool {
        owner != nil && !removed.load(ordering: .acquiring)
    }

    func isOwned(by candidate: AnyObject) -> Bool {
        owner === candidate
    }

    /// Stops calls, including deliveries already scheduled on the callback queue.
    func remove() {
        removed.store(true, ordering: .releasing)
    }

    /// Calls the handler if the observer is still active.
    func deliver(_ update: AnyUpdate) {
        if isActive { handler(update) }
    }
}

/// The type observers of one queue, by response type (the type itself, not its name).
struct TypeObserverTable {
    private var observers: [ObjectIdentifier: [TypeObserver]] = [:]
    private(set) var count = 0
    /// A full sweep runs when `count` reaches this, so sweeping costs O(1) per addition.
    private var sweepThreshold = 64

    mutating func add(_ observer: TypeObserver, for type: ObjectIdentifier) {
        observers[type, default: []].append(observer)
        count += 1
        if count >= sweepThreshold {
            sweep()
            sweepThreshold = max(64, count * 2)
        }
    }

    /// The active observers of `type`; drops the inactive ones met on the way.
    mutating func active(for type: ObjectIdentifier) -> [TypeObserver] {
        guard let list = observers[type] else { return [] }
        let active = list.filter(\.isActive)
        if active.count != list.count {
            count -= list.count - active.count
            observers[type] = active.isEmpty ? nil : active
        }
        return active
    }

    mutating func remove(type: ObjectIdentifier?, owner: AnyObject) {
        for key in type.map({ [$0] }) ?? Array(observers.keys) {
            guard let list = observers[key] else { continue }
            for observer in list where observer.isOwned(by: owner) { observer.remove() }
        }
        sweep()
    }

    /// Drops observers whose owner is gone or that were removed, releasing their handlers.
    mutating func sweep() {
        var remaining = 0
        for (key, list) in observers {
            let active = list.filter(\.isActive)
            remaining += active.count
            if active.count != list.count { observers[key] = active.isEmpty ? nil : active }
        }
        count = remaining
    }
}
