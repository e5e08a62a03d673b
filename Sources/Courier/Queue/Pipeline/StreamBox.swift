import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request whose body goes to a sink as it arrives (a stream, a download) rather than being
/// buffered: the request's own hooks run as for any request, and its result is the sink's
/// (`Outcome`, a ``StreamedResponse`` or a ``DownloadedFile``), whatever the request's `ResponseType`.
struct StreamBox<R: Request, Outcome: Sendable>: AnyRequestBox {
    let request: RequestBox<R>
    let sink: (any ResponseSink)?

    init(request: R, sink: any ResponseSink, outcome: Outcome.Type) {
        self.request = RequestBox(request: request)
        self.sink = sink
    }

    var responseType: ObjectIdentifier { ObjectIdentifier(Outcome.self) }
    var responseTypeName: String { String(reflecting: Outcome.self) }
    var isRequestDelegate: Bool { request.isRequestDelegate }
    var preparesSlowly: Bool { request.preparesSlowly }
    /// Streams and downloads bypass the cache and never share a transfer: their bodies are the
    /// consumer's as they arrive, and may be far larger than any cache.
    var cachePolicy: CachePolicy { .reload }
    var sharesIdenticalRequests: Bool { false }
    var redirectPolicy: RedirectPolicy? { request.redirectPolicy }
    var whileOffline: OfflinePolicy? { request.whileOffline }

    func prepare(with builder: URLRequestBuilder) throws(RequestError) -> PreparedRequest {
        try request.prepare(with: builder)
    }

    func willSend(_ urlRequest: inout URLRequest) {
        request.willSend(&urlRequest)
        sink?.willSend(&urlRequest)
    }

    func didSend(_ urlRequest: URLRequest) {
        request.didSend(urlRequest)
    }

    func didFail(_ urlRequest: URLRequest?, error: RequestError) {
        request.didFail(urlRequest, error: error)
    }

    /// A response the queue handled whole (its head was not the sink's at first sight): a
    /// rejected status fails as any request's does; an accepted one (after a redirect its delegate
    /// declined to follow, say) still goes to the sink, all at once.
    func makeResponse(from response: TransportResponse, decoding: ResponseDecoding) -> AnyResult {
        guard let sink, sink.accepts(response.head) else {
            var body = ResponseData(response.body)
            body.decoding = request.request.decoding ?? decoding    // for error.errorBody(as:)
            return .failure(.validationFailed(response.head.httpURLResponse, body: body))
        }
        if let error = sink.open(response.head, resumeTransfer: {}) { return .failure(error) }
        if !response.body.isEmpty, case .fail(let error) = sink.write(response.body) { return sink.close(error) }
        return sink.close(nil)
    }
}
