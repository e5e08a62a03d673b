import Foundation

/// How a queue's HTTPS connections are secured beyond the default: pinned server keys, a client
/// certificate for mutual TLS, a self-signed test server, and the oldest TLS version accepted.
///
/// ```swift
/// var config = RequestQueueConfiguration.default
/// config.tls.hosts["payments.example.com"] = HostTLS(trust: .pinnedKeys([
///     try PublicKeyPin(base64SHA256: "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="),  // current key
///     try PublicKeyPin(base64SHA256: "YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="),  // next key
/// ]))
/// config.tls.clientCertificate = ClientCertificate(
///     certificate: URL(fileURLWithPath: "/etc/myapp/client.pem"),
///     privateKey: URL(fileURLWithPath: "/etc/myapp/client.key"))
/// config.tls.minimumVersion = .v1_3
/// ```
///
/// The default value changes nothing: every server is verified against the system's roots and
/// ``RequestQueueConfiguration/trustedCertificates``, no client certificate is sent, and TLS 1.2
/// is the oldest version accepted. Certificates are always verified; no setting turns that off.
///
/// The curl transport (``RequestTransport/curl``, Linux) honours every setting. The URLSession
/// transport honours none but the default, and fails every request at once with a ``TLSFailure``
/// (``TLSFailure/Reason/unsupportedByTransport(setting:)``) rather than send it less protected
/// than configured.
public struct TLSConfiguration: Sendable, Hashable {
    /// The oldest TLS version a connection may use; a server that offers only older ones is
    /// refused during the handshake (``TLSFailure/Reason/versionRefused(minimum:alert:)``).
    /// Default: ``TLSVersion/v1_2``, the oldest version current security guidance allows
    /// (OpenSSL 3 refuses older ones at its default security level anyway).
    public var minimumVersion: TLSVersion = .v1_2

    /// The client certificate offered to every server that asks for one, unless the server's
    /// entry in ``hosts`` has its own. Default: `nil`, none.
    public var clientCertificate: ClientCertificate?

    /// Settings of particular servers, by host name: `"api.example.com"`, or `"api.example.com:8443"`
    /// for one port only (an entry with the port wins over one without). Default: none.
    ///
    /// Names match exactly, ignoring case and a trailing dot: `"example.com"` does not cover
    /// `"www.example.com"`, and wildcards (`"*.example.com"`) are not supported: they are refused
    /// as invalid, so that no one believes a pin protects hosts it does not. An IP address is
    /// written as the URL writes it (`"127.0.0.1"`, `"[::1]"` or `"::1"`). A server without an
    /// entry gets the default evaluation and ``clientCertificate``.
    public var hosts: [String: HostTLS] = [:]

    /// Creates the default configuration: system roots, no client certificate, TLS 1.2 and later.
    public init() {}

    /// Checks everything that can be checked before a request is sent: host names, and that the
    /// certificate and key files can be read and hold PEM data of the right kind. A queue makes
    /// this check when it is created and, when it fails, fails every request with the same error;
    /// call it yourself to fail at start-up instead.
    /// - Throws: ``TLSFailure`` with ``TLSFailure/Reason/invalidHost(_:reason:)`` or
    ///   ``TLSFailure/Reason/unusableFile(_:reason:)``, naming what is wrong.
    public func validate() throws(TLSFailure) {
        _ = try resolved()
    }

    /// ``hosts`` by normalised name (``normalizedHost(_:)``), checked, with every file read once.
    func resolved() throws(TLSFailure) -> [String: HostTLS] {
        if let clientCertificate { try clientCertificate.validate(host: nil) }
        var table: [String: HostTLS] = [:]
        for (name, settings) in hosts.sorted(by: { $0.key < $1.key }) {
            let key = try Self.normalizedHost(name)
            guard table[key] == nil else {
                throw TLSFailure(host: name, reason: .invalidHost(name, reason: "another entry names the same host"))
            }
            try settings.validate(host: key)
            table[key] = settings
        }
        return table
    }

