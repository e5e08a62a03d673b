import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLSession transport: one session, tasks with completion handlers.
///
/// Data flows through completion handlers, the fastest path of Linux's URLSession (tasks driven
/// by delegate callbacks ran at about half the requests per second, with far more new
/// connections). The session's delegate only answers redirects and authentication challenges,
/// which completion-handler tasks still ask about; that costs no throughput (BENCHMARKS.md's analysis).
final class URLSessionTransport: Transport {
    private let session: URLSession
    private let delegate: SessionDelegate
    /// Streams go through a session of their own whose delegate calls come one at a time, in
    /// order (the main session's may run concurrently).
    private let streamingSession: URLSession
    private let streamingDelegate: SessionDelegate

    /// The largest body accepted, or nil for no limit.
    private let maximumResponseSize: Int?
    /// A setting this transport cannot honour, which every request then fails with.
    private let unsupported: RequestError?

    /// Honours every ``TransportSettings`` value but `trustedCertificates` and `tls`: URLSession takes
    /// extra certificate authorities only process-wide on Linux, and has no server-trust challenge
    /// and no client identities there, so requests then fail saying so (a ``TLSFailure`` for `tls`,
    /// naming the first setting it cannot honour). With a `maximumResponseSize`, tasks receive
    /// their body through the session's delegate so that an oversized one is stopped early; on
    /// Linux that path is slower (see BENCHMARKS.md). Completion handlers run on the settings'
    /// `completionQueue`, which saves the queue a hop per request.
    init(settings: TransportSettings) {
        maximumResponseSize = settings.maximumResponseSize
        unsupported = settings.trustedCertificates.isEmpty ? Self.unsupported(settings.tls) : .transportFailed(URLError(.secureConnectionFailed, userInfo: [
            NSLocalizedDescriptionKey: "the URLSession transport cannot trust extra certificate authorities "
                + "(trustedCertificates); use the curl transport (RequestTransport.curl, Linux) for them",
        ]))
        // URLSession copies its configuration too; copying first keeps the caller's object untouched.
        let configuration = settings.sessionConfiguration.copy() as! URLSessionConfiguration
        configuration.httpMaximumConnectionsPerHost = settings.maximumConnectionsPerHost
        delegate = SessionDelegate(credentials: settings.credentials)
        let delegateQueue = OperationQueue()
        delegateQueue.name = "Courier.URLSessionTransport.delegate"
        delegateQueue.underlyingQueue = settings.completionQueue
        // Delegate callbacks carry a limited body in order, so they run one at a time.
        delegateQueue.maxConcurrentOperationCount = maximumResponseSize == nil ? OperationQueue.defaultMaxConcurrentOperationCount : 1
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue)
        streamingDelegate = SessionDelegate(credentials: settings.credentials)
        let streamingQueue = OperationQueue()
        streamingQueue.name = "Courier.URLSessionTransport.streams"
        streamingQueue.underlyingQueue = settings.completionQueue
        streamingQueue.maxConcurrentOperationCount = 1
        streamingSession = URLSession(configuration: configuration, delegate: streamingDelegate, delegateQueue: streamingQueue)
    }

    /// The error for the first ``TLSConfiguration`` setting this transport cannot honour: any but
    /// the default. (The default minimum, TLS 1.2, is what OpenSSL 3 under Linux's URLSession and
    /// Apple's URLSession accept anyway.)
    static func unsupported(_ tls: TLSConfiguration) -> RequestError? {
        var setting: String?
        var host: String?
        if tls.minimumVersion != .v1_2 {
            setting = "tls.minimumVersion (\(tls.minimumVersion))"
        } else if tls.clientCertificate != nil {
            setting = "tls.clientCertificate (mutual TLS)"
        } else if let (name, entry) = tls.hosts.sorted(by: { $0.key < $1.key }).first {
            host = name
            setting = entry.clientCertificate != nil && entry.trust == .default
                ? "tls.hosts[\"\(name)\"].clientCertificate (mutual TLS)"
                : "tls.hosts[\"\(name)\"] (\(entry.trust))"
        }
        return setting.map { TLSFailure(host: host, reason: .unsupportedByTransport(setting: $0)).requestError(url: nil) }
    }

    /// Delivers the body as the session's delegate receives it. URLSession cannot pause a data
    /// task (its `suspend` restarts it on Linux, and on Apple platforms data tasks start over
    /// when resumed), so this transport ignores ``TransportDemand/pause``: a receiver that cannot
    /// keep up buffers what arrives (``StreamOptions/maximumBufferSize`` bounds it).
    func makeStreamingTask(for transportRequest: TransportRequest, receiver: any TransportStreamReceiver) -> any TransportTask {
        if let unsupported { return FailedTask(error: unsupported) { _ in receiver.transportDidComplete(unsupported) } }
        let request = transportRequest.urlRequest
        let task: URLSessionTask
        if let bodyFile = transportRequest.bodyFile, request.httpBody == nil {
            task = streamingSession.uploadTask(with: request, fromFile: bodyFile)
        } else {
            task = streamingSession.dataTask(with: request)
        }
        let counts = StreamCounts()
        streamingDelegate.register(task, receiver: receiver, counts: counts)
        return StreamingSessionTask(task: task, counts: counts, delegate: streamingDelegate)
    }

    func makeTask(
        for transportRequest: TransportRequest,
        completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void
    ) -> any TransportTask {
        if let unsupported { return FailedTask(error: unsupported, completion: completion) }
        let request = transportRequest.urlRequest
        let bodyFile = transportRequest.bodyFile
        let url = request.url
        let delegate = self.delegate
        let maximumResponseSize = self.maximumResponseSize
        let taskIdentifier = Locked<Int?>(nil)
        let handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
            // A cancelled authentication challenge ends the task with URLError.cancelled; its
            // response (status and headers, the body is lost) is the real answer.
            if let error = error as? URLError, error.code == .cancelled,
               let id = taskIdentifier.withLock({ $0 }), let challenged = delegate.takeChallengedResponse(for: id) {
                return completion(.success(TransportResponse(response: challenged, body: data ?? Data())))
            }
            completion(Self.result(data: data, response: response, error: error, url: url)
                .mapError { RequestError($0, maximumResponseSize: maximumResponseSize) })
        }
        let task: URLSessionTask
        let streamsFromFile = bodyFile != nil && request.httpBody == nil
        if let maximumResponseSize {
            // Delegate-driven: slower on Linux, but the only way to see the body as it arrives.
            task = streamsFromFile ? session.uploadTask(with: request, fromFile: bodyFile!) : session.dataTask(with: request)
            delegate.register(task, maximumResponseSize: maximumResponseSize, completion: handler)
        } else if streamsFromFile {
            // Streams from disk with a Content-Length, unlike httpBodyStream (chunked, no length).
            task = session.uploadTask(with: request, fromFile: bodyFile!, completionHandler: handler)
        } else {
            task = session.dataTask(with: request, completionHandler: handler)
        }
        taskIdentifier.withLock { $0 = task.taskIdentifier }
        return SessionTask(task: task)
    }

    func invalidate() {
        session.invalidateAndCancel()
        streamingSession.invalidateAndCancel()
    }

    /// The `URLError` that says what a task's error means; `response` is the head, when the task
    /// had one (delegate-driven tasks do), to name what it could not decode.
    static func urlError(_ error: any Error, url: URL?, response: URLResponse? = nil) -> URLError {
        let nsError = error as NSError
        if let undecodable = undecodableContent(nsError, url: url, response: response) { return undecodable }
        if let code = libcurlFailure(nsError) { return URLError(code, userInfo: nsError.userInfo) }
        if let urlError = error as? URLError { return urlError }
        if nsError.domain == NSURLErrorDomain, let code = urlErrorCode(nsError.code) {
            return URLError(code, userInfo: nsError.userInfo)
        }
        var info: [String: Any] = [NSUnderlyingErrorKey: nsError]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        return URLError(.unknown, userInfo: info)
    }

    private static func result(
        data: Data?, response: URLResponse?, error: (any Error)?, url: URL?
    ) -> Result<TransportResponse, URLError> {
        if let error { return .failure(urlError(error, url: url, response: response)) }
        guard let http = response as? HTTPURLResponse else {
            var info: [String: Any] = [NSLocalizedDescriptionKey: "The response is not an HTTP response"]
            if let url { info[NSURLErrorFailingURLErrorKey] = url }
            return .failure(URLError(.badServerResponse, userInfo: info))
        }
        return .success(TransportResponse(response: http, body: data ?? Data()))
    }
}

