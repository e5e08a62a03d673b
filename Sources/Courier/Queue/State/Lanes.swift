/// Which durable requests of a lane may go: one at a time per lane, in the order they were added.
///
/// Only a lane's first request is admitted to the waiting lists (``Admission``); the others wait
/// here, and the next is handed out when the first ends (its final result, after every retry), so
/// that a lane holds no concurrency slot while it waits and other lanes and ordinary requests go
/// on meanwhile.
///
/// Invariants, checked by `LanesTests`:
/// - `add` is true for a request only when its lane was empty: at most one request per lane is
///   out (admitted, in flight or backing off) at a time;
/// - `end` of a lane's first request returns the next one in the order added, once;
/// - a request that ends before its turn (cancelled) leaves its lane without changing the turn;
/// - an empty lane is forgotten.
struct Lanes {
    /// Each lane's requests in the order added; the first is the one out.
    private var lines: [String: [RequestID]] = [:]

    /// Requests in all lanes, out or waiting.
    var count: Int { lines.values.reduce(0) { $0 + $1.count } }

    /// Requests waiting in a lane behind its first.
    var waitingCount: Int { lines.values.reduce(0) { $0 + $1.count - 1 } }

    /// Adds a request at the end of its lane; true when it is the lane's first (admit it now).
    mutating func add(_ id: RequestID, to lane: String) -> Bool {
        lines[lane, default: []].append(id)
        return lines[lane]?.count == 1
    }

    /// Takes an ended request out of its lane. Returns the lane's next request, to admit now,
    /// when the ended one was the lane's first; nil otherwise.
    mutating func end(_ id: RequestID, in lane: String) -> RequestID? {
        guard var line = lines[lane], let index = line.firstIndex(of: id) else { return nil }
        line.remove(at: index)
        if line.isEmpty {
            lines[lane] = nil
            return nil
        }
        lines[lane] = line
        return index == 0 ? line[0] : nil
    }

    /// The request of a lane that is out, if any.
    func first(of lane: String) -> RequestID? {
        lines[lane]?.first
    }
}