    /// The settings for a connection to `host` at `port`: its entry with the port, else its
    /// entry without, else none. `table` is ``resolved()``'s.
    static func settings(in table: [String: HostTLS], host: String, port: Int) -> HostTLS? {
        guard !table.isEmpty else { return nil }
        let name = bareHost(host.lowercased())
        return table["\(name):\(port)"] ?? table[name]
    }

    /// An entry's name as ``hosts`` are looked up: lowercased, without a trailing dot or IPv6
    /// brackets, with `:port` kept when given.
    static func normalizedHost(_ name: String) throws(TLSFailure) -> String {
        func invalid(_ reason: String) -> TLSFailure { TLSFailure(host: name, reason: .invalidHost(name, reason: reason)) }
        var text = name.trimmingCharacters(in: .whitespaces).lowercased()
        guard !text.isEmpty else { throw invalid("the name is empty") }
        if text.contains("*") {
            throw invalid("wildcards are not supported: name each host exactly (\"api.example.com\")")
        }
        if text.contains("://") || text.contains("/") || text.contains("@") || text.contains(where: \.isWhitespace) {
            throw invalid("a host name only, such as \"api.example.com\" or \"api.example.com:8443\", not a URL")
        }
        var port: String?
        if text.hasPrefix("[") {
            // "[::1]" or "[::1]:8443"
            guard let close = text.firstIndex(of: "]") else { throw invalid("an IPv6 address without its closing \"]\"") }
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 address") }
                port = String(rest.dropFirst())
            }
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            port = String(text[text.index(after: colon)...])
            text = String(text[..<colon])
        }
        if text.hasSuffix(".") { text.removeLast() }
        guard !text.isEmpty else { throw invalid("the name is empty") }
        guard let port else { return text }
        guard let number = Int(port), (1...65535).contains(number), port.allSatisfy(\.isNumber) else {
            throw invalid("the port \"\(port)\" is not a number from 1 to 65535")
        }
        return "\(text):\(number)"
    }

    /// A URL's host as entries are keyed: without IPv6 brackets or a trailing dot.
    private static func bareHost(_ host: String) -> String {
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }
}

/// The TLS settings of one server (``TLSConfiguration/hosts``).
public struct HostTLS: Sendable, Hashable {
    /// How the server's certificate is checked. Default: ``ServerTrust/default``.
    public var trust: ServerTrust
    /// The client certificate for this server; `nil` offers the queue's
    /// ``TLSConfiguration/clientCertificate``, if any. Default: `nil`.
    public var clientCertificate: ClientCertificate?

    /// Creates a server's settings.
    /// - Parameters:
    ///   - trust: How its certificate is checked. Default: ``ServerTrust/default``.
    ///   - clientCertificate: Its own client certificate. Default: `nil`, the queue's.
    public init(trust: ServerTrust = .default, clientCertificate: ClientCertificate? = nil) {
        self.trust = trust
        self.clientCertificate = clientCertificate
    }

    func validate(host: String) throws(TLSFailure) {
        try trust.validate(host: host)
        try clientCertificate?.validate(host: host)
    }
}

