import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Whether and how far the queue follows HTTP redirects.
public enum RedirectPolicy: Sendable, Hashable {
    /// Follow up to `maximum` redirects per request; one more ends it with
    /// ``RequestError/tooManyRedirects(_:)``.
    case follow(maximum: Int)
    /// Never follow: the 3xx response is the response (and, as a status outside 200–299, fails
    /// the default validation).
    case never

    /// Follow up to 10 redirects, as browsers and libcurl do by default.
    public static let `default` = RedirectPolicy.follow(maximum: 10)
}

/// Builds the request that follows a redirect, the way the queue follows them itself.
///
/// Linux's URLSession, left alone, forwards `Authorization`, `Cookie` and every other header to
/// any host a redirect names, and re-sends a 307/308 POST without its body. So the queue's
/// session stops at every redirect and the queue makes the next request here: sensitive
/// headers stay behind when the redirect leaves the origin, and 307/308 keep method and body.
enum Redirects {
    /// Headers never sent to another origin, whatever the configuration says.
    static let alwaysSensitive: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// Whether a response with this status may be a redirect the queue follows (301, 302, 303,
    /// 307, 308): every other response ends its transfer's part in the request.
    static func isRedirect(status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// The next request, or `nil` when `response` is not a redirect that can be followed.
    static func request(following response: ResponseHead, from request: URLRequest,
                        sensitiveHeaders: Set<String>) -> URLRequest? {
        let status = response.status
        guard isRedirect(status: status),
              let location = response.headerFields["Location"],
              let current = request.url,
              let target = URL(string: location, relativeTo: current)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }

        var next = request
        next.url = target
        let method = request.httpMethod?.uppercased() ?? "GET"
        // RFC 9110 §15.4: 303 always, and 301/302 after a POST, become a GET without a body;
        // 307 and 308 repeat the method and the body.
        if (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST") {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for header in ["Content-Type", "Content-Length", "Content-Encoding"] {
                next.setValue(nil, forHTTPHeaderField: header)
            }
        }
        if !isSameOrigin(current, target) {
            let sensitive = alwaysSensitive.union(sensitiveHeaders.map { $0.lowercased() })
            for name in (next.allHTTPHeaderFields ?? [:]).keys where sensitive.contains(name.lowercased()) {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return next
    }

    /// Whether two URLs share scheme, host and port (RFC 6454), default ports included.
    static func isSameOrigin(_ a: URL, _ b: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int) {
            let scheme = url.scheme?.lowercased() ?? ""
            return (scheme, url.host?.lowercased() ?? "", url.port ?? (scheme == "https" ? 443 : 80))
        }
        return origin(a) == origin(b)
    }

    /// Whether the body must be dropped for this redirect (so a streamed body file is not re-sent).
    static func dropsBody(status: Int, method: String?) -> Bool {
        let method = method?.uppercased() ?? "GET"
        return (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST")
    }
}
