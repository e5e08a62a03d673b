#if os(Linux)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the curl transport takes from ``TransportSettings``, worked out once when the transport
/// is made (the session configuration is a mutable class; its values are read here, once).
///
/// Honoured from the session configuration: `httpAdditionalHeaders`, `timeoutIntervalForRequest`
/// (as an idle timeout: less than a byte per second for that long), `timeoutIntervalForResource`,
/// `httpMaximumConnectionsPerHost` (through ``TransportSettings/maximumConnectionsPerHost``),
/// `httpCookieStorage`, `httpCookieAcceptPolicy`, `httpShouldSetCookies` and
/// `connectionProxyDictionary` (HTTP and HTTPS proxies); without a proxy there, libcurl reads
/// `http_proxy`, `https_proxy` and `no_proxy` from the environment. ``TransportSettings/trustedCertificates``
/// are added to the system's roots (certificates are always verified), and ``TransportSettings/tls``
/// is applied per host (`CurlTLS`).
///
/// How the roots reach libcurl (`CurlCertificateAuthorities`) decides what a new TLS connection
/// costs: parsing a whole bundle of ~140 roots takes 16–28 ms of CPU here (OpenSSL 3), and
/// Debian's libcurl, with both a default CA file and a CA directory, parses the file for every
/// connection. Courier gives libcurl the system's hashed CA directory, where OpenSSL reads only
/// the roots a chain needs, plus a CA file of the extra roots alone (none without extras), so
/// that every connection, the first of a new queue included, costs about 2 ms. Without such a
/// directory (or with a TLS library that takes none) it gives one CA file, the system's bundle
/// with the extras, and no directory, which libcurl 7.87 and later parse once per transport (its
/// CA cache, kept 24 hours); a system with neither keeps libcurl's defaults.
///
/// Not honoured: `urlCache` (Courier's own cache is planned), `requestCachePolicy`,
/// `networkServiceType`, `allowsCellularAccess` and the other Apple-only settings, which mean
/// nothing on Linux.
struct CurlOptions: Sendable {
    var maximumResponseSize: Int?
    var maximumConnectionsPerHost: Int
    /// The session's extra headers, sent unless the request sets the same name.
    var additionalHeaders: [(name: String, value: String)]
    var userAgent: String
    /// Seconds with less than a byte per second before a transfer fails.
    var idleTimeout: Int?
    /// Milliseconds a transfer may take in all.
    var resourceTimeout: Int?
    var credentials: HTTPCredentials?
    var httpProxy: String?
    var httpsProxy: String?
    var cookies: CurlCookies?
    /// Where every HTTPS transfer finds the roots it trusts.
    var certificateAuthorities = CurlCertificateAuthorities.libcurlDefaults
    /// Pins, client certificates, self-signed test servers and the minimum TLS version.
    var tls = CurlTLS()
    /// Why the settings cannot be used (an unreadable certificate file): every request fails with it.
    var unusable: RequestError?