/// How a server's certificate is checked. Whatever the choice, the chain is verified and the
/// certificate must name the host: trust only ever narrows.
public struct ServerTrust: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case system
        case pinned([PublicKeyPin])
        case selfSigned(URL)
    }

    let kind: Kind

    /// The system's roots and ``RequestQueueConfiguration/trustedCertificates``: what every
    /// server gets unless ``TLSConfiguration/hosts`` says otherwise.
    public static let `default` = ServerTrust(kind: .system)

    /// The default evaluation, and then the server's own public key must be one of `pins`.
    ///
    /// Give two or more, the key in use and the next one, so that the server can change keys
    /// without locking out the app that has only one of them. The pin is checked against the
    /// server's own (leaf) certificate, not an intermediate's or a root's: pin the key the server
    /// presents, and renew certificates on the same key or announce the next key's pin first.
    /// A connection whose key matches none fails during the handshake, before anything of the
    /// request is sent, with ``TLSFailure/Reason/pinMismatch(expected:presented:)``.
    public static func pinnedKeys(_ pins: [PublicKeyPin]) -> ServerTrust {
        ServerTrust(kind: .pinned(pins))
    }

    /// For tests and development only: the server's certificate is `certificate`, a PEM file of
    /// a self-signed certificate, which is trusted instead of any root for this host alone.
    ///
    /// The certificate must still name the host and be within its dates, and nothing else is
    /// trusted for this host: no "trust everything" switch exists. Courier hands the file to the
    /// TLS library as the host's one root, so a server presenting any other certificate is
    /// refused during the handshake, before anything of the request is sent.
    public static func selfSignedForTesting(certificate: URL) -> ServerTrust {
        ServerTrust(kind: .selfSigned(certificate))
    }

    /// The pins the server's key must match; empty unless ``pinnedKeys(_:)``.
    public var pins: [PublicKeyPin] {
        if case .pinned(let pins) = kind { return pins }
        return []
    }

    public var description: String {
        switch kind {
        case .system: "default evaluation"
        case .pinned(let pins): "pinned keys " + pins.map(\.description).joined(separator: ", ")
        case .selfSigned(let file): "self-signed certificate \(file.path) (tests only)"
        }
    }

    func validate(host: String) throws(TLSFailure) {
        switch kind {
        case .system:
            return
        case .pinned(let pins):
            guard !pins.isEmpty else {
                throw TLSFailure(host: host, reason: .invalidHost(host, reason: "pinnedKeys needs at least one pin (two, for rotation)"))
            }
        case .selfSigned(let file):
            try PEMFile.check(file, holds: "CERTIFICATE", what: "self-signed certificate", host: host)
        }
    }
}

/// A server public key, as the base64 of the SHA-256 digest of its SubjectPublicKeyInfo: the form
/// of curl's `--pinnedpubkey sha256//…` and of HPKP.
///
/// Compute it from the server's certificate:
/// ```
/// openssl x509 -in server.pem -pubkey -noout | openssl pkey -pubin -outform der \
///     | openssl dgst -sha256 -binary | base64
/// ```
/// or from the live server, with `openssl s_client -connect host:443 </dev/null | openssl x509 -pubkey -noout`
/// in place of the first command.
public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// The digest in base64 (44 characters), as given.
    public let base64SHA256: String

    /// Creates a pin from its base64 digest, with or without curl's `sha256//` prefix.
    /// - Throws: ``TLSFailure`` (``TLSFailure/Reason/invalidPin(_:reason:)``) when the text is not
    ///   the base64 of 32 bytes.
    public init(base64SHA256 text: String) throws(TLSFailure) {
        var digest = text.trimmingCharacters(in: .whitespaces)
        if digest.lowercased().hasPrefix("sha256//") { digest.removeFirst("sha256//".count) }
        guard let bytes = Data(base64Encoded: digest) else {
            throw TLSFailure(host: nil, reason: .invalidPin(text, reason: "it is not base64"))
        }
        guard bytes.count == 32 else {
            throw TLSFailure(host: nil, reason: .invalidPin(text, reason: "it decodes to \(bytes.count) bytes, not a SHA-256 digest's 32"))
        }
        base64SHA256 = bytes.base64EncodedString()
    }

    /// Creates a pin from the 32 bytes of the digest.
    /// - Throws: ``TLSFailure`` (``TLSFailure/Reason/invalidPin(_:reason:)``) unless there are 32.
    public init(sha256 digest: Data) throws(TLSFailure) {
        guard digest.count == 32 else {
            throw TLSFailure(host: nil, reason: .invalidPin(digest.base64EncodedString(),
                                                            reason: "a SHA-256 digest has 32 bytes, not \(digest.count)"))
        }
        base64SHA256 = digest.base64EncodedString()
    }

    /// As curl writes it: `sha256//` and the base64 digest.
    public var description: String { "sha256//" + base64SHA256 }
}

