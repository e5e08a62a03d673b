import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a streamed request's body goes once its response head is accepted: a consumer's
/// ``ResponseStream``, or a file. The queue's `StreamReceiver` hands it the body; the sink decides
/// the request's result.
///
/// Calls come in this order: `accepts` for each response head (redirect hops, refused
/// credentials and rejected statuses are buffered by the queue instead, as for any request);
/// then, for the one head it accepted, `open`, `write` for each chunk, and `close` once. The
/// queue calls `requestEnded` with the result it delivers, whichever way the request ended, and
/// `settle` when a request ends from outside (cancelled, queue released).
protocol ResponseSink: AnyObject, Sendable {
    /// The request is about to be sent (every attempt, after the request's own hook; not again
    /// for a redirect hop, which carries the headers on): a download asks for the rest of its
    /// partial data here. Default: nothing.
    func willSend(_ urlRequest: inout URLRequest)

    /// Whether this response's body is the one wanted.
    func accepts(_ head: ResponseHead) -> Bool

    /// The body starts. `resumeTransfer` lets a transfer paused by `write` go on. Returns an error
    /// to end the request with instead (a file that cannot be created).
    func open(_ head: ResponseHead, resumeTransfer: @escaping @Sendable () -> Void) -> RequestError?

    /// The next chunk of the body.
    func write(_ chunk: Data) -> SinkDemand

    /// The transfer is over: `nil` when the body is complete. Returns the request's result.
    func close(_ error: RequestError?) -> AnyResult

    /// The result a request ended with from outside its transfer: `result`, or what it means for
    /// a body already under way (a stream's ``StreamedResponse`` with its ending).
    func settle(_ result: AnyResult) -> AnyResult

    /// The request has ended with `result`, however it ended: release its consumer, clean up.
    func requestEnded(_ result: AnyResult)
}

extension ResponseSink {
    func willSend(_ urlRequest: inout URLRequest) {}
}

/// What a sink wants after a chunk.
enum SinkDemand {
    case more
    case pause
    /// Stop the transfer: the request ends with this error.
    case fail(RequestError)
}