    init(settings: TransportSettings, curlVersion: String) {
        let session = settings.sessionConfiguration
        maximumResponseSize = settings.maximumResponseSize
        maximumConnectionsPerHost = max(1, settings.maximumConnectionsPerHost)
        additionalHeaders = (session.httpAdditionalHeaders ?? [:])
            .map { (name: "\($0.key)", value: "\($0.value)") }
            .sorted { $0.name < $1.name }
        // The same shape as URLSession's default on Linux, so servers see the same kind of client.
        userAgent = "\(ProcessInfo.processInfo.processName) (unknown version) curl/\(curlVersion)"
        let request = session.timeoutIntervalForRequest
        idleTimeout = request > 0 && request < 1e7 ? max(1, Int(request.rounded(.up))) : nil
        let resource = session.timeoutIntervalForResource
        resourceTimeout = resource > 0 && resource < 1e7 ? Int(resource * 1000) : nil
        credentials = settings.credentials
        let proxies = session.connectionProxyDictionary ?? [:]
        httpProxy = Self.proxy(proxies, enable: "HTTPEnable", host: "HTTPProxy", port: "HTTPPort")
        httpsProxy = Self.proxy(proxies, enable: "HTTPSEnable", host: "HTTPSProxy", port: "HTTPSPort")
        if let storage = session.httpCookieStorage, session.httpShouldSetCookies || session.httpCookieAcceptPolicy != .never {
            cookies = CurlCookies(storage: storage, sends: session.httpShouldSetCookies, policy: session.httpCookieAcceptPolicy)
        }
        // Without a CA directory, one file: the system's bundle with the extra roots.
        let directory = CurlLibrary.takesCADirectory ? Self.systemDirectory : nil
        if !settings.trustedCertificates.isEmpty {
            switch Self.caBundle(adding: settings.trustedCertificates, systemRoots: directory == nil) {
            case .success(let path): certificateAuthorities = directory.map { .directory($0, extraRoots: path) } ?? .file(path)
            case .failure(let error): unusable = error
            }
        } else if let directory {
            certificateAuthorities = .directory(directory, extraRoots: nil)
        } else if let bundle = Self.systemBundle {
            certificateAuthorities = .file(bundle)
        }
        do {
            tls = try CurlTLS(settings.tls)
        } catch {
            unusable = unusable ?? error.requestError(url: nil)
        }
    }

    /// The first readable bundle of `systemBundles`, looked up once per process.
    private static let systemBundle: String? = systemBundles.first { FileManager.default.isReadableFile(atPath: $0) }

    /// Where Linux distributions keep the system's roots hashed by subject for OpenSSL (Debian,
    /// Ubuntu, Alpine and openSUSE; Fedora and RHEL).
    private static let systemDirectories = ["/etc/ssl/certs", "/etc/pki/ca-trust/extracted/pem/directory-hash"]

    /// The first of `systemDirectories` that holds hashed roots ("5ad8a5d6.0"), looked up once per
    /// process: a folder of PEM files without those names is no CA directory to OpenSSL.
    private static let systemDirectory: String? = systemDirectories.first { directory in
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.contains { name in
            let parts = name.split(separator: ".")
            return parts.count == 2 && parts[0].count == 8 && parts[0].allSatisfy(\.isHexDigit)
                && !parts[1].isEmpty && parts[1].allSatisfy(\.isNumber)
        }
    }

