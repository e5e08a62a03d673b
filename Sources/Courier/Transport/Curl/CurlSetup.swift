#if os(Linux)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a ``TransportRequest`` into a configured easy handle, on the loop thread.
enum CurlSetup {
    /// `decodingContent` false sends a request again whose response came in a content coding
    /// libcurl cannot decode (`ContentCoding`).
    static func configure(_ easy: CurlEasy, for transfer: CurlTransfer, options: CurlOptions,
                          decodingContent: Bool = true) -> Result<CurlExchange, RequestError> {
        if let unusable = options.unusable { return .failure(unusable) }
        let request = transfer.request.urlRequest
        guard let url = request.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return .failure(.transportFailed(URLError(.unsupportedURL, userInfo: [
                NSLocalizedDescriptionKey: "the curl transport sends only http and https URLs",
                NSURLErrorFailingURLErrorKey: request.url as Any,
            ])))
        }
        let method = request.httpMethod?.uppercased() ?? "GET"
        var reader = CurlBodyReader()
        var bodySize: Int64?
        if let data = request.httpBody {
            reader = CurlBodyReader(data: data)
            bodySize = Int64(data.count)
        } else if let file = transfer.request.bodyFile {
            var openError = ""
            guard let fileReader = CurlBodyReader(file: file, openError: &openError),
                  let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size]) as? Int else {
                return .failure(.transportFailed(URLError(.cannotOpenFile, userInfo: [
                    NSLocalizedDescriptionKey: "the request body file \(file.path) cannot be read: \(openError)",
                    NSURLErrorFailingURLErrorKey: url,
                ])))
            }
            reader = fileReader
            bodySize = Int64(size)
        } else if ["POST", "PUT", "PATCH"].contains(method) {
            // An empty body, sent with Content-Length: 0 as servers expect.
            bodySize = 0
        }

        let exchange = CurlExchange(transfer: transfer, options: options, reader: reader)
        easy.prepare(for: exchange)
        easy.set(.url(url.absoluteString))
        if method == "HEAD" {
            easy.set(.noBody)
        } else if let bodySize {
            transfer.totalBytesToSend.store(bodySize, ordering: .relaxed)
            easy.set(.upload(size: bodySize))
            // An upload is a PUT to libcurl; any other method keeps its name.
            if method != "PUT" { easy.set(.customMethod(method)) }
        } else if method != "GET" {
            easy.set(.customMethod(method))
        } else {
            transfer.totalBytesToSend.store(0, ordering: .relaxed)
        }
        // Every encoding libcurl can decode, decoded as it arrives.
        easy.set(.acceptEncoding(""))
        if !decodingContent { easy.setContentDecoding(false) }
        easy.setHeaders(options.headerLines(for: transfer.request))
        if let proxy = scheme == "https" ? options.httpsProxy : options.httpProxy { easy.set(.proxy(proxy)) }
        if let credentials = options.credentials { easy.set(.credentials(user: credentials.user, password: credentials.password)) }
        if scheme == "https" { configureTLS(easy, options: options, url: url) }
        if let idle = options.idleTimeout { easy.set(.idleTimeout(seconds: idle)) }
        if let total = options.resourceTimeout { easy.set(.totalTimeout(milliseconds: total)) }
        if case .streamed = transfer.delivery {
            // Streams and downloads can be long: reading 128 KiB at a time rather than libcurl's
            // 16 KiB makes eight times fewer reads, polls and chunks (curl's command line uses 100 KiB).
            easy.set(.receiveBufferSize(128 << 10))
        }
        return .success(exchange)
    }

    /// The roots an HTTPS transfer trusts (see `CurlOptions`), the host's pins and client
    /// certificate (`CurlTLS`), the minimum TLS version, and waiting for multiplexing: a burst to
    /// a new HTTP/2 origin then shares the first connection instead of opening one per request
    /// (as curl's `--parallel` does). Plain HTTP needs none of it: libcurl speaks HTTP/1.1 there,
    /// where waiting could only delay a burst's other connections.
    private static func configureTLS(_ easy: CurlEasy, options: CurlOptions, url: URL) {
        let tls = options.tls.transfer(for: url)
        if let selfSigned = tls.selfSigned {
            // The test server's own certificate is the host's one root: no system root applies.
            easy.set(.caFile(selfSigned.path))
            easy.set(.caDirectory(nil))
        } else {
            switch options.certificateAuthorities {
            case .libcurlDefaults:
                break
            case .directory(let directory, let extraRoots):
                easy.set(.caDirectory(directory))
                easy.set(.caFile(extraRoots))
            case .file(let bundle):
                easy.set(.caFile(bundle))
                // libcurl takes NULL here from every version; built without CA directories, it
                // answers "not built in", which leaves nothing to clear.
                easy.set(.caDirectory(nil))
            }
        }
        easy.set(.minimumTLSVersion(options.tls.sslVersionOption))
        if let pins = tls.pinnedKeyOption { easy.set(.pinnedPublicKeys(pins)) }
        if let certificate = tls.clientCertificate {
            easy.set(.clientCertificate(certificate: certificate.certificate.path, key: certificate.privateKey?.path,
                                        password: certificate.password))
        }
        easy.set(.pipeWait)
    }
}
#endif
