/// How old a stored response is and how long it stays fresh, by the clock of the device: RFC 9111
/// §4.2, for a private cache.
///
/// **Age** (§4.2.3), from the stored response's `Date`, `Age`, ``StoredResponse/requestTime`` and
/// ``StoredResponse/responseTime``:
/// ```
/// apparent_age          = max(0, response_time - date_value)
/// response_delay        = response_time - request_time
/// corrected_age_value   = age_value + response_delay
/// corrected_initial_age = max(apparent_age, corrected_age_value)
/// resident_time         = now - response_time
/// current_age           = corrected_initial_age + resident_time
/// ```
/// - `date_value` is the `Date` field; a response without a valid one is dated when it was
///   received (RFC 9110 §6.6.1: a recipient records the time it received such a response).
/// - `age_value` is the `Age` field, its first member when it is a list (§5.1), a non-negative
///   integer saturated at 2^31 (§1.2.2); anything else is ignored, as §5.1 asks, and counts as 0.
/// - `response_delay` and `resident_time` are never negative: they are intervals of the device's
///   own clock, and a clock set back must not make a response younger than it was when received.
///
/// **Freshness lifetime** (§4.2.1, first match; `s-maxage` is for shared caches and ignored):
/// 1. `max-age`, when valid. An invalid `max-age` (or several different ones) is invalid
///    freshness information: lifetime 0, stale (§4.2.1 encourages this).
/// 2. `Expires` minus `date_value`. An `Expires` that is not one HTTP date, including several
///    values combined, is in the past (§5.3): lifetime 0.
/// 3. Otherwise there is no explicit expiration, and a heuristic may apply (§4.2.2): only to a
///    status that is heuristically cacheable (RFC 9110 §15.1) or to a response marked
///    explicitly cacheable (`public`, or `private`, which §5.2.2.7 lets a private cache store
///    "even if the response would not otherwise be heuristically cacheable"). Courier takes the
///    10 % of the interval since `Last-Modified` that §4.2.2 suggests, when `Last-Modified` is a
///    valid date before `date_value`, at most `heuristicLimit` seconds. Without it: 0.
///
/// A response is fresh while its lifetime is greater than its age (§4.2: `freshness_lifetime >
/// current_age`); at equal values it is stale.
struct Freshness: Hashable, Sendable {
    /// The current age, in seconds (`current_age`).
    let age: Double
    /// The freshness lifetime, in seconds (`freshness_lifetime`).
    let lifetime: Double
    /// Whether ``lifetime`` is a heuristic (§4.2.2) rather than the origin's explicit expiration.
    let isHeuristic: Bool

    /// Whether the response may still be used without validation (§4.2).
    var isFresh: Bool { lifetime > age }

    /// How long ago the response became stale, in seconds; 0 while it is fresh.
    var staleness: Double { max(0, age - lifetime) }

    /// Whether RFC 9110 §15.1 defines a status code as heuristically cacheable.
    static func isHeuristicallyCacheable(_ status: Int) -> Bool {
        switch status {
        case 200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501: true
        default: false
        }
    }
}

extension Freshness {
    /// The freshness of `stored` at `now` (seconds since 1970), with heuristic lifetimes capped
    /// at `heuristicLimit` seconds. `directives` are its `Cache-Control`'s when the caller has
    /// parsed them already.
    init(of stored: StoredResponse, now: Double, heuristicLimit: Double, directives: CacheControl? = nil) {
        self.init(stored.freshnessBasis(now: now, directives: directives), responseTime: stored.responseTime, now: now,
                  heuristicLimit: heuristicLimit)
    }

    /// The freshness at `now` of a response received at `responseTime` (seconds since 1970) with
    /// `basis`: its age grows by the time it has been resident (never negative, for a clock set
    /// back), and a heuristic lifetime is capped at `heuristicLimit` seconds.
    init(_ basis: FreshnessBasis, responseTime: Double, now: Double, heuristicLimit: Double) {
        age = basis.correctedInitialAge + max(0, now - responseTime)
        switch basis.lifetime {
        case .explicit(let seconds):
            (lifetime, isHeuristic) = (seconds, false)
        case .heuristic(let seconds):
            (lifetime, isHeuristic) = (min(seconds, max(0, heuristicLimit)), true)
        case .none:
            (lifetime, isHeuristic) = (0, false)
        }
    }

    /// `age_value` (§4.2.3, §5.1): the first member of an `Age` field when it is delta-seconds,
    /// saturated at 2^31; 0 when there is no field or it is not a non-negative integer.
    static func ageValue(_ field: String?) -> Double {
        guard let field else { return 0 }
        var digits = Array(field.utf8.prefix { $0 != UInt8(ascii: ",") })[...]
        while let first = digits.first, HTTPSyntax.isWhitespace(first) { digits = digits.dropFirst() }
        while let last = digits.last, HTTPSyntax.isWhitespace(last) { digits = digits.dropLast() }
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return 0 }
        var value = 0
        for byte in digits {
            value = min(value * 10 + Int(byte - UInt8(ascii: "0")), CacheControl.maximumDeltaSeconds)
        }
        return Double(value)
    }
}
