import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Adds credentials to requests and renews them when the server refuses them.
///
/// ```swift
/// final class TokenAuthenticator: Authenticator, @unchecked Sendable {
///     private let lock = NSLock()
///     private var token = ""                   // guarded by `lock`
///     func authenticate(_ request: inout URLRequest) {
///         let token = lock.withLock { self.token }
///         request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
///     }
///     func refresh() async throws {
///         let fresh = try await fetchNewToken()
///         lock.withLock { token = fresh }
///     }
/// }
/// config.authenticator = TokenAuthenticator()
/// ```
/// When responses come back refused (by default: status 401), the queue runs **one** refresh
/// for all the requests that failed together, never one per request, then sends each of them
/// once more with the new credentials. Requests refused again fail with their 401; if the
/// refresh throws, all of them fail with ``RequestError/authenticationFailed(underlying:)``.
public protocol Authenticator: Sendable {
    /// Adds credentials to a request about to be sent. Runs on the queue's work queue after the
    /// delegates' `willSend`, for every attempt.
    func authenticate(_ request: inout URLRequest)

    /// Whether a response means the credentials were refused.
    ///
    /// Default: asks the Courier 1 form, taking an `HTTPURLResponse`, when the authenticator
    /// implements it; otherwise status 401. Implement this one rather than that, which needs an
    /// `HTTPURLResponse` made for it.
    func isAuthenticationFailure(_ head: ResponseHead) -> Bool

    /// The Courier 1 form of the check, taking an `HTTPURLResponse`: asked by the default of the
    /// form taking a ``ResponseHead``. Default: status 401.
    func isAuthenticationFailure(_ response: HTTPURLResponse) -> Bool

    /// Gets new credentials. Called once at a time; a thrown error fails the requests waiting for it.
    func refresh() async throws
}

extension Authenticator {
    public func isAuthenticationFailure(_ head: ResponseHead) -> Bool {
        CourierOneHooks.call(.isAuthenticationFailure, of: type(of: self), legacy: { isAuthenticationFailure(head.httpURLResponse) },
                             byDefault: { head.status == 401 })
    }

    public func isAuthenticationFailure(_ response: HTTPURLResponse) -> Bool {
        CourierOneHooks.defaultRan(for: type(of: self))
        return response.statusCode == 401
    }
}
