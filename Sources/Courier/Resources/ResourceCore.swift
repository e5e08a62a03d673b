import Foundation
import Observation

/// What a ``Resource`` holds: its storage, under a lock it shares with other resources
/// (``LockStripes``), and the registrar its observers track it through. One object, since an app
/// may keep thousands of resources, and not generic (see ``ResourceObservation``).
///
/// The registrar is made by the first read: observation registers through reads (SwiftUI's
/// `body`, `withObservationTracking`), so a resource nobody has read has no observers, and needs
/// none of the runtime's state (about 120 bytes). A change made before then tells nobody; a read
/// that makes the registrar sees the state that change left, since both take the lock.
final class ResourceCore: Observable, @unchecked Sendable {
    // Safe to share across threads: `storage` and `registrar` are only read or written while
    // `lock` is held (`withLock`, `read`, `notify`), and `lock` is the same for the object's life.
    private var lock: NSLock { LockStripes.lock(for: self) }
    // Unchecked: the lock already makes every access exclusive (the checks cost a runtime call each).
    @exclusivity(unchecked) private var storage: ResourceStorage
    @exclusivity(unchecked) private var registrar: ObservationRegistrar?

    init(_ storage: ResourceStorage) {
        self.storage = storage
    }

    /// Runs `body` with the storage. It must take no other lock of ``LockStripes``.
    func withLock<Result>(_ body: (inout ResourceStorage) throws -> Result) rethrows -> Result {
        let lock = self.lock   // found once: it is a lookup by address, not a field
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage)
    }

    /// Reads the storage as an observed property: observers tracking the caller hear of the
    /// property's next change.
    func read<Result>(_ property: ResourceObservation.Property, _ body: (inout ResourceStorage) -> Result) -> Result {
        let lock = self.lock
        lock.lock()
        let registrar = self.registrar ?? makeRegistrar()
        let result = body(&storage)   // in place: a copy would retain each of its references
        lock.unlock()
        if property == .isLoading {
            registrar.access(self, keyPath: Self.loadingKeyPath)
        } else {
            registrar.access(self, keyPath: Self.contentKeyPath)
        }
        return result
    }

    /// Ends the effects of a change that began at `old` and tells observers, once, what it
    /// changed: `willSet` then `didSet` of each name (the change is already made: observers only
    /// ever look later, on the context, or at their next read).
    func endEffects(since old: ResourceMarks) {
        let (changes, registrar) = withLock { storage in
            storage.effectsThread = 0
            return (ResourceChanges(old, storage.state.marks), self.registrar)
        }
        guard changes.content || changes.isLoading, let registrar else { return }
        if changes.content { registrar.willSet(self, keyPath: Self.contentKeyPath) }
        if changes.isLoading { registrar.willSet(self, keyPath: Self.loadingKeyPath) }
        if changes.content { registrar.didSet(self, keyPath: Self.contentKeyPath) }
        if changes.isLoading { registrar.didSet(self, keyPath: Self.loadingKeyPath) }
    }

    /// Whether anything has read the resource, so that observers may be tracking it (tests).
    var hasRegistrar: Bool { withLock { _ in registrar != nil } }

    /// Called with the lock held.
    private func makeRegistrar() -> ObservationRegistrar {
        let made = ObservationRegistrar()
        registrar = made
        return made
    }

    // The names observers track, as key paths: the Observation runtime hashes and compares a key
    // path at every tracked read and every change, and never reads through it. A stored
    // property's key path is hashed as its offset (a computed one's as its accessor's identity
    // besides), so the names are the core's two stored properties, each made once: content is
    // `storage`, loading is `registrar`. Not empty stand-ins: those all sit at one offset, which
    // made every name the same (a screen showing only the value was told of each load's start).
    private static let contentKeyPath: KeyPath<ResourceCore, ResourceStorage> & Sendable = \.storage
    private static let loadingKeyPath: KeyPath<ResourceCore, ObservationRegistrar?> & Sendable = \.registrar
}
