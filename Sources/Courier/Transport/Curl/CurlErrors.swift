#if os(Linux)
// Imports the C target for its result-code constants only; the calls into libcurl are all in Curl.swift.
import CourierCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `URLError` code for a libcurl result, the one a URLSession user would expect, so that
/// retry policies and error handling work the same through either transport.
enum CurlErrors {
    /// The error for a failed transfer: its `URLError` code, with libcurl's own message (and
    /// its detailed one, when it wrote one) in the description.
    static func error(code: Int32, message: String?, url: URL?) -> RequestError {
        let urlErrorCode = urlErrorCode(for: code, message: message ?? "", url: url)
        if urlErrorCode == .timedOut { return .timedOut }
        let summary = CurlLibrary.describe(code)
        var description = "libcurl error \(code): \(summary)"
        if let message, !message.isEmpty, message != summary { description += " (\(message))" }
        var info: [String: Any] = [NSLocalizedDescriptionKey: description]
        if let url {
            info[NSURLErrorFailingURLErrorKey] = url
        }
        return .transportFailed(URLError(urlErrorCode, userInfo: info))
    }

    static func urlErrorCode(for code: Int32, message: String, url: URL?) -> URLError.Code {
        switch Int(code) {
        case COURIER_CURLE_COULDNT_CONNECT, COURIER_CURLE_PROXY, COURIER_CURLE_COULDNT_RESOLVE_PROXY:
            return .cannotConnectToHost
        case COURIER_CURLE_COULDNT_RESOLVE_HOST:
            return .cannotFindHost
        case COURIER_CURLE_OPERATION_TIMEDOUT:
            return .timedOut
        case COURIER_CURLE_SEND_ERROR, COURIER_CURLE_RECV_ERROR, COURIER_CURLE_PARTIAL_FILE, COURIER_CURLE_GOT_NOTHING,
             COURIER_CURLE_HTTP2, COURIER_CURLE_HTTP2_STREAM:
            return .networkConnectionLost
        case COURIER_CURLE_WEIRD_SERVER_REPLY, COURIER_CURLE_BAD_CONTENT_ENCODING:
            return .badServerResponse
        case COURIER_CURLE_UNSUPPORTED_PROTOCOL:
            // For an http(s) URL this is a reply libcurl refuses, such as HTTP/0.9.
            let scheme = url?.scheme?.lowercased()
            return scheme == "http" || scheme == "https" ? .badServerResponse : .unsupportedURL
        case COURIER_CURLE_URL_MALFORMAT:
            return .badURL
        case COURIER_CURLE_PEER_FAILED_VERIFICATION, COURIER_CURLE_SSL_ISSUER_ERROR, COURIER_CURLE_SSL_INVALIDCERTSTATUS,
             COURIER_CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return certificateCode(message)
        case COURIER_CURLE_SSL_CONNECT_ERROR, COURIER_CURLE_SSL_CIPHER, COURIER_CURLE_SSL_CACERT_BADFILE:
            return .secureConnectionFailed
        case COURIER_CURLE_SSL_CERTPROBLEM:
            return .clientCertificateRejected
        case COURIER_CURLE_READ_ERROR:
            return .cannotOpenFile
        case COURIER_CURLE_SEND_FAIL_REWIND:
            return .requestBodyStreamExhausted
        case COURIER_CURLE_ABORTED_BY_CALLBACK:
            return .cancelled
        case COURIER_CURLE_OUT_OF_MEMORY:
            return .cannotLoadFromNetwork
        default:
            return .unknown
        }
    }

    /// Which certificate problem OpenSSL's message names.
    private static func certificateCode(_ message: String) -> URLError.Code {
        let text = message.lowercased()
        if text.contains("expired") { return .serverCertificateHasBadDate }
        if text.contains("not yet valid") { return .serverCertificateNotYetValid }
        if text.contains("unable to get local issuer") || text.contains("self-signed") || text.contains("self signed")
            || text.contains("unknown ca") {
            return .serverCertificateHasUnknownRoot
        }
        return .serverCertificateUntrusted
    }
}
#endif
