import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One sending of a request: its first try, a retry, or a redirect hop of either.
struct Attempt: Sendable {
    let id: RequestID
    let box: any AnyRequestBox
    /// The request as the builder made it, before any delegate: every retry starts from it again.
    let original: PreparedRequest
    /// What goes on the wire this time, after delegates and redirects.
    var current: PreparedRequest
    /// 1 for the first try.
    var number = 1
    /// Redirects followed in this attempt.
    var redirects = 0
    /// The authenticator's credentials generation when this attempt was sent.
    var credentialGeneration = 0
    /// Whether this request was already retried after refreshing credentials (it is, once at most).
    var retriedAfterRefresh = false

    init(id: RequestID, box: any AnyRequestBox, original: PreparedRequest) {
        self.id = id
        self.box = box
        self.original = original
        self.current = original
    }
}
