import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The unfinished data of a download to `destination`, and the record that lets a later
/// download to the same destination continue it.
///
/// Both are hidden files next to the destination, so that the final move into place is a rename
/// on the same volume (atomic: readers see the old file or the whole new one):
/// - `.<name>.courier-partial`: the body's bytes so far, from the first;
/// - `.<name>.courier-partial.json`: the ``Record``: which URL, which version of the resource
///   (its validator), and how many bytes the data holds.
///
/// A download holds an exclusive `flock` on the data file while it writes it, so that two
/// downloads to one destination (in one process or two) cannot interleave their bytes.
struct PartialDownload: Sendable {
    /// What a later download needs to know to continue the data.
    struct Record: Codable, Hashable, Sendable {
        /// The URL the data was asked from (before redirects): a download of another URL starts over.
        var url: String
        /// The strong entity tag of the version the data came from, if the server gave one.
        var entityTag: String?
        /// Its strong `Last-Modified` date, when there was no entity tag.
        var lastModified: String?
        /// The bytes in the data file when the download ended; `nil` while one is under way (a
        /// process that ended meanwhile leaves it so: the data file's size counts then).
        var bytes: Int64?

        init(url: String, validator: ResumeValidator, bytes: Int64? = nil) {
            self.url = url
            switch validator {
            case .entityTag(let tag): entityTag = tag
            case .lastModified(let date): lastModified = date
            }
            self.bytes = bytes
        }

        /// What goes in `If-Range`.
        var validator: ResumeValidator? {
            if let entityTag { return .entityTag(entityTag) }
            return lastModified.map { .lastModified($0) }
        }
    }

    let destination: URL
    /// The body's bytes so far.
    let dataFile: URL
    /// The ``Record``, as JSON.
    let recordFile: URL

    init(destination: URL) {
        self.destination = destination
        let directory = destination.deletingLastPathComponent()
        let name = destination.lastPathComponent
        dataFile = directory.appendingPathComponent(".\(name).courier-partial")
        recordFile = directory.appendingPathComponent(".\(name).courier-partial.json")
    }

    // MARK: - The record

    func readRecord() -> Record? {
        guard let data = try? Data(contentsOf: recordFile) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: data)
    }

    /// Writes the record (atomically); false when it could not be written.
    @discardableResult
    func write(_ record: Record) -> Bool {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(record) else { return false }
        return (try? data.write(to: recordFile, options: .atomic)) != nil
    }

    func removeRecord() {
        _ = unlink(recordFile.path)
    }

    // MARK: - Continuing

    /// Where a download of `url` can continue: the data's size and the validator to send with
    /// it. `nil` when there is nothing to continue: no data or no record, a record of another URL
    /// or without a validator, or data whose size is not the record's.
    func resumePoint(for url: URL?) -> (offset: Int64, validator: ResumeValidator)? {
        guard let url, let record = readRecord(), record.url == url.absoluteString,
              let validator = record.validator, ResumeValidator.isSafe(validator.headerValue),
              let size = dataSize(), size > 0, record.bytes.map({ $0 == size }) ?? true
        else { return nil }
        return (size, validator)
    }

    /// The data file's size; `nil` unless it is a regular file.
    func dataSize() -> Int64? {
        var info = stat()
        guard lstat(dataFile.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    // MARK: - Owning the data file

    /// Why the data file could not be opened.
    enum OpenFailure: Error {
        /// Another download holds it.
        case locked
        /// `open` failed with this `errno`.
        case system(Int32)
    }

    /// Opens the data file for writing (creating it if need be) and takes its lock. Symbolic
    /// links are not followed: the file is Courier's own.
    func openLocked() -> Result<Int32, OpenFailure> {
        // A download that removed the file after this one opened it leaves this one with a file
        // no path names any more: then open again.
        for _ in 0..<8 {
            let descriptor = open(dataFile.path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o666)
            guard descriptor >= 0 else { return .failure(.system(errno)) }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let error = errno
                _ = close(descriptor)
                return .failure(error == EWOULDBLOCK ? .locked : .system(error))
            }
            var opened = stat()
            var named = stat()
            if fstat(descriptor, &opened) == 0, lstat(dataFile.path, &named) == 0,
               opened.st_ino == named.st_ino, opened.st_dev == named.st_dev {
                return .success(descriptor)
            }
            _ = close(descriptor)
        }
        return .failure(.system(EAGAIN))
    }

    /// Removes the data and its record; the caller holds the data file's lock.
    func remove() {
        _ = unlink(dataFile.path)
        removeRecord()
    }

    /// Removes the data and its record unless another download holds the data file.
    func removeUnlessLocked() {
        let descriptor = open(dataFile.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            if errno == ENOENT { removeRecord() }
            return
        }
        defer { _ = close(descriptor) }
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { remove() }
    }
}
