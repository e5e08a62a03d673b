import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier

/// A transport whose streamed tasks the test drives by hand: it sends each response head, chunk
/// and end itself and sees every demand, pause, resume and cancel, so tests of streaming need no
/// network and no timing. Buffered tasks are not supported (they fail).
final class ScriptedStreamTransport: Transport {
    final class Task: TransportTask, @unchecked Sendable {
        // @unchecked: every mutable field is behind `lock`.
        let request: URLRequest
        private let receiver: any TransportStreamReceiver
        private let lock = NSLock()
        private var _resumed = false
        private var _cancelled = false
        private var _resumeDeliveryCount = 0
        private var _ended = false
        let resumedSignal = DispatchSemaphore(value: 0)
        let cancelledSignal = DispatchSemaphore(value: 0)
        let resumeDeliverySignal = DispatchSemaphore(value: 0)

        init(request: URLRequest, receiver: any TransportStreamReceiver) {
            self.request = request
            self.receiver = receiver
        }

        var isCancelled: Bool { lock.withLock { _cancelled } }
        var isResumed: Bool { lock.withLock { _resumed } }
        var resumeDeliveryCount: Int { lock.withLock { _resumeDeliveryCount } }

        func resume() {
            lock.withLock { _resumed = true }
            resumedSignal.signal()
        }

        func cancel() {
            let first = lock.withLock { () -> Bool in
                defer { _cancelled = true }
                return !_cancelled
            }
            guard first else { return }
            cancelledSignal.signal()
            // As the contract says: a resumed task then completes with cancelled.
            if lock.withLock({ _resumed }) { end(.cancelled) }
        }

        var progress: TransferProgress { TransferProgress() }

        func resumeDelivery() {
            lock.withLock { _resumeDeliveryCount += 1 }
            resumeDeliverySignal.signal()
        }

        func head(_ status: Int, headers: [String: String] = [:]) {
            receiver.transportDidReceive(HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1",
                                                         headerFields: headers)!)
        }

        @discardableResult
        func chunk(_ text: String) -> TransportDemand {
            receiver.transportDidReceive(Data(text.utf8))
        }

        @discardableResult
        func chunk(_ data: Data) -> TransportDemand {
            receiver.transportDidReceive(data)
        }

        func end(_ error: RequestError? = nil) {
            let first = lock.withLock { () -> Bool in
                defer { _ended = true }
                return !_ended
            }
            if first { receiver.transportDidComplete(error) }
        }
    }

    private let tasks = Locked<[Task]>([])
    private let startedSignal = DispatchSemaphore(value: 0)

    func makeTask(for request: TransportRequest,
                  completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) -> any TransportTask {
        preconditionFailure("ScriptedStreamTransport only streams")
    }

    func makeStreamingTask(for request: TransportRequest, receiver: any TransportStreamReceiver) -> any TransportTask {
        let task = Task(request: request.urlRequest, receiver: receiver)
        tasks.withLock { $0.append(task) }
        startedSignal.signal()
        return task
    }

    func invalidate() {}

    /// The `index`th task made (0 first), once it exists and has been resumed; nil on timeout.
    func task(_ index: Int, timeout: TimeInterval = 5) -> Task? {
        let deadline = DispatchTime.now() + timeout
        while true {
            if let task = tasks.withLock({ $0.count > index ? $0[index] : nil }) {
                return task.isResumed || task.resumedSignal.wait(timeout: deadline) == .success ? task : nil
            }
            if startedSignal.wait(timeout: deadline) == .timedOut { return nil }
        }
    }

    var taskCount: Int { tasks.withLock { $0.count } }
}

extension DispatchSemaphore {
    /// Waits for one signal within `seconds`; false on timeout.
    func wait(seconds: TimeInterval) -> Bool {
        wait(timeout: .now() + seconds) == .success
    }
}
