import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations of a ``DiskStore``, on the directory it owns: the one place where the
/// cache calls the C library (`open`, `write`, `close`, `flock`, `lstat`, `futimens`,
/// `utimensat`, `rename`, `unlink`), for what Foundation does not offer (a lock, a time to the
/// nanosecond, a rename over an existing file, a write without `fsync`) or offers only slowly. No
/// pointer is handled here: Swift lends the paths, the byte arrays and the two-element time arrays
/// to each C call for its duration, and every length passed is the array's own count.
///
/// Nothing is `fsync`ed (nor is anything else Courier writes): a power cut may lose the entries
/// written in the seconds before it, or leave files torn, which the checksum of
/// ``CacheEntryFile`` makes a reader detect and delete. A process that dies (even by `SIGKILL`)
/// loses nothing the kernel has accepted: every entry is written to a temporary file and renamed
/// over its final name, so a name never shows a partial file.
struct CacheDirectory: Sendable {
    /// The directory, absolute and standardised, without a final slash.
    let path: String

    static let lockFileName = ".courier-cache.lock"

    func filePath(_ name: String) -> String {
        path + "/" + name
    }

    // MARK: - Owning the directory

    /// Takes the exclusive `flock` on the directory's lock file (created if need be) and returns
    /// its descriptor, which holds the lock until it is closed. `flock` locks belong to the open
    /// file, and the descriptor is close-on-exec, so child processes do not inherit the lock.
    func lock() throws(CacheStoreError) -> Int32 {
        let lockPath = filePath(Self.lockFileName)
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else { throw .cannotWrite(path, reason: Self.describe(errno)) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let error = errno
            _ = close(descriptor)
            if error == EWOULDBLOCK { throw .usedByAnotherProcess(path) }
            throw .cannotWrite(path, reason: Self.describe(error))
        }
        return descriptor
    }

    /// Gives the lock back.
    static func unlock(_ descriptor: Int32) {
        _ = close(descriptor)
    }

    // MARK: - Files

    /// A regular file in the directory.
    struct File {
        var name: String
        var size: Int
        /// The modification time, seconds since 1970.
        var modified: Double
    }

    /// The regular files in the directory (names, sizes, times; no file is opened).
    func files() -> [File] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        return names.compactMap { name in
            var info = stat()
            guard lstat(filePath(name), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            #if canImport(Darwin)
            let time = info.st_mtimespec
            #else
            let time = info.st_mtim
            #endif
            return File(name: name, size: Int(info.st_size), modified: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
        }
    }

    /// A file's bytes; nil when it cannot be read.
    func read(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: filePath(name)).map { [UInt8]($0) }
    }

    /// Writes a file under a temporary name and renames it over `name`, with `modified` as its
    /// modification time: readers see the old file or the whole new one. False when any step
    /// failed (then nothing is left under the temporary name). Not `Data.write(to:)`, which
    /// `fsync`s every file (200–300 µs each here).
    func write(_ bytes: [UInt8], to name: String, modified: Double) -> Bool {
        let temporary = filePath(CacheEntryFile.temporaryPrefix + CacheEntryFile.Name.hex(UInt64.random(in: .min ... .max)))
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else { return false }
        let written = writeAll(bytes, to: descriptor)
        let stamp = Self.stamp(modified)
        _ = futimens(descriptor, [stamp, stamp])
        guard close(descriptor) == 0, written, rename(temporary, filePath(name)) == 0 else {
            _ = unlink(temporary)
            return false
        }
        return true
    }

    /// Whether a file can be created and removed in the directory (a real write: permissions
    /// alone do not tell, for root or on a read-only volume).
    func checkWritable() throws(CacheStoreError) {
        let probe = filePath(CacheEntryFile.temporaryPrefix + "probe")
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else { throw .cannotWrite(path, reason: Self.describe(errno)) }
        _ = close(descriptor)
        _ = unlink(probe)
    }

    func remove(_ name: String) {
        _ = unlink(filePath(name))
    }

    /// Sets a file's modification time (nothing happens when there is no such file).
    func setModificationTime(of name: String, to time: Double) {
        let stamp = Self.stamp(time)
        _ = utimensat(AT_FDCWD, filePath(name), [stamp, stamp], AT_SYMLINK_NOFOLLOW)
    }

    /// A time as the C library takes it.
    private static func stamp(_ time: Double) -> timespec {
        let seconds = time.rounded(.down)
        return timespec(tv_sec: Int(seconds), tv_nsec: Int((time - seconds) * 1e9))
    }

    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

/// Writes all the bytes to a descriptor (again after an interruption); false when a write failed
/// or wrote less, which for a regular file means the disk is full or failing.
private func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
    var result: Int
    repeat {
        result = write(descriptor, bytes, bytes.count)
    } while result < 0 && errno == EINTR
    return result == bytes.count
}
