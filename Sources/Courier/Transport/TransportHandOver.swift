#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Marks the moments when a transport of Courier's own hands a buffered result over on its own
/// thread, where the queue may finish the request at once instead of moving it to its work queue.
///
/// Moving a result to another thread wakes that thread: on a 2-core Linux VM each wake-up cost a
/// request about 30 µs of latency and several microseconds of CPU (Benchmarks/ANALYSIS.md, #20),
/// and one at a time a request made three of them. The curl transport's loop thread already
/// holds the result; when nothing but Courier's own code and the response's decoding would run
/// (no delegates, no authenticator, a small body: the queue decides, `AttemptStage`), finishing
/// there saves a hop. A completion called outside a hand-over (a transport of the user's, a
/// cache hit answered on the caller's thread) is moved to the work queue as before.
enum TransportHandOver {
    /// Runs `body`, which calls completions, marked as a hand-over on this thread.
    static func run(_ body: () -> Void) {
        let outer = pthread_getspecific(key)
        // Not a pointer to anything: a non-nil value in the slot is the mark.
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        body()
        pthread_setspecific(key, outer)
    }

    /// Whether the current thread is handing a result over.
    static var isActive: Bool {
        pthread_getspecific(key) != nil
    }

    /// Safe: the key is made once and never deleted; the slot holds a marker value, never a
    /// pointer that is dereferenced.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed with \(status)")
        return key
    }()
}
