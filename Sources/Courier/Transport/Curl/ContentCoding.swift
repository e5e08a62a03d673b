#if os(Linux)
import CourierCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the curl transport does with a response's content codings (RFC 9110 §8.4): libcurl
/// decodes those it was built with, and a body in any other coding is delivered as received,
/// with its `Content-Encoding`, instead of failing with libcurl's error 61. A stacked list with
/// one unknown coding (`gzip, x-courier`) is delivered as received too, never half-decoded.
///
/// How decoding is turned off for one response depends on the libcurl loaded:
/// - before 8.5.0, libcurl asks `CURLOPT_HTTP_CONTENT_DECODING` at every body write
///   (lib/transfer.c, lib/http_chunks.c, lib/sendf.c), so turning it off in the header callback,
///   once the head is complete and before the first body byte, passes that body through;
/// - from 8.5.0 on, libcurl reads the option when it parses the `Content-Encoding` line
///   (lib/content_encoding.c, `Curl_build_unencoding_stack`), before the header callback sees
///   that line, and the decoder it stacked for the unknown coding fails at the first body byte.
///   The transfer is stopped at the end of the head instead (nothing was delivered yet) and a
///   GET or HEAD without a body is sent once more with decoding off from the start; any other
///   request fails with `URLError.cannotDecodeContentData`, since sending it twice could repeat
///   its effect.
struct CurlContentCodings: Sendable, Equatable {
    /// The codings libcurl decodes, lower-cased, with its own aliases (`x-gzip`, `none`).
    let decodable: Set<String>
    /// Whether turning decoding off in the header callback reaches the body (libcurl < 8.5.0).
    let switchesMidTransfer: Bool

    /// libcurl 8.5.0, the first that decides on decoding when it parses the `Content-Encoding` line.
    static let decidesAtHeaderVersion: UInt32 = 0x08_05_00

    init(decodable: Set<String>, switchesMidTransfer: Bool) {
        self.decodable = decodable
        self.switchesMidTransfer = switchesMidTransfer
    }

    /// The codings a libcurl with these feature bits and this version number decodes.
    init(features: Int, versionNumber: UInt32) {
        var names: Set<String> = ["identity", "none"]
        if features & COURIER_CURL_VERSION_LIBZ != 0 { names.formUnion(["deflate", "gzip", "x-gzip"]) }
        if features & COURIER_CURL_VERSION_BROTLI != 0 { names.insert("br") }
        if features & COURIER_CURL_VERSION_ZSTD != 0 { names.insert("zstd") }
        self.init(decodable: names, switchesMidTransfer: versionNumber < Self.decidesAtHeaderVersion)
    }

    /// The loaded libcurl's (only after `CurlLibrary.availability` succeeded).
    static let loaded = CurlContentCodings(features: Int(courier_curl_features()), versionNumber: courier_curl_version_number())

    /// What becomes of a response body.
    enum Body: Equatable {
        /// No coding, or only `identity`: the bytes are the ones sent, `Content-Length` counts them.
        case asSent
        /// Every coding is one libcurl decodes: the bytes are decoded, and their number is unknown
        /// until the end.
        case decoded
        /// At least one coding libcurl cannot decode (the first such is named, as the server wrote
        /// it): the bytes are the ones sent, undecoded, and `Content-Length` counts them.
        case passedThrough(undecodable: String)
    }

    /// What becomes of a body sent with these `Content-Encoding` field values (every line's).
    func body(contentEncoding values: [String]) -> Body {
        var decodes = false
        for value in values {
            for item in value.split(separator: ",") {
                let name = item.trimmingCharacters(in: Self.whitespace)
                if name.isEmpty { continue }
                let lowered = name.lowercased()
                guard decodable.contains(lowered) else { return .passedThrough(undecodable: name) }
                if lowered != "identity", lowered != "none" { decodes = true }
            }
        }
        return decodes ? .decoded : .asSent
    }