/// A client certificate and its private key, for servers that ask for one (mutual TLS).
public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// A PEM file with the certificate, followed by the intermediates the server needs, if any.
    public var certificate: URL
    /// A PEM file with the private key; `nil` when it follows the certificate in ``certificate``'s
    /// file. Default: `nil`.
    public var privateKey: URL?
    /// The password of an encrypted private key; `nil` for a key in the clear. Default: `nil`.
    /// Never written in descriptions or errors.
    public var password: String?

    /// Creates a client certificate from PEM files.
    /// - Parameters:
    ///   - certificate: The certificate (and intermediates), PEM.
    ///   - privateKey: The private key, PEM. Default: `nil`, in `certificate`'s file.
    ///   - password: The key's password, when it is encrypted. Default: `nil`.
    public init(certificate: URL, privateKey: URL? = nil, password: String? = nil) {
        self.certificate = certificate
        self.privateKey = privateKey
        self.password = password
    }

    /// The files, never the password.
    public var description: String {
        "client certificate \(certificate.path)" + (privateKey.map { " with key \($0.path)" } ?? "")
            + (password == nil ? "" : " (key password set)")
    }

    /// The files and whether a password is set, so that `dump` and debuggers do not show it.
    public var customMirror: Mirror {
        Mirror(self, children: ["certificate": certificate, "privateKey": privateKey as Any,
                                "password": password == nil ? "nil" : "(set)"])
    }

    func validate(host: String?) throws(TLSFailure) {
        try PEMFile.check(certificate, holds: "CERTIFICATE", what: "client certificate", host: host)
        try PEMFile.check(privateKey ?? certificate, holds: "PRIVATE KEY", what: "client certificate's private key", host: host)
    }
}

/// Checks that a PEM file can be read and holds what it should.
enum PEMFile {
    /// `label` is the end of a PEM label: "CERTIFICATE", or "PRIVATE KEY" (which also matches
    /// "EC PRIVATE KEY", "RSA PRIVATE KEY" and "ENCRYPTED PRIVATE KEY").
    static func check(_ file: URL, holds label: String, what: String, host: String?) throws(TLSFailure) {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            let reason = FileManager.default.fileExists(atPath: file.path) ? "it cannot be read" : "it does not exist"
            throw TLSFailure(host: host, reason: .unusableFile(file, reason: "the \(what) file: \(reason)"))
        }
        guard String(decoding: data, as: UTF8.self).contains(label + "-----") else {
            throw TLSFailure(host: host, reason: .unusableFile(file, reason: "the \(what) file holds no PEM \"\(label)\""))
        }
    }
}

/// A version of the TLS protocol, oldest first.
public enum TLSVersion: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// TLS 1.0 (1999): accepted only where the TLS library still allows it.
    case v1_0 = 10
    /// TLS 1.1 (2006): the same.
    case v1_1 = 11
    /// TLS 1.2 (2008): the default minimum.
    case v1_2 = 12
    /// TLS 1.3 (2018).
    case v1_3 = 13

    public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool { lhs.rawValue < rhs.rawValue }

    /// "TLS 1.3".
    public var description: String {
        switch self {
        case .v1_0: "TLS 1.0"
        case .v1_1: "TLS 1.1"
        case .v1_2: "TLS 1.2"
        case .v1_3: "TLS 1.3"
        }
    }

    /// The version OpenSSL names ("TLSv1.3", "TLSv1" for 1.0); nil for others (SSLv3, DTLS).
    init?(openSSLName name: String) {
        switch name {
        case "TLSv1": self = .v1_0
        case "TLSv1.1": self = .v1_1
        case "TLSv1.2": self = .v1_2
        case "TLSv1.3": self = .v1_3
        default: return nil
        }
    }
}

/// A version of HTTP, as a response arrived in it.
public enum HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    /// HTTP/1.0.
    case http1_0
    /// HTTP/1.1.
    case http1_1
    /// HTTP/2.
    case http2
    /// HTTP/3.
    case http3

    /// "HTTP/1.1", "HTTP/2".
    public var description: String {
        switch self {
        case .http1_0: "HTTP/1.0"
        case .http1_1: "HTTP/1.1"
        case .http2: "HTTP/2"
        case .http3: "HTTP/3"
        }
    }
}
