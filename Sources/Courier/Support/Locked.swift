import Foundation

/// A value guarded by a lock: the one lock type Courier uses for shared state.
///
/// Why not `Synchronization.Mutex`: on Linux ThreadSanitizer cannot see `Mutex`'s
/// synchronisation and reports false races on every value it guards (see the Linux notes),
/// which would make `swift test --sanitize=thread` useless for finding real ones. `NSLock` is a
/// pthread mutex, which ThreadSanitizer understands, and it is at least as fast uncontended
/// (BENCHMARKS.md's analysis). The value is only ever reached inside `withLock`, which is
/// what makes the `@unchecked Sendable` sound.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. `body` must not call back into
    /// anything that takes the same lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
