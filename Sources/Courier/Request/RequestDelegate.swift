import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hooks that a ``Request`` type can adopt to follow and change its own sending.
///
/// Each method has an empty default. They run on the queue's background queues (never the
/// main thread), after the matching ``RequestQueueDelegate`` method.
public protocol RequestDelegate {
    /// Called just before the request is sent. Changes to `urlRequest` are what goes on the wire.
    func requestWillSend(_ urlRequest: inout URLRequest)
    /// Called once the request has been handed to the transport.
    func requestDidSend(_ urlRequest: URLRequest)
    /// Called when the request ends with an error. `urlRequest` is `nil` when it failed
    /// before a URL request could be made (an invalid URL or parameters, or it was
    /// cancelled while waiting).
    func request(_ urlRequest: URLRequest?, didFailWith error: RequestError)
}

extension RequestDelegate {
    public func requestWillSend(_ urlRequest: inout URLRequest) {}
    public func requestDidSend(_ urlRequest: URLRequest) {}
    public func request(_ urlRequest: URLRequest?, didFailWith error: RequestError) {}
}
