import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// User name and password that answer HTTP Basic and Digest authentication challenges.
public struct HTTPCredentials: Sendable, Hashable {
    public var user: String
    public var password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }
}

/// Answers the two URLSession callbacks the queue needs while its data still flows through
/// completion handlers (the fast path on Linux): redirects and authentication challenges.
final class SessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    private let credentials: HTTPCredentials?
    /// The 401/407 responses of challenges that were cancelled, by task, until their task completes.
    private let challengedResponses = Locked<[Int: HTTPURLResponse]>([:])

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

    private static let httpAuthenticationMethods: Set<String> = [
        NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
        NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
    ]

    /// The response of a cancelled challenge for the task, taken once.
    func takeChallengedResponse(for taskIdentifier: Int) -> HTTPURLResponse? {
        challengedResponses.withLock { $0.removeValue(forKey: taskIdentifier) }
    }
}