    /// Where Linux distributions keep the system's roots (Debian and Ubuntu, Fedora and RHEL,
    /// openSUSE, Alpine).
    private static let systemBundles = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                                        "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem"]

    /// A bundle file of `extra`, after the system's roots when `systemRoots`, since libcurl takes
    /// one CA file: the extra roots add to the system's rather than replace them. Named after its
    /// content, so queues with the same roots share one file.
    private static func caBundle(adding extra: [URL], systemRoots: Bool) -> Result<String, RequestError> {
        var bundle = Data()
        if systemRoots, let system = systemBundle.flatMap({ FileManager.default.contents(atPath: $0) }) {
            bundle.append(system)
            bundle.append(0x0A)
        }
        for file in extra {
            guard let pem = FileManager.default.contents(atPath: file.path),
                  String(decoding: pem, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
                return .failure(.transportFailed(URLError(.secureConnectionFailed, userInfo: [
                    NSLocalizedDescriptionKey: "the trusted certificate file \(file.path) cannot be read as PEM certificates",
                ])))
            }
            bundle.append(pem)
            bundle.append(0x0A)
        }
        // FNV-1a: a stable name for the same content across processes.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        bundle.withUnsafeBytes { bytes in
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-ca-\(String(hash, radix: 16)).pem").path
        do {
            if FileManager.default.contents(atPath: path) != bundle {
                try bundle.write(to: URL(fileURLWithPath: path), options: .atomic)
            }
            return .success(path)
        } catch {
            return .failure(.transportFailed(URLError(.secureConnectionFailed, userInfo: [
                NSLocalizedDescriptionKey: "cannot write the CA bundle with the trusted certificates to \(path): \(error)",
            ])))
        }
    }

    /// A proxy URL from `connectionProxyDictionary`'s keys, when that proxy is enabled.
    private static func proxy(_ dictionary: [AnyHashable: Any], enable: String, host: String, port: String) -> String? {
        let enabled = (dictionary[enable] as? Bool) ?? ((dictionary[enable] as? Int).map { $0 != 0 } ?? false)
        guard enabled, let name = dictionary[host] as? String, !name.isEmpty else { return nil }
        let number = (dictionary[port] as? Int) ?? (dictionary[port] as? String).flatMap { Int($0) }
        return number.map { "http://\(name):\($0)" } ?? "http://\(name)"
    }

    /// The header lines for libcurl: the request's, the session's extra ones, cookies, and the
    /// default `User-Agent` when neither sets one.
    ///
    /// libcurl's own `Expect: 100-continue` before bodies over 1 MB is kept, as URLSession keeps
    /// it: a server that answers early (a redirect, a 401) is then never sent a body it will not
    /// read, and the connection stays usable.
    func headerLines(for transportRequest: TransportRequest) -> [String] {
        let request = transportRequest.urlRequest
        var lines: [String] = []
        var names = Set<String>()
        for field in transportRequest.wireFields {
            names.insert(field.name.lowercased())
            // "Name;" is libcurl's way to send a header with an empty value.
            lines.append(field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        for (name, value) in additionalHeaders where !names.contains(name.lowercased()) {
            names.insert(name.lowercased())
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        if !names.contains("cookie"), let cookie = cookies?.header(for: request) {
            lines.append("Cookie: \(cookie)")
        }
        if !names.contains("user-agent") {
            lines.append("User-Agent: \(userAgent)")
        }
        return lines
    }
}

/// Where the curl transport's HTTPS transfers find the roots they trust (see ``CurlOptions``).
enum CurlCertificateAuthorities: Sendable, Equatable {
    /// libcurl's own defaults: no roots were found at a known place and there are no extra ones.
    case libcurlDefaults
    /// The system's hashed CA directory, where OpenSSL reads only the roots a chain needs, and a
    /// CA file of the extra roots alone when there are some (libcurl's default CA file is cleared
    /// otherwise, so that no bundle is parsed per connection). Only where libcurl's TLS library
    /// takes a CA directory (`CurlLibrary.takesCADirectory`).
    case directory(String, extraRoots: String?)
    /// One CA file and no CA directory, which libcurl 7.87+ parses once per transport.
    case file(String)
}

/// The session's cookie storage, as the curl transport uses it: `Cookie` headers from it when
/// `httpShouldSetCookies`, and `Set-Cookie` answers into it as `httpCookieAcceptPolicy` allows.
struct CurlCookies: @unchecked Sendable {
    // @unchecked: HTTPCookieStorage is documented as thread-safe (it locks internally) but is not
    // marked Sendable in FoundationNetworking.
    let storage: HTTPCookieStorage
    let sends: Bool
    let policy: HTTPCookie.AcceptPolicy

    func header(for request: URLRequest) -> String? {
        guard sends, request.httpShouldHandleCookies, let url = request.url,
              let cookies = storage.cookies(for: url), !cookies.isEmpty else { return nil }
        return HTTPCookie.requestHeaderFields(with: cookies)["Cookie"]
    }

    func store(_ setCookieValues: [String], from request: URLRequest) {
        guard !setCookieValues.isEmpty, request.httpShouldHandleCookies, let url = request.url else { return }
        switch policy {
        case .never:
            return
        case .onlyFromMainDocumentDomain:
            let main = request.mainDocumentURL ?? url
            guard let host = url.host?.lowercased(), let mainHost = main.host?.lowercased(),
                  host == mainHost || host.hasSuffix("." + mainHost) else { return }
        case .always:
            break
        @unknown default:
            return
        }
        let cookies = setCookieValues.flatMap { HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": $0], for: url) }
        storage.setCookies(cookies, for: url, mainDocumentURL: request.mainDocumentURL)
    }
}
#endif
