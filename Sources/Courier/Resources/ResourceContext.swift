import Dispatch
import Foundation

/// Where a ``Resource`` changes: its properties change, and its observers are told, only there.
///
/// ```swift
/// let feed = queue.resource(FeedRequest(), options: ResourceOptions(updatesOn: .queue(feedQueue)))
/// ```
public enum ResourceContext: Sendable, Hashable {
    /// The main actor (the main queue): what SwiftUI and UIKit need. The default.
    case mainActor
    /// A serial dispatch queue of the app's, or the queue behind an actor's executor. A
    /// concurrent queue would let changes overlap: give a serial one.
    case queue(DispatchQueue)

    public static func == (lhs: ResourceContext, rhs: ResourceContext) -> Bool {
        switch (lhs, rhs) {
        case (.mainActor, .mainActor): true
        case (.queue(let a), .queue(let b)): a === b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .mainActor: hasher.combine(0)
        case .queue(let queue): hasher.combine(ObjectIdentifier(queue))
        }
    }

    private var dispatchQueue: DispatchQueue {
        switch self {
        case .mainActor: .main
        case .queue(let queue): queue
        }
    }

    /// Marks the queues resources change on, so that a call made there runs at once (a view
    /// that calls `load()` on the main actor sees `isLoading` before it draws again).
    private static let marker = DispatchSpecificKey<ObjectIdentifier>()

    /// Whether the calling code runs on this context.
    var isCurrent: Bool {
        switch self {
        case .mainActor:
            return Thread.isMainThread
        case .queue(let queue):
            return DispatchQueue.getSpecific(key: Self.marker) == ObjectIdentifier(queue)
        }
    }

    /// Prepares the context for ``isCurrent``: called once per resource, before its first change.
    /// Marks a queue once: setting a queue's specific value makes dispatch allocate (about 40
    /// bytes kept a call), and an app may make thousands of resources on one queue.
    func mark() {
        guard case .queue(let queue) = self, queue.getSpecific(key: Self.marker) != ObjectIdentifier(queue) else { return }
        queue.setSpecific(key: Self.marker, value: ObjectIdentifier(queue))
    }

    /// Runs `work` on the context, later.
    func async(_ work: @escaping @Sendable () -> Void) {
        dispatchQueue.async(execute: work)
    }

    /// Runs `work` on the context after `seconds`, unless the returned closure was called first.
    func after(_ seconds: Double, _ work: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let cancelled = Locked(false)
        dispatchQueue.asyncAfter(deadline: .now() + max(0, seconds)) {
            if !cancelled.withLock({ $0 }) { work() }
        }
        return { cancelled.withLock { $0 = true } }
    }
}
