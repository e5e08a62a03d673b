import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A complete HTTP response, as a transport hands it back.
struct TransportResponse: Sendable {
    var response: HTTPURLResponse
    var body: Data
}

/// Sends URL requests: the queue's only way out to the network, so tests can replace it.
protocol Transport: Sendable {
    /// Makes a task that sends `request`, with the body streamed from `bodyFile` when it is
    /// given and `request.httpBody` is `nil`. The task does nothing until it is resumed; once
    /// resumed it calls `completion` exactly once, on any thread.
    func makeTask(
        for request: URLRequest,
        bodyFile: URL?,
        completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void
    ) -> any TransportTask

    /// Cancels everything in flight and releases the transport's resources.
    func invalidate()
}

/// One request a transport sends.
protocol TransportTask: Sendable {
    /// Starts sending.
    func resume()
    /// Stops the request; once resumed, its completion then reports ``RequestError/cancelled``.
    func cancel()
    /// Bytes sent and received so far, with the totals when they are known.
    var progress: TransferProgress { get }
}

extension RequestError {
    /// The error for a URLSession failure.
    init(_ error: URLError, maximumResponseSize: Int? = nil) {
        switch error.code {
        case .cancelled: self = .cancelled
        case .timedOut: self = .timedOut
        case .dataLengthExceedsMaximum: self = .responseTooLarge(limit: maximumResponseSize ?? 0)
        default: self = .transportFailed(error)
        }
    }
}
