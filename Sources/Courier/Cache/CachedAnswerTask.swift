import Synchronization

/// A request the store answers without the origin (a fresh response, a stale one the policy or
/// the request accepts, a `304` for the app's own conditions): its answer is made when the task
/// is, and handed over when it is resumed.
final class CachedAnswerTask: TransportTask {
    private let answer: TransportResponse
    private let completion: @Sendable (Result<TransportResponse, RequestError>) -> Void
    /// 0 until it ends; then 1 when it answered, 2 when it was cancelled first.
    private let ending = Atomic<UInt8>(0)

    init(_ answer: TransportResponse, completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) {
        self.answer = answer
        self.completion = completion
    }

    /// Nothing before it answers; the whole body once it has.
    var progress: TransferProgress {
        guard ending.load(ordering: .acquiring) == 1 else { return TransferProgress() }
        let bytes = Int64(answer.body.count)
        return TransferProgress(bytesReceived: bytes, totalBytesToReceive: bytes)
    }

    func resume() {
        if ending.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged {
            completion(.success(answer))
        }
    }

    func cancel() {
        if ending.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing).exchanged {
            completion(.failure(.cancelled))
        }
    }
}
