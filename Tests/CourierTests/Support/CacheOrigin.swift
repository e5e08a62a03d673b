import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The origins of the cache integration tests, with what reached them.
enum CacheOrigin {
    /// nginx serving `directory` at `url` (Scripts/test.sh): folders `plain/` (nginx's ETag,
    /// Last-Modified and 304 only), `expires/` (`expires 1h`), `no-store/`, `no-cache/`,
    /// `must-revalidate/`, `swr/` (`max-age=60, stale-while-revalidate=600`), `sie/`
    /// (`max-age=60, stale-if-error=600`; a request with `X-Courier-Fail: 1` gets a 503) and
    /// `vary/` (`Vary: Accept-Language`, `max-age=60`); `log` is its access log.
    static func nginx(file: StaticString = #filePath, line: UInt = #line) throws -> (url: URL, directory: URL, log: AccessLog) {
        let message = "Cache tests need the nginx cache origin: run Scripts/test.sh, which starts it, or set "
            + "COURIER_CACHE_ORIGIN_URL, COURIER_CACHE_ORIGIN_DIR and COURIER_CACHE_ORIGIN_LOG yourself"
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["COURIER_CACHE_ORIGIN_URL"].flatMap(URL.init(string:)),
              let directory = environment["COURIER_CACHE_ORIGIN_DIR"], let log = environment["COURIER_CACHE_ORIGIN_LOG"] else {
            throw HTTPBin.missing(message, file: file, line: line)
        }
        return (url, URL(fileURLWithPath: directory, isDirectory: true), AccessLog(file: URL(fileURLWithPath: log)))
    }

    /// httpbin's access log (Scripts/test.sh writes one line a request).
    static func httpbinLog(file: StaticString = #filePath, line: UInt = #line) throws -> AccessLog {
        guard let path = ProcessInfo.processInfo.environment["COURIER_HTTPBIN_ACCESS_LOG"] else {
            throw HTTPBin.missing("Cache tests need httpbin's access log: run Scripts/test.sh, or set "
                                  + "COURIER_HTTPBIN_ACCESS_LOG to the file gunicorn's --access-logfile writes",
                                  file: file, line: line)
        }
        return AccessLog(file: URL(fileURLWithPath: path))
    }

    /// Writes a file of the nginx origin under `folder`, with a name of its own, and returns its path.
    static func write(_ text: String, in folder: String, directory: URL, modified: Date? = nil) throws -> String {
        let folderURL = directory.appendingPathComponent(folder, isDirectory: true)
        try FileManager.default.createDirectory(at: folderURL, withIntermediateDirectories: true)
        let name = UUID().uuidString + ".json"
        let file = folderURL.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        if let modified { try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file.path) }
        return "/\(folder)/\(name)"
    }
}

/// A server's access log, one request a line: `METHOD PATH STATUS inm=IF-NONE-MATCH ims=IF-MODIFIED-SINCE`
/// (httpbin's PATH includes its query).
struct AccessLog {
    let file: URL

    /// One logged request.
    struct Entry: Equatable, CustomStringConvertible {
        let method: String
        let path: String
        let status: Int
        let ifNoneMatch: String?
        let ifModifiedSince: String?
        var description: String { "\(method) \(path) \(status) inm=\(ifNoneMatch ?? "-") ims=\(ifModifiedSince ?? "-")" }
    }

    /// The requests logged for `path` so far, in order.
    func requests(to path: String) -> [Entry] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let inm = line.range(of: " inm="), let ims = line.range(of: " ims=") else { return nil }
            let head = line[..<inm.lowerBound].split(separator: " ")
            // httpbin logs PATH?QUERY, with a bare "?" when there is no query.
            guard head.count == 3, head[1] == path || head[1] == path + "?", let status = Int(head[2]) else { return nil }
            func value(_ text: Substring) -> String? { text.isEmpty || text == "-" ? nil : String(text) }
            return Entry(method: String(head[0]), path: path, status: status,
                         ifNoneMatch: value(line[inm.upperBound..<ims.lowerBound]), ifModifiedSince: value(line[ims.upperBound...]))
        }
    }

    /// Waits (bounded) until at least `count` requests for `path` are logged, and returns them all.
    /// A server may log a request just after its client has the response. The log is another
    /// process's file, so this polls it; the bound only matters when the request never comes, and
    /// is generous (a loaded machine under ThreadSanitizer), costing nothing when it does.
    func waitForRequests(to path: String, count: Int, timeout: TimeInterval = 60) -> [Entry] {
        let deadline = Date() + timeout
        var found = requests(to: path)
        while found.count < count && Date() < deadline {
            usleep(2_000)
            found = requests(to: path)
        }
        return found
    }
}
