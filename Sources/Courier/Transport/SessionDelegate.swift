import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
        let announced = response.expectedContentLength
        let refuse = transfers.withLock { transfers -> Bool in
            guard let transfer = transfers[dataTask.taskIdentifier], announced > Int64(transfer.maximumSize) else { return false }
            transfers[dataTask.taskIdentifier]?.tooLarge = true
            return true
        }
        completionHandler(refuse ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
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
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if transfer.tooLarge {
            var info: [String: Any] = [NSLocalizedDescriptionKey: "The response is larger than \(transfer.maximumSize) bytes"]
            if let url = task.originalRequest?.url { info[NSURLErrorFailingURLErrorKey] = url }
            return transfer.completion(nil, task.response, URLError(.dataLengthExceedsMaximum, userInfo: info))
        }
        transfer.completion(transfer.body, task.response, error)
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
