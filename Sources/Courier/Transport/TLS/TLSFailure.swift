import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a TLS setting of ``TLSConfiguration`` failed a request or could not be used: which host,
/// what did not match, and what to do.
///
/// A request fails with it as ``RequestError/transportFailed(_:)``, whose `URLError` has the code a
/// retry policy or a URLSession user expects (`.serverCertificateUntrusted` for a pin,
/// `.clientCertificateRequired`, `.clientCertificateRejected`, else `.secureConnectionFailed`) and
/// this value, which ``RequestError/tlsFailure`` reads back:
///
/// ```swift
/// catch let error as RequestError {
///     if case .pinMismatch(let expected, let presented)? = error.tlsFailure?.reason {
///         log("pinned \(expected), the server presented \(presented?.description ?? "an unknown key")")
///     }
/// }
/// ```
/// Invalid values (``PublicKeyPin/init(base64SHA256:)``, ``TLSConfiguration/validate()``) throw it too.
public struct TLSFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Hashable {
        /// The server's public key is none of the pinned ones. `presented` is its pin when the
        /// connection reported it (a new connection through libcurl 7.88's OpenSSL backend does),
        /// otherwise `nil`.
        case pinMismatch(expected: [PublicKeyPin], presented: PublicKeyPin?)
        /// The server ended the handshake asking for a client certificate, and none is configured
        /// for it. `alert` is the TLS library's message: "certificate required", or "handshake
        /// failure", which servers that require one also send (as do servers that share no
        /// cipher with the client: the message says which it may be).
        case clientCertificateRequired(alert: String)
        /// The server refused the configured client certificate, the file `certificate` (`alert`:
        /// "bad certificate", "unknown ca", "certificate expired"…).
        case clientCertificateRejected(certificate: URL, alert: String)
        /// The server offers only TLS versions older than ``TLSConfiguration/minimumVersion``.
        case versionRefused(minimum: TLSVersion, alert: String)
        /// A certificate or key file cannot be used: missing, unreadable, not PEM of the right
        /// kind, or (for an encrypted key) the password does not open it.
        case unusableFile(URL, reason: String)
        /// A pin is not the base64 of a SHA-256 digest.
        case invalidPin(String, reason: String)
        /// A ``TLSConfiguration/hosts`` entry, or its settings, cannot be used.
        case invalidHost(String, reason: String)
        /// The transport cannot honour this setting, so it sends nothing rather than less
        /// protected (the URLSession transport; see ``TLSConfiguration``).
        case unsupportedByTransport(setting: String)
    }

    /// The host the failure concerns; `nil` when it concerns no single host (an invalid pin, the
    /// queue's client certificate).
    public let host: String?
    /// What went wrong.
    public let reason: Reason

    /// Creates a failure.
    /// - Parameters:
    ///   - host: The host concerned, if one is.
    ///   - reason: What went wrong.
    public init(host: String?, reason: Reason) {
        self.host = host
        self.reason = reason
    }

    /// A sentence that names the host, what did not match and what to do next.
    public var description: String {
        let server = host.map { "the server \($0)" } ?? "the server"
        switch reason {
        case .pinMismatch(let expected, let presented):
            let list = expected.map(\.description).joined(separator: ", ")
            let shown = presented.map { "presented the public key \($0)" } ?? "presented a public key (its pin was not reported)"
            return "\(server) \(shown), which matches none of the pinned keys (\(list)); nothing was sent. "
                + "If the server changed its key legitimately, add the new key's pin (keep two pins, for rotation); "
                + "otherwise someone may be intercepting the connection"
        case .clientCertificateRequired(let alert):
            return "\(server) ended the handshake (\(alert)) and no client certificate is configured for it: "
                + "it probably requires one (mutual TLS). Set tls.clientCertificate, or tls.hosts[host].clientCertificate; "
                + "if it needs none, the client and server share no cipher or version"
        case .clientCertificateRejected(let certificate, let alert):
            return "\(server) refused the client certificate \(certificate.path) (\(alert)). Check that the certificate is within its dates "
                + "and issued by a CA the server trusts for clients, and that the key belongs to it"
        case .versionRefused(let minimum, let alert):
            return "\(server) offers no TLS version from \(minimum) on (\(alert)). Upgrade the server; lower "
                + "tls.minimumVersion only for a server you control and cannot upgrade yet"
        case .unusableFile(let file, let reason):
            return "\(file.path) cannot be used\(host.map { " for \($0)" } ?? ""): \(reason). Fix the path or the file; "
                + "certificates and keys are read as PEM"
        case .invalidPin(let text, let reason):
            return "\"\(text.truncatedForMessages)\" is no public key pin: \(reason). A pin is the base64 SHA-256 of "
                + "the key's SubjectPublicKeyInfo (44 characters), as `openssl x509 -pubkey -noout | openssl pkey -pubin "
                + "-outform der | openssl dgst -sha256 -binary | base64` prints it"
        case .invalidHost(let name, let reason):
            return "the TLS settings for \"\(name.truncatedForMessages)\" cannot be used: \(reason)"
        case .unsupportedByTransport(let setting):
            #if os(Linux)
            let remedy = "use the curl transport (config.transport = .curl, RequestTransport.curl), which honours it"
            #else
            let remedy = "Courier's URLSession transport does not implement it on this platform yet"
            #endif
            return "the URLSession transport cannot honour \(setting) (Linux's URLSession has no server-trust challenge "
                + "and no client identities), so the request was not sent; \(remedy)"
        }
    }

    /// The `URLError` code the failure is reported with.
    var urlErrorCode: URLError.Code {
        switch reason {
        case .pinMismatch: .serverCertificateUntrusted
        case .clientCertificateRequired: .clientCertificateRequired
        case .clientCertificateRejected: .clientCertificateRejected
        default: .secureConnectionFailed
        }
    }

    /// Where the failure rides in the `URLError`'s user info.
    static let userInfoKey = "CourierTLSFailure"

    /// The request error a request fails with.
    func requestError(url: URL?) -> RequestError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description, Self.userInfoKey: self]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        return .transportFailed(URLError(urlErrorCode, userInfo: info))
    }
}

extension RequestError {
    /// The TLS failure behind this error, when a ``TLSConfiguration`` setting failed the request:
    /// a pin that did not match, a client certificate refused, a server too old, a file that
    /// cannot be used. `nil` for every other error, other certificate problems included (an
    /// expired or unknown certificate is `URLError`'s `.serverCertificateHasBadDate`,
    /// `.serverCertificateHasUnknownRoot`…).
    public var tlsFailure: TLSFailure? {
        guard case .transportFailed(let error) = self else { return nil }
        return error.userInfo[TLSFailure.userInfoKey] as? TLSFailure
    }
}
