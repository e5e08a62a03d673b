import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hooks into every step of every request of a ``RequestQueue``: logging, signing,
/// metrics, analytics.
///
/// Each method has an empty default, so a delegate implements only what it needs.
/// Methods run on the queue's background queues, never on the main thread, possibly at the
/// same time for different requests, so a delegate is `Sendable`. (`willSend` and `didSend`
/// run on the queue's start queue, which may borrow the thread of a background callback queue
/// whose observer added the request, or of the task awaiting
/// ``RequestQueue/send(_:priority:)``: see <doc:ConcurrencyAndCancellation>.) For one request they run in this
/// order: the queue's delegate, then the request's ``RequestDelegate``, then the
/// response's ``ResponseDelegate``, then observers.
///
/// ```swift
/// final class Logger: RequestQueueDelegate {
///     func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {
///         request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
///     }
///     func requestQueue(_ queue: RequestQueue, didReceive head: ResponseHead) {
///         print(head.status, head.url.absoluteString)
///     }
/// }
/// ```
public protocol RequestQueueDelegate: Sendable {
    /// Called just before a request is sent. Anything changed in `request` (headers,
    /// URL, body, method) is what goes on the wire.
    func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest)

    /// Called once a request has been handed to the transport.
    func requestQueue(_ queue: RequestQueue, didSend request: URLRequest)

    /// Called when a request ends with an error, whatever the error. `request` is `nil`
    /// when it failed before a URL request could be made (an invalid URL or parameters,
    /// or it was cancelled while waiting). A stream or download that failed or was cancelled
    /// after its response head counts too, though its observers get a ``StreamedResponse``
    /// saying so.
    func requestQueue(_ queue: RequestQueue, didFailWith request: URLRequest?, error: RequestError)

    /// Called once when a request ends, whatever its result, after `didFailWith` and before
    /// observers, with its timings, attempts, bytes and last status.
    func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics)

    /// Called before a redirect is followed. Return `newRequest` (the default) to follow it, a
    /// changed request to follow that instead, or `nil` to stop: the redirect response is then
    /// the request's response. `newRequest` already lacks the sensitive headers when the
    /// redirect leaves the origin.
    func requestQueue(_ queue: RequestQueue, shouldRedirect request: URLRequest, to newRequest: URLRequest,
                      response: HTTPURLResponse) -> URLRequest?

    /// Called when a failed attempt will be tried again, before the backoff delay. `attempt` is
    /// the number of the attempt that failed (1 for the first).
    func requestQueue(_ queue: RequestQueue, willRetry request: URLRequest, attempt: Int, after error: RequestError)

    /// Called when an HTTP response arrives, whatever its status, before it is validated
    /// and made into the response type.
    ///
    /// Default: calls the Courier 1 form, taking an `HTTPURLResponse`, when the delegate implements
    /// it; nothing otherwise. Implement this one rather than that, which needs an `HTTPURLResponse`
    /// made for it.
    func requestQueue(_ queue: RequestQueue, didReceive head: ResponseHead)

    /// The Courier 1 form of the hook for an arriving response, taking an `HTTPURLResponse`:
    /// called by the default of the form taking a ``ResponseHead``. Default: nothing.
    func requestQueue(_ queue: RequestQueue, didReceive response: HTTPURLResponse)
}

extension RequestQueueDelegate {
    public func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {}
    public func requestQueue(_ queue: RequestQueue, didSend request: URLRequest) {}
    public func requestQueue(_ queue: RequestQueue, didFailWith request: URLRequest?, error: RequestError) {}
    public func requestQueue(_ queue: RequestQueue, didReceive head: ResponseHead) {
        CourierOneHooks.call(.didReceive, of: type(of: self), legacy: { requestQueue(queue, didReceive: head.httpURLResponse) },
                             byDefault: {})
    }
    public func requestQueue(_ queue: RequestQueue, didReceive response: HTTPURLResponse) {
        CourierOneHooks.defaultRan(for: type(of: self))
    }
    public func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics) {}
    public func requestQueue(_ queue: RequestQueue, shouldRedirect request: URLRequest, to newRequest: URLRequest,
                             response: HTTPURLResponse) -> URLRequest? { newRequest }
    public func requestQueue(_ queue: RequestQueue, willRetry request: URLRequest, attempt: Int, after error: RequestError) {}
}
