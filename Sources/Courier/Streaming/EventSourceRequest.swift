import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request as an event-stream connection sends it: the user's request, with the headers the
/// WHATWG `EventSource` sends (`Accept: text/event-stream`, `Cache-Control: no-store`, and the
/// `Last-Event-ID` to resume from). Its own delegate hooks run as they would.
struct EventSourceRequest<Inner: Request>: Request, RequestDelegate {
    typealias ParametersType = Inner.ParametersType
    typealias ResponseType = StreamedResponse

    let inner: Inner
    let lastEventID: String

    var parameters: Inner.ParametersType { inner.parameters }
    var queryParameters: (any QueryString)? { inner.queryParameters }
    var path: String { inner.path }
    var method: HTTPMethod { inner.method }
    var timeout: TimeInterval? { inner.timeout }

    var headerFields: HTTPFields {
        var fields = inner.headerFields
        fields["Accept"] = "text/event-stream"
        fields["Cache-Control"] = "no-store"
        if !lastEventID.isEmpty { fields["Last-Event-ID"] = lastEventID }
        return fields
    }

    func requestWillSend(_ urlRequest: inout URLRequest) {
        (inner as? any RequestDelegate)?.requestWillSend(&urlRequest)
    }

    func requestDidSend(_ urlRequest: URLRequest) {
        (inner as? any RequestDelegate)?.requestDidSend(urlRequest)
    }

    func request(_ urlRequest: URLRequest?, didFailWith error: RequestError) {
        (inner as? any RequestDelegate)?.request(urlRequest, didFailWith: error)
    }
}
