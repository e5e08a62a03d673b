import Foundation

/// The URLs a queue's last few request paths resolved to, so that a request to the same path with
/// the same query as one of them reuses its `URL` rather than resolving it again.
///
/// Resolving is checking the path, escaping it, joining it to the base URL and parsing the result
/// (`URL(string:)` alone is about 3,600 instructions on Linux); together about 7,400 a request,
/// a twentieth of all a small GET costs Courier. Apps send the same few paths over and over (a
/// feed polled, a profile reloaded, one endpoint per screen), and a path with its query always
/// resolves to the same URL against the same base: `URLRequestBuilder.resolve` is a pure
/// function of them, and a `URL` an immutable value.
///
/// Invariants, checked by `RecentURLsTests`:
/// - at most ``capacity`` URLs are kept; the one used longest ago goes first;
/// - a path and query are kept once, with the URL first kept for them.
final class RecentURLs: Sendable {
    /// 16 paths: a lookup compares with each, and texts of other lengths differ at once.
    static let capacity = 16

    private struct Entry {
        let path: String
        let query: String?
        let url: URL
    }

    /// The newest last.
    private let entries = Locked<[Entry]>([])

    /// The URL kept for `path` and `query`, if there is one.
    func url(path: String, query: String?) -> URL? {
        entries.withLock { entries -> URL? in
            guard let index = entries.lastIndex(where: { $0.path == path && $0.query == query }) else { return nil }
            let entry = entries[index]
            if index != entries.count - 1 {
                entries.remove(at: index)
                entries.append(entry)
            }
            return entry.url
        }
    }

    /// Keeps the URL `path` and `query` resolved to, as the newest, unless they have one already
    /// (two threads that resolved them at once).
    func keep(_ url: URL, path: String, query: String?) {
        entries.withLock { entries in
            guard !entries.contains(where: { $0.path == path && $0.query == query }) else { return }
            if entries.count == Self.capacity { entries.removeFirst() }
            entries.append(Entry(path: path, query: query, url: url))
        }
    }

    /// The paths kept, each with its query after a `?` when it has one, the one used longest ago first.
    var keys: [String] {
        entries.withLock { entries in entries.map { entry in entry.query.map { entry.path + "?" + $0 } ?? entry.path } }
    }
}
