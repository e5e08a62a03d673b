import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
@testable import Courier

/// A transport for unit tests: records every request it is asked to send and answers from a
/// script, either at once or when the test releases it, so tests control every interleaving.
final class StubTransport: Transport {
    enum Reply: Sendable {
        case status(Int, headers: [String: String] = [:], body: Data = Data())
        /// A head of Courier's own, whose fields keep their order and repeated names.
        case fields(Int, HTTPFields, body: Data = Data())
        case failure(URLError.Code)
        /// Keep the request in flight until ``release(_:)`` or a cancel.
        case hold

        static func json(_ text: String, status: Int = 200) -> Reply {
            .status(status, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
        }
    }

    private struct Held {
        let request: URLRequest
        let completion: @Sendable (Result<TransportResponse, RequestError>) -> Void
    }

    private struct State {
        var started: [URLRequest] = []
        var held: [Int: Held] = [:]
        var nextKey = 0
        var invalidated = false
    }

    private let state = Locked(State())
    private let reply: @Sendable (URLRequest) -> Reply
    /// Signalled once each time a request starts, so tests wait for events instead of sleeping.
    let startedSignal = DispatchSemaphore(value: 0)

    init(reply: @escaping @Sendable (URLRequest) -> Reply = { _ in .status(200) }) {
        self.reply = reply
    }

    /// The requests that were resumed, in order.
    var started: [URLRequest] { state.withLock { $0.started } }
    var heldCount: Int { state.withLock { $0.held.count } }
    var isInvalidated: Bool { state.withLock { $0.invalidated } }
    private let invalidatedSignal = DispatchSemaphore(value: 0)

    /// Waits until the transport is invalidated (a released queue does it on another thread
    /// after its deinit); false on timeout.
    func waitForInvalidation(timeout: TimeInterval = 30) -> Bool {
        invalidatedSignal.wait(timeout: .now() + timeout) == .success && isInvalidated
    }

    /// Waits until `count` more requests have started; false on timeout.
    func waitForStarts(_ count: Int, timeout: TimeInterval = 30) -> Bool {
        for _ in 0..<count where startedSignal.wait(timeout: .now() + timeout) == .timedOut { return false }
        return true
    }

    /// Completes the oldest held request with `reply`. Returns the request, or nil if none is held.
    @discardableResult
    func releaseOldest(with reply: Reply = .status(200)) -> URLRequest? {
        let held: Held? = state.withLock { state in
            guard let key = state.held.keys.min() else { return nil }
            return state.held.removeValue(forKey: key)
        }
        guard let held else { return nil }
        held.completion(Self.result(reply, for: held.request))
        return held.request
    }

    /// Completes every request held now with `reply`, oldest first, on this thread (requests held
    /// meanwhile stay held). Returns how many were released.
    @discardableResult
    func releaseAll(with reply: Reply = .status(200)) -> Int {
        let held = state.withLock { state in
            defer { state.held = [:] }
            return state.held.sorted { $0.key < $1.key }.map(\.value)
        }
        for entry in held { entry.completion(Self.result(reply, for: entry.request)) }
        return held.count
    }

    func makeTask(
        for transportRequest: TransportRequest,
        completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void
    ) -> any TransportTask {
        let request = transportRequest.urlRequest
        let key = state.withLock { state in
            defer { state.nextKey += 1 }
            return state.nextKey
        }
        let reply = self.reply
        return StubTask(
            onResume: { [self] in
                let answer = reply(request)
                state.withLock { state in
                    state.started.append(request)
                    if case .hold = answer { state.held[key] = Held(request: request, completion: completion) }
                }
                startedSignal.signal()
                if case .hold = answer { return }
                // Answer from another thread, as URLSession does.
                DispatchQueue.global().async { completion(Self.result(answer, for: request)) }
            },
            onCancel: { [self] in
                let held = state.withLock { $0.held.removeValue(forKey: key) }
                held?.completion(.failure(.cancelled))
            }
        )
    }

    func invalidate() {
        let held = state.withLock { state in
            state.invalidated = true
            defer { state.held = [:] }
            return Array(state.held.values)
        }
        invalidatedSignal.signal()
        for entry in held { entry.completion(.failure(.cancelled)) }
    }

    private static func result(_ reply: Reply, for request: URLRequest) -> Result<TransportResponse, RequestError> {
        switch reply {
        case .status(let code, let headers, let body):
            let response = HTTPURLResponse(url: request.url!, statusCode: code, httpVersion: "HTTP/1.1", headerFields: headers)!
            return .success(TransportResponse(response: response, body: body))
        case .fields(let code, let fields, let body):
            return .success(TransportResponse(head: ResponseHead(status: code, headerFields: fields, url: request.url!), body: body))
        case .failure(let code):
            return .failure(RequestError(URLError(code)))
        case .hold:
            fatalError("a held request is answered by releaseOldest(with:)")
        }
    }
}

private struct StubTask: TransportTask {
    let onResume: @Sendable () -> Void
    let onCancel: @Sendable () -> Void
    func resume() { onResume() }
    func cancel() { onCancel() }
    var progress: TransferProgress { TransferProgress() }
}
