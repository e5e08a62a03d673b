#if os(Linux)
// Imports the C target for its result-code constants only; the calls into libcurl are all in Curl.swift.
import CourierCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``TLSConfiguration`` as the curl transport applies it: checked once when the transport is made,
/// then looked up per transfer by the URL's host and port.
///
/// Connection reuse cannot mix trust settings: every transfer to one host and port gets the same
/// options, and libcurl 7.88 reuses a connection or a TLS session only for a transfer whose TLS
/// options match the ones it was made with (`Curl_ssl_config_matches` compares the minimum
/// version, CA file and directory, client certificate and pinned key, among others).
struct CurlTLS: Sendable {
    /// What one transfer sets.
    struct Transfer: Equatable {
        /// `sha256//A;sha256//B` for `CURLOPT_PINNEDPUBLICKEY`, or nil.
        var pins: [PublicKeyPin] = []
        /// The one root of a self-signed test server (`CURLOPT_CAINFO`, with no CA directory).
        var selfSigned: URL?
        var clientCertificate: ClientCertificate?

        var pinnedKeyOption: String? {
            pins.isEmpty ? nil : pins.map(\.description).joined(separator: ";")
        }
    }

    let minimumVersion: TLSVersion
    private let clientCertificate: ClientCertificate?
    private let hosts: [String: HostTLS]

    /// The settings of `configuration`, or the failure that every request then ends with.
    init(_ configuration: TLSConfiguration) throws(TLSFailure) {
        hosts = try configuration.resolved()
        minimumVersion = configuration.minimumVersion
        clientCertificate = configuration.clientCertificate
    }

    /// The defaults: system roots, no client certificate, TLS 1.2.
    init() {
        minimumVersion = .v1_2
        clientCertificate = nil
        hosts = [:]
    }

    /// What a transfer to `url` sets. Without host entries the URL is not even looked at: the
    /// default settings cost a transfer nothing.
    func transfer(for url: URL) -> Transfer {
        guard !hosts.isEmpty else { return Transfer(clientCertificate: clientCertificate) }
        let host = url.host.map { TLSConfiguration.settings(in: hosts, host: $0, port: url.port ?? 443) } ?? nil
        var transfer = Transfer(clientCertificate: host?.clientCertificate ?? clientCertificate)
        switch host?.trust.kind {
        case .pinned(let pins)?: transfer.pins = pins
        case .selfSigned(let file)?: transfer.selfSigned = file
        case .system?, nil: break
        }
        return transfer
    }

    /// `CURLOPT_SSLVERSION`'s value for the minimum version.
    var sslVersionOption: Int {
        switch minimumVersion {
        case .v1_0: COURIER_CURL_SSLVERSION_TLSv1_0
        case .v1_1: COURIER_CURL_SSLVERSION_TLSv1_1
        case .v1_2: COURIER_CURL_SSLVERSION_TLSv1_2
        case .v1_3: COURIER_CURL_SSLVERSION_TLSv1_3
        }
    }

    /// The ``TLSFailure`` behind a failed HTTPS transfer to `url`, when a TLS setting explains
    /// it; nil otherwise (the transfer's error is then libcurl's, as before). `presentedKey` is
    /// the pin libcurl reported for the server's key ("sha256//…"), when it did.
    func failure(code: Int32, message: String, url: URL, presentedKey: String?) -> RequestError? {
        guard url.scheme?.lowercased() == "https" else { return nil }
        let transfer = transfer(for: url)
        let host = url.host ?? ""
        let text = message.lowercased()
        switch Int(code) {
        case COURIER_CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            let presented = presentedKey.flatMap { try? PublicKeyPin(base64SHA256: $0) }
            return TLSFailure(host: host, reason: .pinMismatch(expected: transfer.pins, presented: presented)).requestError(url: url)
        case COURIER_CURLE_SSL_CERTPROBLEM:
            // libcurl could not load the client certificate or key (gone since the queue was
            // made, or the password does not open the key): its message names the file.
            guard let certificate = transfer.clientCertificate else { return nil }
            let file = certificate.privateKey.map { text.contains($0.lastPathComponent.lowercased()) ? $0 : certificate.certificate }
                ?? certificate.certificate
            return TLSFailure(host: host, reason: .unusableFile(file, reason: "libcurl: \(message)")).requestError(url: url)
        case COURIER_CURLE_SSL_CONNECT_ERROR, COURIER_CURLE_RECV_ERROR, COURIER_CURLE_SEND_ERROR:
            guard let alert = Self.alert(in: text) else { return nil }
            if Self.versionAlerts.contains(where: alert.contains) {
                return TLSFailure(host: host, reason: .versionRefused(minimum: minimumVersion, alert: alert)).requestError(url: url)
            }
            guard Self.clientCertificateAlerts.contains(where: alert.contains) else { return nil }
            if let certificate = transfer.clientCertificate {
                return TLSFailure(host: host, reason: .clientCertificateRejected(certificate: certificate.certificate, alert: alert)).requestError(url: url)
            }
            guard alert.contains("certificate required") || alert.contains("handshake failure") else { return nil }
            return TLSFailure(host: host, reason: .clientCertificateRequired(alert: alert)).requestError(url: url)
        default:
            return nil
        }
    }

    /// OpenSSL's words for a server refusing the versions offered ("tlsv1 alert protocol version"
    /// from the server, "unsupported protocol" when OpenSSL itself refuses what the server picked).
    private static let versionAlerts = ["protocol version", "unsupported protocol", "no protocols available"]

    /// Alerts a server sends about a client certificate, missing or refused ("handshake failure":
    /// what OpenSSL servers send when one is required and none came).
    private static let clientCertificateAlerts = ["certificate required", "handshake failure", "bad certificate",
                                                  "unknown ca", "certificate unknown", "certificate expired",
                                                  "certificate revoked", "unsupported certificate", "access denied",
                                                  "decrypt error"]

    /// The alert or reason in OpenSSL's message ("error:0A00042E:SSL routines::tlsv1 alert protocol
    /// version" → "tlsv1 alert protocol version"), when it has one about the handshake.
    private static func alert(in message: String) -> String? {
        guard let range = message.range(of: "ssl routines::") else { return nil }
        var reason = message[range.upperBound...]
        if let end = reason.firstIndex(where: { $0 == "," || $0 == "\n" }) { reason = reason[..<end] }
        let alert = reason.trimmingCharacters(in: .whitespaces)
        return alert.isEmpty ? nil : alert
    }
}
#endif
