import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Answers the two URLSession callbacks the queue needs while its data still flows through
/// completion handlers (the fast path on Linux): redirects and authentication challenges.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    typealias Completion = @Sendable (Data?, URLResponse?, (any Error)?) -> Void

    private let credentials: HTTPCredentials?
    /// The 401/407 responses of challenges that were cancelled, by task, until their task completes.
    private let challengedResponses = Locked<[Int: HTTPURLResponse]>([:])

    /// A delegate-driven task's body so far, kept until it completes.
    private struct Transfer {
        let maximumSize: Int
        let completion: Completion
        var body = Data()
        var tooLarge = false
    }
    private let transfers = Locked<[Int: Transfer]>([:])

    /// A streamed task's receiver, whether it has had its head, and its byte counts (Linux's
    /// URLSession counts received bytes of download tasks only).
    private struct Stream {
        let receiver: any TransportStreamReceiver
        let counts: StreamCounts
        var hasHead = false
    }
    private let streams = Locked<[Int: Stream]>([:])

    init(credentials: HTTPCredentials?) {
        self.credentials = credentials
    }

    /// Stops at every redirect: the queue follows redirects itself (see ``Redirects``).
    func urlSession(_ session: URLSession, task: URLSessionTask,
                    willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
                    completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    /// Answers Basic and Digest challenges once with the configured credentials; otherwise ends
    /// the task at once and keeps the challenge's response for the queue. Left to the default
    /// handling, a 401 with `WWW-Authenticate` hangs until the timeout on Linux.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let method = challenge.protectionSpace.authenticationMethod
        // TLS challenges (server trust, client certificates) keep the platform's handling.
        guard Self.httpAuthenticationMethods.contains(method) else {
            return completionHandler(.performDefaultHandling, nil)
        }
        if let credentials, challenge.previousFailureCount == 0,
           method == NSURLAuthenticationMethodHTTPBasic || method == NSURLAuthenticationMethodHTTPDigest {
            let credential = URLCredential(user: credentials.user, password: credentials.password, persistence: .forSession)
            return completionHandler(.useCredential, credential)
        }
        if let response = challenge.failureResponse as? HTTPURLResponse {
            challengedResponses.withLock { $0[task.taskIdentifier] = response }
        }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    // MARK: - Delegate-driven tasks (with a response size limit)

    func register(_ task: URLSessionTask, maximumResponseSize: Int, completion: @escaping Completion) {
        transfers.withLock { $0[task.taskIdentifier] = Transfer(maximumSize: maximumResponseSize, completion: completion) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        if let receiver = streams.withLock({ streams -> (any TransportStreamReceiver)? in
            guard response is HTTPURLResponse else { return nil }
            streams[dataTask.taskIdentifier]?.hasHead = true
            streams[dataTask.taskIdentifier]?.counts.expected.store(response.expectedContentLength, ordering: .relaxed)
            return streams[dataTask.taskIdentifier]?.receiver
        }) {
            receiver.transportDidReceive(response as! HTTPURLResponse)
            return completionHandler(.allow)
        }
        let announced = response.expectedContentLength
        let refuse = transfers.withLock { transfers -> Bool in
            guard let transfer = transfers[dataTask.taskIdentifier], announced > Int64(transfer.maximumSize) else { return false }
            transfers[dataTask.taskIdentifier]?.tooLarge = true
            return true
        }
        completionHandler(refuse ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if let stream = streams.withLock({ $0[dataTask.taskIdentifier] }) {
            stream.counts.received.add(Int64(data.count), ordering: .relaxed)
            // A data task cannot pause: the demand is not followed (see makeStreamingTask).
            _ = stream.receiver.transportDidReceive(data)
            return
        }
        let exceeded = transfers.withLock { transfers -> Bool in
            guard var transfer = transfers[dataTask.taskIdentifier], !transfer.tooLarge else { return false }
            if transfer.body.count + data.count > transfer.maximumSize {
                transfer.tooLarge = true
                transfer.body = Data()
            } else {
                transfer.body.append(data)
            }
            transfers[dataTask.taskIdentifier] = transfer
            return transfer.tooLarge
        }
        if exceeded { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let stream = streams.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) {
            return completeStream(stream, task: task, error: error)
        }
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if transfer.tooLarge {
            var info: [String: Any] = [NSLocalizedDescriptionKey: "The response is larger than \(transfer.maximumSize) bytes"]
            if let url = task.originalRequest?.url { info[NSURLErrorFailingURLErrorKey] = url }
            return transfer.completion(nil, task.response, URLError(.dataLengthExceedsMaximum, userInfo: info))
        }
        transfer.completion(transfer.body, task.response, error)
    }

    // MARK: - Streamed tasks

    func register(_ task: URLSessionTask, receiver: any TransportStreamReceiver, counts: StreamCounts) {
        streams.withLock { $0[task.taskIdentifier] = Stream(receiver: receiver, counts: counts) }
    }

    /// Ends a streamed task's delivery with ``RequestError/cancelled``, once; what URLSession
    /// still hands over for it is dropped.
    func cancelStream(of task: URLSessionTask) {
        guard let stream = streams.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        stream.receiver.transportDidComplete(.cancelled)
    }

    private func completeStream(_ stream: Stream, task: URLSessionTask, error: (any Error)?) {
        let url = task.originalRequest?.url
        if let error {
            // A cancelled authentication challenge: its 401 or 407 is the answer, without a body.
            if !stream.hasHead, let urlError = error as? URLError, urlError.code == .cancelled,
               let challenged = takeChallengedResponse(for: task.taskIdentifier) {
                stream.receiver.transportDidReceive(challenged)
                return stream.receiver.transportDidComplete(nil)
            }
            return stream.receiver.transportDidComplete(RequestError(URLSessionTransport.urlError(error, url: url,
                                                                                                  response: task.response)))
        }
        guard stream.hasHead else {
            var info: [String: Any] = [NSLocalizedDescriptionKey: "The response is not an HTTP response"]
            if let url { info[NSURLErrorFailingURLErrorKey] = url }
            return stream.receiver.transportDidComplete(.transportFailed(URLError(.badServerResponse, userInfo: info)))
        }
        stream.receiver.transportDidComplete(nil)
    }

    private static let httpAuthenticationMethods: Set<String> = [
        NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
        NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
    ]

    /// The response of a cancelled challenge for the task, taken once.
    func takeChallengedResponse(for taskIdentifier: Int) -> HTTPURLResponse? {
        challengedResponses.withLock { $0.removeValue(forKey: taskIdentifier) }
    }
}

/// The bytes a streamed URLSession task has received, and how many it expects (-1 when unknown).
final class StreamCounts: Sendable {
    let received = Atomic<Int64>(0)
    let expected = Atomic<Int64>(-1)
}
