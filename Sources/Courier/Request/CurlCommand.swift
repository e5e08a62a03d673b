import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLRequest {
    /// The request as a `curl` command line, for logs and bug reports.
    ///
    /// ```swift
    /// print(urlRequest.curlCommand())
    /// // curl -X POST 'https://api.example.com/login' -H 'Authorization: <redacted>' \
    /// //   -H 'Content-Type: application/json' --data-binary '{"user":"ada"}'
    /// ```
    /// - Parameters:
    ///   - revealingSecrets: Whether to print the values of `Authorization`,
    ///     `Proxy-Authorization`, `Cookie` and the `sensitiveHeaders`. Default: false, they
    ///     read `<redacted>`.
    ///   - sensitiveHeaders: More headers to redact, case-insensitive. Default: none.
    ///   - bodyFile: The file the body streams from, when it is not in `httpBody`.
    public func curlCommand(revealingSecrets: Bool = false, sensitiveHeaders: Set<String> = [],
                            bodyFile: URL? = nil) -> String {
        var parts = ["curl"]
        let method = httpMethod ?? "GET"
        if method != "GET" || httpBody != nil || bodyFile != nil { parts.append("-X \(method)") }
        parts.append(Self.shellQuoted(url?.absoluteString ?? ""))
        let redacted = Redirects.alwaysSensitive.union(sensitiveHeaders.map { $0.lowercased() })
        for (name, value) in (allHTTPHeaderFields ?? [:]).sorted(by: { $0.key.lowercased() < $1.key.lowercased() }) {
            let shown = !revealingSecrets && redacted.contains(name.lowercased()) ? "<redacted>" : value
            parts.append("-H " + Self.shellQuoted("\(name): \(shown)"))
        }
        if let httpBody {
            if let text = String(data: httpBody, encoding: .utf8) {
                parts.append("--data-binary " + Self.shellQuoted(text))
            } else {
                parts.append("--data-binary '<\(httpBody.count) bytes of binary data>'")
            }
        } else if let bodyFile {
            parts.append("--data-binary " + Self.shellQuoted("@" + bodyFile.path))
        }
        return parts.joined(separator: " ")
    }

    /// Single-quotes a word for POSIX shells: `it's` becomes `'it'\''s'`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}

extension RequestQueue {
    /// A request as the `curl` command line of what the queue would send, before delegates and
    /// the authenticator run, with secrets redacted unless asked for.
    ///
    /// ```swift
    /// print(try queue.curlCommand(for: LogInRequest(parameters: credentials)))
    /// ```
    /// - Parameters:
    ///   - request: The request to describe; it is not sent.
    ///   - revealingSecrets: Whether to print `Authorization`, `Cookie` and the
    ///     configuration's ``RequestQueueConfiguration/sensitiveHeaders``. Default: false.
    public func curlCommand<R: Request>(for request: R, revealingSecrets: Bool = false) throws(RequestError) -> String {
        let prepared = try builder.prepare(request)
        defer { prepared.removeTemporaryFiles() }
        var command = prepared.urlRequest.curlCommand(revealingSecrets: revealingSecrets,
                                                      sensitiveHeaders: configuration.sensitiveHeaders,
                                                      bodyFile: prepared.bodyFileIsTemporary ? nil : prepared.bodyFile)
        if prepared.bodyFileIsTemporary, let file = prepared.bodyFile {
            // Courier's temporary multipart body is gone once the request ends: say what it was.
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
            command += " --data-binary '<\(size)-byte multipart body, streamed from a temporary file>'"
        }
        return command
    }
}
