import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// A streaming transport for unit tests: each request it is asked to send becomes an
/// ``Exchange`` that the test plays the server's part of, step by step (head, chunks, end), so
/// that tests decide every interleaving. It honours pauses as a transport that can pause must:
/// after a chunk answered with `.pause`, ``Exchange/sendAndWait(_:file:line:)`` sends nothing
/// more until the receiver resumes the transfer.
final class ExchangeTransport: Transport {
    /// One request on the wire, played by the test.
    final class Exchange: Sendable {
        /// The request as it went on the wire.
        let request: URLRequest
        private let receiver: any TransportStreamReceiver
        private let wire: DispatchQueue
        private let state = Locked((completed: false, cancelled: false, resumes: 0))
        private let resumed = DispatchSemaphore(value: 0)
        private let cancelled = DispatchSemaphore(value: 0)

        init(request: URLRequest, receiver: any TransportStreamReceiver, wire: DispatchQueue) {
            self.request = request
            self.receiver = receiver
            self.wire = wire
        }

        /// Sends the response head.
        func head(_ status: Int, _ headers: [String: String] = [:]) {
            let response = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
            wire.sync { if !state.withLock({ $0.completed }) { receiver.transportDidReceive(response) } }
        }

        /// Sends a chunk of the body; returns what the receiver asked for (nil once the exchange ended).
        @discardableResult
        func send(_ chunk: Data) -> TransportDemand? {
            wire.sync { state.withLock({ $0.completed }) ? nil : receiver.transportDidReceive(chunk) }
        }

        /// Sends a chunk, and if the receiver paused the transfer, waits until it resumes it
        /// (for a download: until the queue has decided on the head and the file has the chunk).
        func sendAndWait(_ chunk: Data, file: StaticString = #filePath, line: UInt = #line) {
            let before = state.withLock { $0.resumes }
            if send(chunk) == .pause { waitForResume(after: before, file: file, line: line) }
        }

        /// Waits until the receiver has let the transfer go on more than `count` times in all.
        private func waitForResume(after count: Int, file: StaticString, line: UInt) {
            let deadline = DispatchTime.now() + ExchangeTransport.patience
            while state.withLock({ $0.resumes }) <= count {
                guard resumed.wait(timeout: deadline) == .success else {
                    return XCTFail("the transfer was not resumed", file: file, line: line)
                }
            }
        }

        /// Ends the transfer: `nil` after a complete body.
        func finish(_ error: RequestError? = nil) {
            wire.sync { complete(error) }
        }

        /// Sends a chunk of text.
        @discardableResult
        func send(_ text: String) -> TransportDemand? {
            send(Data(text.utf8))
        }

        /// Whether the queue cancelled the task.
        var wasCancelled: Bool { state.withLock { $0.cancelled } }

        /// How many times the receiver let a paused transfer go on.
        var resumes: Int { state.withLock { $0.resumes } }

        /// Waits until the queue cancels the task (``ExchangeTransport/patience`` at most); false if it did not.
        func waitUntilCancelled() -> Bool {
            if wasCancelled { return true }
            return cancelled.wait(timeout: .now() + ExchangeTransport.patience) == .success || wasCancelled
        }

        /// Waits until the receiver lets the transfer go on once more than `count` times
        /// (``ExchangeTransport/patience`` at most); false if it did not.
        func waitForResumes(moreThan count: Int) -> Bool {
            let deadline = DispatchTime.now() + ExchangeTransport.patience
            while resumes <= count {
                guard resumed.wait(timeout: deadline) == .success else { return false }
            }
            return true
        }

        fileprivate func cancel() {
            state.withLock { $0.cancelled = true }
            cancelled.signal()
            wire.async { self.complete(.cancelled) }
        }

        fileprivate func resumeDelivery() {
            state.withLock { $0.resumes += 1 }
            resumed.signal()
        }

        private func complete(_ error: RequestError?) {
            let first = state.withLock { state -> Bool in
                defer { state.completed = true }
                return !state.completed
            }
            if first { receiver.transportDidComplete(error) }
        }
    }

    /// How long the waits above wait for what the queue does in answer to the test. Only a broken
    /// queue makes them wait this long, so it is generous: a loaded machine under ThreadSanitizer.
    static let patience: Double = 30

    private let wire = DispatchQueue(label: "ExchangeTransport.wire")
    private let exchanges = Locked<[Exchange]>([])
    private let started = DispatchSemaphore(value: 0)
    private let startedCount = Locked(0)

    /// Every exchange so far, in the order requests went on the wire.
    var all: [Exchange] { exchanges.withLock { $0 } }

    /// Waits for the next request to go on the wire (the `n`th, counting from 1, on the `n`th call).
    func next(file: StaticString = #filePath, line: UInt = #line) throws -> Exchange {
        guard started.wait(timeout: .now() + Self.patience) == .success else {
            XCTFail("no request went on the wire", file: file, line: line)
            throw RequestError.timedOut
        }
        let index = startedCount.withLock { count -> Int in
            defer { count += 1 }
            return count
        }
        return exchanges.withLock { $0[index] }
    }

    func makeStreamingTask(for request: TransportRequest, receiver: any TransportStreamReceiver) -> any TransportTask {
        let exchange = Exchange(request: request.urlRequest, receiver: receiver, wire: wire)
        return ExchangeTask(exchange: exchange, onResume: { [self] in
            exchanges.withLock { $0.append(exchange) }
            started.signal()
        })
    }

    /// A buffered request is played the same way; its response is collected whole.
    func makeTask(for request: TransportRequest,
                  completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) -> any TransportTask {
        makeStreamingTask(for: request, receiver: Collector(completion: completion))
    }

    func invalidate() {
        for exchange in all { exchange.cancel() }
    }

    private struct ExchangeTask: TransportTask {
        let exchange: Exchange
        let onResume: @Sendable () -> Void
        func resume() { onResume() }
        func cancel() { exchange.cancel() }
        func resumeDelivery() { exchange.resumeDelivery() }
        var progress: TransferProgress { TransferProgress() }
    }

    private final class Collector: TransportStreamReceiver {
        private let completion: @Sendable (Result<TransportResponse, RequestError>) -> Void
        private let state = Locked<(head: HTTPURLResponse?, body: Data)>((nil, Data()))

        init(completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) {
            self.completion = completion
        }

        func transportDidReceive(_ response: HTTPURLResponse) { state.withLock { $0.head = response } }

        func transportDidReceive(_ chunk: Data) -> TransportDemand {
            state.withLock { $0.body.append(chunk) }
            return .more
        }

        func transportDidComplete(_ error: RequestError?) {
            let (head, body) = state.withLock { ($0.head, $0.body) }
            if let error { return completion(.failure(error)) }
            guard let head else { return completion(.failure(.transportFailed(URLError(.badServerResponse)))) }
            completion(.success(TransportResponse(response: head, body: body)))
        }
    }
}