/// The real error behind an "unknown" URLSession error, read from libcurl's message.
///
/// Linux's URLSession reports some failures as `NSURLErrorUnknown` (-1) with libcurl's message
/// instead of their own code: a connection reset or a body cut short (the server died), and
/// sometimes a refused connection (seen with a server killed by SIGKILL mid-response); and a
/// response libcurl refused as malformed (an HTTP/0.9 reply to a garbage status line, reported as
/// an unsupported URL; too many header bytes, as unknown) is really a bad server response.
func libcurlFailure(_ error: NSError) -> URLError.Code? {
    guard error.domain == NSURLErrorDomain else { return nil }
    let message = (error.userInfo[NSLocalizedDescriptionKey] as? String ?? "").lowercased()
    if error.code == NSURLErrorUnsupportedURL, message.contains("http/0.9") { return .badServerResponse }
    guard error.code == NSURLErrorUnknown else { return nil }
    let meanings: [(phrases: [String], code: URLError.Code)] = [
        (["recv failure", "send failure", "connection reset", "transfer closed with", "empty reply from server",
          "connection died"], .networkConnectionLost),
        (["couldn't connect to server", "failed to connect to"], .cannotConnectToHost),
        (["could not resolve host", "couldn't resolve host"], .cannotFindHost),
        (["operation timed out", "timeout was reached"], .timedOut),
        (["too large response headers", "header too large"], .badServerResponse),
    ]
    return meanings.first { meaning in meaning.phrases.contains { message.contains($0) } }?.code
}

