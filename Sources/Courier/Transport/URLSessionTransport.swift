import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The network transport: one URLSession without a delegate, tasks with completion handlers.
///
/// Completion-handler tasks on a delegate-free session are the fastest path of Linux's
/// URLSession (about twice the requests per second of a delegate-based session, with far
/// fewer new connections), which is why the queue uses them.
final class URLSessionTransport: Transport {
    private let session: URLSession

    init(configuration: URLSessionConfiguration, minimumConnectionsPerHost: Int) {
        // URLSession copies its configuration too; copying first keeps the caller's object untouched.
        let configuration = configuration.copy() as! URLSessionConfiguration
        if configuration.httpMaximumConnectionsPerHost < minimumConnectionsPerHost {
            configuration.httpMaximumConnectionsPerHost = minimumConnectionsPerHost
        }
        session = URLSession(configuration: configuration)
    }

    func makeTask(
        for request: URLRequest,
        bodyFile: URL?,
        completion: @escaping @Sendable (Result<TransportResponse, URLError>) -> Void
    ) -> any TransportTask {
        let url = request.url
        let handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
            completion(Self.result(data: data, response: response, error: error, url: url))
        }
        if let bodyFile, request.httpBody == nil {
            // Streams from disk with a Content-Length, unlike httpBodyStream (chunked, no length).
            return SessionTask(task: session.uploadTask(with: request, fromFile: bodyFile, completionHandler: handler))
        }
        return SessionTask(task: session.dataTask(with: request, completionHandler: handler))
    }

    func invalidate() {
        session.invalidateAndCancel()
    }

    private static func result(
        data: Data?, response: URLResponse?, error: (any Error)?, url: URL?
    ) -> Result<TransportResponse, URLError> {
        if let error {
            if let urlError = error as? URLError { return .failure(urlError) }
            var info: [String: Any] = [NSUnderlyingErrorKey: error as NSError]
            if let url { info[NSURLErrorFailingURLErrorKey] = url }
            return .failure(URLError(.unknown, userInfo: info))
        }
        guard let http = response as? HTTPURLResponse else {
            var info: [String: Any] = [NSLocalizedDescriptionKey: "The response is not an HTTP response"]
            if let url { info[NSURLErrorFailingURLErrorKey] = url }
            return .failure(URLError(.badServerResponse, userInfo: info))
        }
        return .success(TransportResponse(response: http, body: data ?? Data()))
    }
}

private struct SessionTask: TransportTask {
    let task: URLSessionTask
    func resume() { task.resume() }
    func cancel() { task.cancel() }
}
