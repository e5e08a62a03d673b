import Dispatch
import Foundation

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
        slot.with(scope, body)
        for queue in scope.holdingQueues { queue.releaseHeldRequests(of: scope) }
    }

    /// The scope of the current thread, if it is running observers.
    static var current: DeliveryScope? {
        slot.current
    }

    /// Whether this is the main thread, remembered per thread: Foundation asks the kernel
    /// (two system calls on Linux) every time, and every request asks.
    static var isMainThread: Bool {
        if let known = mainThreadAnswer.current { return known.isMain }
        let isMain = Thread.isMainThread
        mainThreadAnswer.remember(isMain ? MainThreadAnswer.main : MainThreadAnswer.other)
        return isMain
    }

    /// Releases the requests `queue` holds for this scope when it ends.
    func releaseWhenDone(_ queue: RequestQueue) {
        holdingQueues.append(queue)
    }

    private static let slot = ThreadSlot<DeliveryScope>()
    private static let mainThreadAnswer = ThreadSlot<MainThreadAnswer>()

    /// What a thread learnt of itself; the two answers live as long as the process.
    private final class MainThreadAnswer: Sendable {
        let isMain: Bool
        static let main = MainThreadAnswer(isMain: true)
        static let other = MainThreadAnswer(isMain: false)

        private init(isMain: Bool) {
            self.isMain = isMain
        }
    }
}