/// The error for a body in a content coding Linux's URLSession cannot decode.
///
/// Its libcurl handle decodes deflate, gzip, br and zstd, and fails any other coding (libcurl's
/// error 61, reported as `NSURLErrorUnknown` with libcurl's "Unrecognized content encoding type"
/// and neither the response nor the coding's name). Courier cannot configure that handle, so it
/// says what happened and what to do: the curl transport delivers such a body as sent. The
/// coding is named when the task had the head (`response`: delegate-driven tasks, which a
/// `maximumResponseSize` or a stream makes; a completion-handler task gets none).
func undecodableContent(_ error: NSError, url: URL?, response: URLResponse? = nil) -> URLError? {
    guard error.domain == NSURLErrorDomain, error.code == NSURLErrorUnknown else { return nil }
    let message = error.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
    guard message.lowercased().contains("unrecognized content encoding") else { return nil }
    let coding = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding")
    var info: [String: Any] = [
        NSLocalizedDescriptionKey: "the server sent the body in "
            + (coding.map { "the content coding \"\($0)\"" } ?? "a content coding")
            + ", which URLSession on Linux cannot decode "
            + "and does not deliver undecoded (libcurl: \(message)); send the request through the curl transport "
            + "(RequestTransport.curl), which delivers such a body as sent, with its Content-Encoding",
        NSUnderlyingErrorKey: error,
    ]
    if let url = url ?? error.userInfo[NSURLErrorFailingURLErrorKey] as? URL { info[NSURLErrorFailingURLErrorKey] = url }
    return URLError(.cannotDecodeContentData, userInfo: info)
}

/// The URLError code for a raw NSURLErrorDomain code (whose initialiser is failable only on Linux).
private func urlErrorCode(_ rawValue: Int) -> URLError.Code? {
    #if canImport(FoundationNetworking)
    return URLError.Code(rawValue: rawValue)
    #else
    return URLError.Code(rawValue: rawValue)
    #endif
}

private struct SessionTask: TransportTask {
    let task: URLSessionTask
    func resume() { task.resume() }
    func cancel() { task.cancel() }
    var progress: TransferProgress {
        TransferProgress(bytesSent: task.countOfBytesSent, totalBytesToSend: task.countOfBytesExpectedToSend,
                         bytesReceived: task.countOfBytesReceived,
                         totalBytesToReceive: task.countOfBytesExpectedToReceive)
    }
}

/// A streamed task, whose received bytes the session's delegate counts.
private struct StreamingSessionTask: TransportTask {
    let task: URLSessionTask
    let counts: StreamCounts
    let delegate: SessionDelegate
    func resume() { task.resume() }

    /// Completes the stream with ``RequestError/cancelled`` at once: URLSession reads on after a
    /// cancel and hands its delegate everything it read before it says the task ended, which
    /// took up to minutes under ThreadSanitizer for an endless body.
    func cancel() {
        task.cancel()
        delegate.cancelStream(of: task)
    }
    var progress: TransferProgress {
        TransferProgress(bytesSent: task.countOfBytesSent, totalBytesToSend: task.countOfBytesExpectedToSend,
                         bytesReceived: counts.received.load(ordering: .relaxed),
                         totalBytesToReceive: counts.expected.load(ordering: .relaxed))
    }
}

/// A task that fails as soon as it is resumed, for a request the transport cannot send.
private struct FailedTask: TransportTask {
    let error: RequestError
    let completion: @Sendable (Result<TransportResponse, RequestError>) -> Void
    func resume() { completion(.failure(error)) }
    func cancel() {}
    var progress: TransferProgress { TransferProgress() }
}
