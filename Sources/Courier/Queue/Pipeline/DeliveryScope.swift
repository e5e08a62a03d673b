import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A block of observer calls running on a background callback queue's thread.
///
/// A request added from an observer would otherwise start on the queue's start queue, which
/// wakes another thread. On Linux that third thread per request (completion → callback → start)
/// made the scheduler migrate threads between cores several times as often as raw URLSession
/// does, and cost requests per second (the figures are in BENCHMARKS.md's analysis). Inside a scope,
/// `add` holds the request out of the waiting lists until the block ends (`DeferredStart`), and
/// the start runs then on this same thread (inside the queue's start queue, so delegates still
/// run there), after the observers have returned: no thread hop, no user code (and no lock it
/// holds) below it, and no request started before the observer that added it returned. An
/// observer that does not return within the queue's deferred-start patience
/// (`QueueState.Timing`) has its requests released by the queue's watchdog.
///
/// The main thread never gets a scope: requests are not prepared on it.
final class DeliveryScope {
    /// Queues that hold requests added in this scope, to release when it ends.
    private var holdingQueues: [RequestQueue] = []

    private init() {}

    /// Runs `body` (observer calls) in a scope, then starts what its observers added.
    static func run(_ body: () -> Void) {
        guard !isMainThread else { return body() }
        let scope = DeliveryScope()
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(scope).toOpaque())
        body()
        pthread_setspecific(key, outer)
        for queue in scope.holdingQueues { queue.releaseHeldRequests(of: scope) }
    }

    /// The scope of the current thread, if it is running observers.
    static var current: DeliveryScope? {
        pthread_getspecific(key).map { Unmanaged<DeliveryScope>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Whether this is the main thread, remembered per thread: Foundation asks the kernel
    /// (two system calls on Linux) every time, and every request asks.
    static var isMainThread: Bool {
        if let known = pthread_getspecific(mainThreadKey) {
            return Int(bitPattern: known) == 2
        }
        let isMain = Thread.isMainThread
        // Not a pointer: 1 or 2 stored in the slot, so that nil means "not known yet".
        pthread_setspecific(mainThreadKey, UnsafeRawPointer(bitPattern: isMain ? 2 : 1))
        return isMain
    }

    /// Releases the requests `queue` holds for this scope when it ends.
    func releaseWhenDone(_ queue: RequestQueue) {
        holdingQueues.append(queue)
    }

    private static let mainThreadKey = makeKey()
    private static let key = makeKey()

    private static func makeKey() -> pthread_key_t {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed with \(status)")
        return key
    }
}
