import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request with its type erased, so that requests of any type wait in one queue.
protocol AnyRequestBox: Sendable {
    var responseType: ObjectIdentifier { get }
    var responseTypeName: String { get }
    /// Whether the request adopts ``RequestDelegate`` (and so may change its URL request).
    var isRequestDelegate: Bool { get }
    /// Whether preparing it writes its body to a file (multipart), which can take seconds.
    var preparesSlowly: Bool { get }
    func prepare(with builder: URLRequestBuilder) throws(RequestError) -> PreparedRequest
    func willSend(_ urlRequest: inout URLRequest)
    func didSend(_ urlRequest: URLRequest)
    func didFail(_ urlRequest: URLRequest?, error: RequestError)
    /// Validates the response, makes the response type from it, and calls its ``ResponseDelegate``.
    /// `decoding` is the queue's, for requests that name none of their own.
    func makeResponse(from response: TransportResponse, decoding: ResponseDecoding) -> AnyResult
    /// Where the body goes as it arrives (a stream, a download); nil for a buffered request.
    var sink: (any ResponseSink)? { get }
    /// The request's ``Request/cachePolicy``.
    var cachePolicy: CachePolicy { get }
    /// The request's ``Request/sharesIdenticalRequests``.
    var sharesIdenticalRequests: Bool { get }
    /// The request's ``Request/redirectPolicy``: `nil` for the queue's.
    var redirectPolicy: RedirectPolicy? { get }
    /// The request's ``Request/whileOffline``: `nil` for the queue's.
    var whileOffline: OfflinePolicy? { get }
    /// Whether its update observers are shown a stored response before its result
    /// (``RequestQueue/load(_:priority:owner:handler:)``).
    var showsCachedFirst: Bool { get }
    /// What the journal keeps of a durable request; nil for any other.
    var durable: DurableRecord? { get }
}

extension AnyRequestBox {
    var sink: (any ResponseSink)? { nil }
    var showsCachedFirst: Bool { false }
    var durable: DurableRecord? { nil }
}

struct RequestBox<R: Request>: AnyRequestBox {
    let request: R
    var showsCachedFirst = false
    /// Replaces the request's own cache policy (a ``Resource`` that must see the origin's data).
    var policyOverride: CachePolicy?
    /// Replaces the request's own ``Request/whileOffline`` (a ``Resource``'s load after a failure waits).
    var offlineOverride: OfflinePolicy?
    /// Whether the request adopts ``RequestDelegate``: asked once, as the box is made. A cast to a
    /// protocol costs about 600 instructions (the runtime's conformance cache), and a request
    /// was asked four times or more, nearly always to find it adopts none.
    let isRequestDelegate: Bool

    init(request: R, showsCachedFirst: Bool = false, policyOverride: CachePolicy? = nil, offlineOverride: OfflinePolicy? = nil) {
        self.request = request
        self.showsCachedFirst = showsCachedFirst
        self.policyOverride = policyOverride
        self.offlineOverride = offlineOverride
        isRequestDelegate = request is any RequestDelegate
    }

    var responseType: ObjectIdentifier { ObjectIdentifier(R.ResponseType.self) }
    var responseTypeName: String { String(reflecting: R.ResponseType.self) }
    var preparesSlowly: Bool { R.ParametersType.self is any StreamableBodyData.Type }
    var cachePolicy: CachePolicy { policyOverride ?? request.cachePolicy }
    var sharesIdenticalRequests: Bool { request.sharesIdenticalRequests }
    var redirectPolicy: RedirectPolicy? { request.redirectPolicy }
    var whileOffline: OfflinePolicy? { offlineOverride ?? request.whileOffline }

    func prepare(with builder: URLRequestBuilder) throws(RequestError) -> PreparedRequest {
        try builder.prepare(request)
    }

    func willSend(_ urlRequest: inout URLRequest) {
        guard isRequestDelegate else { return }
        (request as? any RequestDelegate)?.requestWillSend(&urlRequest)
    }

    func didSend(_ urlRequest: URLRequest) {
        guard isRequestDelegate else { return }
        (request as? any RequestDelegate)?.requestDidSend(urlRequest)
    }

    func didFail(_ urlRequest: URLRequest?, error: RequestError) {
        guard isRequestDelegate else { return }
        (request as? any RequestDelegate)?.request(urlRequest, didFailWith: error)
    }

    func makeResponse(from transport: TransportResponse, decoding: ResponseDecoding) -> AnyResult {
        let head = transport.head
        let body = ResponseData(transport.body)
        let decoding = request.decoding ?? decoding
        guard request.accepts(head) else {
            return .failure(.validationFailed(head.httpURLResponse, body: rejected(body, decoding: decoding)))
        }
        let response: R.ResponseType
        do {
            response = try request.makeResponse(body: body, head: head, decoding: decoding)
        } catch let error as RequestError {
            return .failure(error)
        } catch {
            return .failure(.serializationFailed(type: String(reflecting: R.ResponseType.self), underlying: error))
        }
        (response as? any ResponseDelegate)?.responseDidReceive(head)
        return .success(MadeValue(value: response, head: head, freshFor: transport.freshFor))
    }

    /// A rejected body, with its decoded ``Request/ErrorBody`` when the request names one and
    /// the body decodes; a body that does not is still there as bytes.
    private func rejected(_ body: ResponseData, decoding: ResponseDecoding) -> ResponseData {
        var body = body
        body.decoding = decoding
        guard R.ErrorBody.self != Never.self, !body.data.isEmpty else { return body }
        body.errorBody = try? decoding.decode(R.ErrorBody.self, from: body)
        return body
    }
}
