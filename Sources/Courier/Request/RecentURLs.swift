import Foundation

/// The URLs a queue's last few request paths resolved to, so that a request to the same path with
/// the same query as one of them reuses its `URL` rather than resolving it again.
///
/// Resolving is checking the path, escaping it, joining it to the base URL and parsing the result
/// (`URL(string:)` alone is about 3,600 instructions on Linux); together 7,400 instructions a
/// request for a plain path, 22,000 for one with a query written into it, against about 700 to
/// find it here, and 1,500 more when it is not here (a path seen once). Apps send the same few
/// paths over and over (a feed polled, a profile reloaded, one endpoint per screen), and a path
/// with its query always resolves to the same URL against the same base:
/// `URLRequestBuilder.resolve` is a pure function of them, and a `URL` an immutable value.
///
/// Invariants, checked by `RecentURLsTests`:
/// - at most ``capacity`` URLs are kept; the one used longest ago goes first;
/// - a path and query are kept once, with the URL first kept for them;
/// - what fails to resolve is never kept.
final class RecentURLs: Sendable {
    /// 16 paths, found by their hash: a lookup hashes the path and query once and compares
    /// strings only where the hashes match.
    static let capacity = 16

    private struct Entry {
        let hash: Int
        let path: String
        let query: String?
        let url: URL

        func holds(_ hash: Int, _ path: String, _ query: String?) -> Bool {
            self.hash == hash && self.path == path && self.query == query
        }
    }

    /// The newest last.
    private let entries = Locked<[Entry]>([])

    /// The URL kept for `path` and `query`, or the one `resolve` makes of them, then kept (a
    /// failure is thrown and not kept). `resolve` runs outside the lock: two threads that miss the
    /// same path at once both resolve it, and the URL kept is the first one's.
    func url(path: String, query: String?, resolving resolve: () throws(RequestError) -> URL) throws(RequestError) -> URL {
        var hasher = Hasher()
        hasher.combine(path)
        hasher.combine(query)
        let hash = hasher.finalize()
        let kept = entries.withLock { entries -> URL? in
            guard let index = entries.lastIndex(where: { $0.holds(hash, path, query) }) else { return nil }
            let entry = entries[index]
            if index != entries.count - 1 {
                entries.remove(at: index)
                entries.append(entry)
            }
            return entry.url
        }
        if let kept { return kept }
        let url = try resolve()
        entries.withLock { entries in
            guard !entries.contains(where: { $0.holds(hash, path, query) }) else { return }
            if entries.count == Self.capacity { entries.removeFirst() }
            entries.append(Entry(hash: hash, path: path, query: query, url: url))
        }
        return url
    }

    /// The paths kept, each with its query after a `?` when it has one, the one used longest ago first.
    var keys: [String] {
        entries.withLock { entries in entries.map { entry in entry.query.map { entry.path + "?" + $0 } ?? entry.path } }
    }
}
