#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A reference to an object that the current thread sees while code that set it runs: the queue's
/// per-thread state (a delivery scope, a transport's hand-over, what is known of the main thread).
/// The one place where that state touches pthread keys and unretained pointers.
///
/// Safe because an object is only ever read from the slot while it is alive: `with` keeps it
/// alive (its caller holds it) until it has put back what was there before, and `remember` is
/// for objects that live as long as the process (static ones).
final class ThreadSlot<Object: AnyObject>: Sendable {
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed with \(status)")
        self.key = key
    }

    /// The object this thread sees, if any.
    var current: Object? {
        pthread_getspecific(key).map { Unmanaged<Object>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Runs `body` with `object` in this thread's slot, then puts back what was there.
    func with<Result>(_ object: Object, _ body: () throws -> Result) rethrows -> Result {
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(object).toOpaque())
        defer { pthread_setspecific(key, outer) }
        return try body()
    }

    /// Puts `object`, which lives as long as the process, in this thread's slot for good.
    func remember(_ object: Object) {
        pthread_setspecific(key, Unmanaged.passUnretained(object).toOpaque())
    }
}
