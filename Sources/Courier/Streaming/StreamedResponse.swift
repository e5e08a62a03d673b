import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a streamed request ended: the result its ID observers (and observers of this type) get
/// once its stream is over.
///
/// ```swift
/// let stream = queue.stream(LogTailRequest())
/// queue.addObserver(for: stream.id) { (result: Result<StreamedResponse, RequestError>) in
///     if case .success(let outcome) = result {
///         print(outcome.response.statusCode, outcome.bytesReceived, outcome.ending)
///     }
/// }
/// ```
/// A stream that never got its response head (the connection failed, the status was not
/// accepted, it was cancelled while waiting) ends in a failure instead, as any request does.
public struct StreamedResponse: Response {
    /// How the body ended, once its head had arrived.
    public enum Ending: Sendable, CustomStringConvertible {
        /// The whole body arrived.
        case finished
        /// The transfer failed, or the stream broke one of its limits, after the head.
        case failed(RequestError)
        /// The request was cancelled (by ID, by its consumer's task, or by the consumer going away).
        case cancelled

        /// The error behind a failed or cancelled ending.
        public var error: RequestError? {
            switch self {
            case .finished: nil
            case .failed(let error): error
            case .cancelled: .cancelled
            }
        }

        public var description: String {
            switch self {
            case .finished: "finished"
            case .failed(let error): "failed: \(error)"
            case .cancelled: "cancelled"
            }
        }
    }

    /// The response head the body came with.
    public let head: ResponseHead
    /// The body's bytes that arrived (decoded from any `Content-Encoding`).
    public let bytesReceived: Int64
    /// How the body ended.
    public let ending: Ending

    /// The head as a Foundation `HTTPURLResponse`, made when first asked for.
    public var response: HTTPURLResponse { head.httpURLResponse }

    /// Creates an outcome.
    public init(head: ResponseHead, bytesReceived: Int64, ending: Ending) {
        self.head = head
        self.bytesReceived = bytesReceived
        self.ending = ending
    }

    /// Creates an outcome from a Foundation response.
    public init(response: HTTPURLResponse, bytesReceived: Int64, ending: Ending) {
        self.init(head: ResponseHead(response), bytesReceived: bytesReceived, ending: ending)
    }

    /// A finished outcome for a whole body; how fixtures and transports without streaming deliver one.
    public init(body: ResponseData, head: ResponseHead) {
        self.init(head: head, bytesReceived: Int64(body.data.count), ending: .finished)
    }

    init(head: ResponseHead, bytesReceived: Int64, endedWith error: RequestError?) {
        let ending: Ending = switch error {
        case nil: .finished
        case .cancelled?: .cancelled
        case let error?: .failed(error)
        }
        self.init(head: head, bytesReceived: bytesReceived, ending: ending)
    }
}

extension Result where Success == any Sendable, Failure == RequestError {
    /// The error a request ended with: its failure, or what ended a stream after its head.
    var endingError: RequestError? {
        switch self {
        case .failure(let error): error
        // The type is compared first: a failed `as?` costs about 400 instructions (the runtime
        // looks for a boxed value), and nearly every result is not a stream's.
        case .success(let response):
            type(of: response) == StreamedResponse.self ? (response as? StreamedResponse)?.ending.error : nil
        }
    }
}