    private static let whitespace = CharacterSet(charactersIn: " \t")
}

/// The content-coding step of a response head, on the loop thread.
enum ContentCoding {
    /// What a complete response head means for its body, and what to do about it now.
    enum Step {
        /// Go on; `countable` when the body's bytes are the ones `Content-Length` counts (progress
        /// and the size limit use it then).
        case proceed(countable: Bool)
        /// Stop the transfer (nothing of the response was delivered yet) and send the request
        /// again with decoding off from the start.
        case restartUndecoded
        /// Stop the transfer with this error.
        case fail(RequestError)
    }

    /// Decides for a complete head, turning libcurl's decoding off or on again for this response
    /// when it must and can. Called once per response head, never per chunk.
    static func step(for head: ParsedHead, request: URLRequest, easy: CurlEasy,
                     codings: @autoclosure () -> CurlContentCodings = .loaded) -> Step {
        let values = head.values(of: "Content-Encoding")
        // The common case costs this one look-up.
        if values.isEmpty { return .proceed(countable: true) }
        let codings = codings()
        switch codings.body(contentEncoding: values) {
        case .asSent:
            return .proceed(countable: true)
        case .decoded:
            if easy.decodesContent { return .proceed(countable: false) }
            // Turned off for an earlier response of the same transfer (an authentication retry):
            // on again, where libcurl still asks; otherwise this body comes as sent.
            guard codings.switchesMidTransfer else { return .proceed(countable: true) }
            easy.setContentDecoding(true)
            return .proceed(countable: false)
        case .passedThrough(let coding):
            let method = request.httpMethod?.uppercased() ?? "GET"
            // Already off (a restarted transfer), or a response without a body, which libcurl never
            // tries to decode.
            if !easy.decodesContent || method == "HEAD" || head.status == 204 || head.status == 304 {
                return .proceed(countable: true)
            }
            if codings.switchesMidTransfer {
                easy.setContentDecoding(false)
                return .proceed(countable: true)
            }
            if method == "GET" && request.httpBody == nil { return .restartUndecoded }
            return .fail(undecodable(coding, method: method, url: request.url))
        }
    }

    /// The error for a body in a coding libcurl cannot decode and cannot pass through.
    static func undecodable(_ coding: String, method: String, url: URL?) -> RequestError {
        var info: [String: Any] = [
            NSLocalizedDescriptionKey: "the server sent the \(method) response in the content coding \"\(coding)\", which "
                + "libcurl \(CurlLibrary.versionText) cannot decode, nor pass through undecoded once the response has begun "
                + "(libcurl 8.5 and later); only a GET is sent again with decoding off: ask the server for another coding "
                + "(Accept-Encoding), or fetch the resource with a GET",
        ]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        return .transportFailed(URLError(.cannotDecodeContentData, userInfo: info))
    }
}

extension CurlExchange {
    /// The content-coding step of a complete response head (`ContentCoding`): whether
    /// `Content-Length` counts the body's bytes, or why the transfer stops here. A stop for a
    /// restart is marked on the easy handle, which the loop reads when the transfer ends.
    func bodyCoding(of head: ParsedHead) -> Result<Bool, RequestError> {
        guard let easy else { return .success(false) }
        let request = transfer.request.urlRequest
        switch ContentCoding.step(for: head, request: request, easy: easy) {
        case .proceed(let countable):
            return .success(countable)
        case .restartUndecoded:
            easy.restartsUndecoded = true
            // Replaced by the restart's own result; this is what is left if none happens.
            let coding = head.values(of: "Content-Encoding").joined(separator: ", ")
            return .failure(ContentCoding.undecodable(coding, method: "GET", url: request.url))
        case .fail(let error):
            return .failure(error)
        }
    }
}

extension CurlLibrary {
    /// The loaded libcurl's version for messages ("8.14.1"), or "(not loaded)".
    static var versionText: String {
        guard case .success(let version) = availability else { return "(not loaded)" }
        return version
    }
}
#endif
