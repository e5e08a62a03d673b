import Foundation
@testable import Courier

/// A fixed clock and stored responses for the tests of the cache rules.
enum CacheRuleFixtures {
    /// 2026-06-01T00:00:00Z: "now" for every rule test, so that ages are exact.
    static let now: Double = 1_780_272_000

    /// The primary key the fixtures use.
    static let url = "https://example.com/a"

    /// An IMF-fixdate `seconds` after (or before, when negative) ``now``.
    static func date(_ seconds: Double) -> String {
        HTTPDate.format(secondsSince1970: Int64(now + seconds))
    }

    /// A stored response received `receivedAgo` seconds before ``now``, whose request took
    /// `delay` seconds.
    static func stored(status: Int = 200, headers: HTTPFields = [:], receivedAgo: Double = 0,
                       delay: Double = 0, secondaryKey: [String?] = [], credentialKey: String? = nil,
                       url: String = url) -> StoredResponse {
        StoredResponse(url: url, statusCode: status, headers: headers, body: Data("body".utf8),
                       requestTime: now - receivedAgo - delay, responseTime: now - receivedAgo,
                       secondaryKey: secondaryKey, credentialKey: credentialKey)
    }

    /// The same, its fields from a dictionary (sorted by name, as `HTTPFields` makes them).
    static func stored(status: Int = 200, headers: [String: String], receivedAgo: Double = 0,
                       delay: Double = 0, secondaryKey: [String?] = [], credentialKey: String? = nil,
                       url: String = url) -> StoredResponse {
        stored(status: status, headers: HTTPFields(headers), receivedAgo: receivedAgo, delay: delay,
               secondaryKey: secondaryKey, credentialKey: credentialKey, url: url)
    }
}
