/// A start-loop run left to the end of an observer's delivery block (see `DeliveryScope`), which
/// the watchdog takes over from a block that does not end.
///
/// Invariants, checked by `DeferredStartTests`:
/// - a deferred run is taken exactly once: by the block when it ends (`take`) or by the watchdog
///   (`check` returning `.takeOver`), never both;
/// - the watchdog takes a run over only once it has waited for the whole patience.
struct DeferredStart {
    /// When the run was deferred (uptime, nanoseconds); nil when none is.
    private var since: UInt64?

    /// Leaves the claimed run to a delivery block.
    mutating func deferRun(now: UInt64) {
        since = now
    }

    /// Takes the deferred run back when its block ends; false when the watchdog took it first.
    mutating func take() -> Bool {
        defer { since = nil }
        return since != nil
    }

    enum Check: Equatable {
        /// A block has held the run for longer than the patience: run it elsewhere.
        case takeOver
        /// A run is deferred but only recently: look again later.
        case lookAgain
        /// Nothing is deferred: the watchdog can stop until the next deferral.
        case stop
    }

    /// The watchdog's look at the deferred run.
    mutating func check(now: UInt64, patience: UInt64) -> Check {
        guard let since else { return .stop }
        guard now &- since >= patience else { return .lookAgain }
        self.since = nil
        return .takeOver
    }
}
