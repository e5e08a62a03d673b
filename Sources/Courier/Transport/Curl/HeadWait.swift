#if os(Linux)

/// Whether the curl loop waits awake for a lone transfer's response head, or sleeps in `poll`
/// for it: the loop's choice after each pass, kept apart so that its rule has tests of its own.
///
/// Waiting awake (at most ``awakeWait``) saves a near server's answer a wake-up of the loop's
/// thread, which took 25–35 µs on a 2-core VM; for a far server it would only burn CPU. So the
/// loop waits awake while heads have come quickly: after an awake wait that ended without one,
/// it sleeps for the next heads, and it waits awake again once a head it slept for came within
/// ``awakeWait`` of the start of that sleep (Benchmarks/ANALYSIS.md, #20).
struct HeadWait {
    /// How long the loop waits awake, in nanoseconds: 0.1 ms.
    static let awakeWait: UInt64 = 100_000

    /// Whether the last wait for a head (awake or asleep) ended within ``awakeWait``.
    private(set) var headsComeQuickly = true

    /// Whether to wait awake for the head a lone transfer awaits (`awaitsHead`).
    func waitsAwake(awaitsHead: Bool) -> Bool {
        awaitsHead && headsComeQuickly
    }

    /// An awake wait ended without the head: the server is not near, or not now.
    mutating func awakeWaitEndedEmpty() {
        headsComeQuickly = false
    }

    /// The loop slept for a head from `start` to `end` (uptime, nanoseconds).
    mutating func slept(from start: UInt64, to end: UInt64) {
        headsComeQuickly = end &- start < Self.awakeWait
    }
}
#endif
