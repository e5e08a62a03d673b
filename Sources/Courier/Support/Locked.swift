import Foundation
import Synchronization

/// A value guarded by a lock: the one lock type Courier uses for shared state.
///
/// Why not `Synchronization.Mutex`: on Linux ThreadSanitizer cannot see `Mutex`'s
/// synchronisation and reports false races on every value it guards (see the Linux notes),
/// which would make `swift test --sanitize=thread` useless for finding real ones. `NSLock` is a
/// pthread mutex, which ThreadSanitizer understands, and it is at least as fast uncontended
/// (BENCHMARKS.md's analysis). The value is only ever reached inside `withLock`, which is
/// what makes the `@unchecked Sendable` sound.
final class Locked<Value>: @unchecked Sendable {
    private let lock: NSLock
    // Unchecked: the lock makes every access exclusive; the runtime's check would cost two calls
    // and a thread-local lookup per `withLock` (a body that took the same lock again would
    // deadlock on it before any overlap).
    @exclusivity(unchecked) private var value: Value
    #if DEBUG
    /// How many times `withLock` took the lock: debug builds count, so that tests can hold a
    /// request's lock traffic to what it is (`LockCountTests`); release builds do not pay for it.
    private let acquisitions = Atomic<Int>(0)

    var acquisitionCount: Int { acquisitions.load(ordering: .relaxed) }
    #endif

    init(_ value: Value) {
        self.value = value
        lock = NSLock()
    }

    /// A value guarded by a lock it shares with others (``LockStripes``): for objects an app
    /// keeps by the thousand, where a lock each (two allocations on Linux) would be most of their
    /// size. A body must then take no other `Locked` of the same stripes either.
    init(_ value: Value, sharing lock: NSLock) {
        self.value = value
        self.lock = lock
    }

    /// Runs `body` with exclusive access to the value. `body` must not call back into
    /// anything that takes the same lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        #if DEBUG
        acquisitions.add(1, ordering: .relaxed)
        #endif
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A fixed set of locks that many small objects share, each picked by its address: uncontended
/// locks cost the same shared or not, and 64 of them make two busy objects rarely meet on one.
/// The object keeps no reference to its lock (8 bytes each, and an app may keep thousands).
enum LockStripes {
    private static let locks = (0..<64).map { _ in NSLock() }

    private static let turn = Atomic<Int>(0)

    /// A lock for a new short-lived object to keep (`Locked(_:sharing:)`), the stripes taken in
    /// turn: a request's task would otherwise make, and destroy, a lock of its own each time.
    static func next() -> NSLock {
        locks[turn.wrappingAdd(1, ordering: .relaxed).newValue & 63]
    }

    /// The lock of `object`, the same for as long as it lives.
    static func lock(for object: AnyObject) -> NSLock {
        // Allocations are 16-byte aligned: the bits above that, folded, spread objects over the stripes.
        let address = UInt(bitPattern: ObjectIdentifier(object))
        return locks[Int(truncatingIfNeeded: (address >> 4 ^ address >> 10) & 63)]
    }
}
