import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When and how a failed request is tried again. Opt-in: set
/// ``RequestQueueConfiguration/retryPolicy``.
///
/// ```swift
/// var config = RequestQueueConfiguration.default
/// config.retryPolicy = RetryPolicy(maximumAttempts: 4)
/// ```
/// A retried request keeps its ID; observers see only its final result, while delegates hear
/// about each attempt (`willSend`, `didSend`, and ``RequestQueueDelegate/requestQueue(_:willRetry:attempt:after:)``).
/// The request's timeout covers all its attempts, backoff included.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included. Default: 3.
    public var maximumAttempts: Int
    /// Methods that may be retried. Default: the idempotent ones (GET, HEAD, PUT, DELETE, OPTIONS, TRACE).
    public var methods: Set<HTTPMethod>
    /// Response statuses that are retried. Default: 408, 429, 500, 502, 503, 504.
    public var statusCodes: Set<Int>
    /// Transport errors that are retried. Default: connection refused, lost or reset, host not
    /// found, not connected. (A request that ran out of its timeout is not retried.)
    public var urlErrorCodes: Set<URLError.Code>
    /// The delay before the first retry, in seconds; it doubles with each further retry. Default: 0.5.
    public var baseDelay: TimeInterval
    /// The longest delay between attempts, in seconds. A `Retry-After` asking for longer ends the
    /// request instead. Default: 30.
    public var maximumDelay: TimeInterval
    /// The share of each delay that is random, from 0 (none) to 1, so that many clients do not
    /// retry in step. Default: 0.5 (a delay of d waits between 0.5 d and d).
    public var jitter: Double
    /// Whether a `Retry-After` header (seconds or an HTTP date) sets the delay. Default: true.
    public var honorsRetryAfter: Bool

    /// Creates a policy; every parameter defaults to the value its property documents.
    /// - Parameters:
    ///   - maximumAttempts: Attempts in all, the first included. Default: 3.
    ///   - methods: Methods that may be retried. Default: the idempotent ones.
    ///   - statusCodes: Response statuses that are retried. Default: 408, 429, 500, 502, 503, 504.
    ///   - urlErrorCodes: Transport errors that are retried. Default: connection refused, lost or
    ///     reset, host not found, not connected.
    ///   - baseDelay: The first retry's delay in seconds, doubled for each further one. Default: 0.5.
    ///   - maximumDelay: The longest delay in seconds. Default: 30.
    ///   - jitter: The random share of each delay, 0 to 1. Default: 0.5.
    ///   - honorsRetryAfter: Whether `Retry-After` sets the delay. Default: true.
    public init(
        maximumAttempts: Int = 3,
        methods: Set<HTTPMethod> = [.get, .head, .put, .delete, .options, .trace],
        statusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
        urlErrorCodes: Set<URLError.Code> = [.cannotConnectToHost, .networkConnectionLost, .cannotFindHost,
                                             .dnsLookupFailed, .notConnectedToInternet],
        baseDelay: TimeInterval = 0.5,
        maximumDelay: TimeInterval = 30,
        jitter: Double = 0.5,
        honorsRetryAfter: Bool = true
    ) {
        self.maximumAttempts = maximumAttempts
        self.methods = methods
        self.statusCodes = statusCodes
        self.urlErrorCodes = urlErrorCodes
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.honorsRetryAfter = honorsRetryAfter
    }

    /// The default policy: 3 attempts of idempotent requests, 0.5 s doubling, with jitter.
    public static let `default` = RetryPolicy()

    /// The delay before attempt `number + 1`, or `nil` when the failure is not to be retried.
    /// - Parameters:
    ///   - anyMethod: A durable request's retry: whatever the method (its Idempotency-Key makes a
    ///     replay safe), and after any transport failure that another attempt can mend (a
    ///     transport failure is not the server's answer; a connection a restarting server cut
    ///     shows as codes the list may lack, such as `badServerResponse` on Linux's URLSession).
    ///   - attempts: The most attempts, instead of ``maximumAttempts`` (a durable request's limit).
    func delay(after number: Int, method: String?, failure: RetryableFailure, anyMethod: Bool = false, attempts: Int? = nil,
               random: () -> Double = { Double.random(in: 0...1) }) -> TimeInterval? {
        guard number < attempts ?? maximumAttempts,
              anyMethod || methods.contains(HTTPMethod(rawValue: method ?? "GET")) else { return nil }
        var delay = min(maximumDelay, baseDelay * pow(2, Double(min(number, 62) - 1)))
        delay *= 1 - max(0, min(1, jitter)) * random()
        switch failure {
        case .transport(let code):
            return urlErrorCodes.contains(code) || anyMethod && !Self.isPermanent(code) ? delay : nil
        case .attemptTimedOut:
            return delay
        case .status(let response):
            guard statusCodes.contains(response.status) else { return nil }
            if honorsRetryAfter, let asked = Self.retryAfter(response) {
                return asked <= maximumDelay ? asked : nil
            }
            return delay
        }
    }

    /// Transport failures no later attempt mends: the request or the app's configuration is wrong
    /// (its URL, its body file, the trust it gives), or the app stopped it.
    static func isPermanent(_ code: URLError.Code) -> Bool {
        switch code {
        case .badURL, .unsupportedURL, .cancelled, .userCancelledAuthentication, .fileDoesNotExist, .cannotOpenFile,
             .noPermissionsToReadFile, .serverCertificateUntrusted, .serverCertificateHasUnknownRoot,
             .serverCertificateHasBadDate, .serverCertificateNotYetValid, .clientCertificateRejected,
             .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection, .dataLengthExceedsMaximum,
             .requestBodyStreamExhausted:
            true
        default:
            false
        }
    }

    enum RetryableFailure {
        case transport(URLError.Code)
        case status(ResponseHead)
        /// A durable request's attempt ran out of its time: always tried again (its
        /// Idempotency-Key makes a replay safe), whatever the codes listed.
        case attemptTimedOut
    }

    /// The delay a `Retry-After` header asks for: delta-seconds or an HTTP date.
    static func retryAfter(_ response: ResponseHead, now: Date = Date()) -> TimeInterval? {
        guard let value = response.headerFields["Retry-After"]?.trimmingCharacters(in: .whitespaces) else {
            return nil
        }
        if let seconds = Int(value), seconds >= 0 { return TimeInterval(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
