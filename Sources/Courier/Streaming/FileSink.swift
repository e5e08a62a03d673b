import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The sink of a ``Download``: the body goes to the hidden partial data file next to the
/// destination as it arrives (see ``PartialDownload``), which is renamed onto the destination
/// once the body is complete.
///
/// Memory stays bounded whatever the size: each chunk is written before the next is taken, on
/// the transport's thread. Before each attempt the sink asks for the rest of any partial data it
/// can continue (``ResumePlan``); on each head it decides what the body means for the file.
///
/// When the request ends without the file in place, the sink keeps the partial data (with its
/// record, so that a later download continues it) or removes it: a cancellation removes it unless
/// the download was cancelled keeping it; a failure keeps it if
/// ``DownloadOptions/keepsPartialDataOnFailure``; data that cannot be continued (no strong
/// validator) is always removed. A download that never opened the file touches only partial data
/// it meant to continue, and only when it removes it.
///
/// Two locks: `files` serialises the file work (open, writes, close, clean-up: the transport's
/// thread and the queue's), and `control` guards only the end, so that `settle`, which the queue
/// calls under its own lock, never waits for a disk.
final class FileSink: ResponseSink {
    let destination: URL
    let options: DownloadOptions
    let partial: PartialDownload

    private struct Files {
        var plan = ResumePlan.whole
        /// The URL of the latest attempt, before redirects: the record names it.
        var requestURL: URL?
        /// The partial data is this download's to remove: it meant to continue it, or wrote it.
        var adopted = false
        var descriptor: Int32?
        /// Writes to `descriptor` (made once per descriptor; it does not close it).
        var handle: FileHandle?
        var head: ResponseHead?
        var resumedAt: Int64 = 0
        /// The bytes in the data file.
        var size: Int64 = 0
        /// The size the server announced for the whole file, when it did.
        var expectedSize: Int64?
        /// A `416` completed the download: its body is not the file's.
        var discardsBody = false
        /// What a later download needs to continue the data; `nil` when it cannot be continued.
        var record: PartialDownload.Record?
        /// A failure of the sink's own (a write), which stands as the body's end.
        var failure: RequestError?
        /// The request has ended: nothing more is written.
        var released = false
    }

    private struct Control {
        /// The request ended from outside, or failed: the file is not moved into place any more.
        var ended = false
        /// The file is in place.
        var completed: DownloadedFile?
        /// How a cancellation treats the partial data; set by the first ``Download/cancel(keepingPartialData:)``.
        var keepsDataOnCancel: Bool?
    }

    private let files = Locked(Files())
    private let control = Locked(Control())

    init(destination: URL, options: DownloadOptions) {
        self.destination = destination
        self.options = options
        partial = PartialDownload(destination: destination)
    }

    /// Says how the cancellation about to come treats the partial data (the first call counts).
    func prepareCancel(keepingPartialData: Bool) {
        control.withLock { control in
            if control.keepsDataOnCancel == nil { control.keepsDataOnCancel = keepingPartialData }
        }
    }

    // MARK: - ResponseSink

    func willSend(_ urlRequest: inout URLRequest) {
        let plan = ResumePlan.plan(resumePoint: options.resumes ? partial.resumePoint(for: urlRequest.url) : nil,
                                   resumes: options.resumes,
                                   requestHasRange: urlRequest.value(forHTTPHeaderField: "Range") != nil)
        plan.apply(to: &urlRequest)
        let url = urlRequest.url
        files.withLock { files in
            files.plan = plan
            files.requestURL = url
            if case .resume = plan { files.adopted = true }
        }
    }

    func accepts(_ head: ResponseHead) -> Bool {
        files.withLock { $0.plan }.action(for: head) != .reject
    }

    func open(_ head: ResponseHead, resumeTransfer: @escaping @Sendable () -> Void) -> RequestError? {
        files.withLock { files in
            guard !files.released, files.descriptor == nil, !control.withLock({ $0.ended }) else { return .cancelled }
            if let error = checkDestination() { return error }
            let offset: Int64
            switch files.plan.action(for: head) {
            case .reject:
                return .validationFailed(head.httpURLResponse, body: ResponseData(Data()))
            case .unusable(let reason):
                if files.adopted { partial.removeUnlessLocked() }
                files.adopted = false
                return .transportFailed(URLError(.badServerResponse, userInfo: [
                    NSLocalizedDescriptionKey: reason + "; the partial data at \(partial.dataFile.path) was removed, "
                        + "so that downloading again starts over",
                    NSURLErrorFailingURLErrorKey: head.url as Any,
                ]))
            case .writeFromStart:
                offset = 0
            case .append(let start):
                offset = start
            case .complete(let size):
                offset = size
                files.discardsBody = true
            }
            let descriptor: Int32
            switch partial.openLocked() {
            case .success(let opened): descriptor = opened
            case .failure(.locked):
                return fileError(.cannotCreateFile, "another download to \(destination.path) is under way (it holds "
                                 + "\(partial.dataFile.path)); wait for it to end, or download to another destination")
            case .failure(.system(let code)):
                return fileError(.cannotCreateFile, "cannot create \(partial.dataFile.path): \(Self.describe(code)); "
                                 + "check that its directory is writable and has room")
            }
            files.adopted = true
            switch prepare(descriptor, from: offset) {
            case .success(let ready):
                files.descriptor = ready
            case .failure(let error):
                _ = closeFile(descriptor)
                partial.remove()
                return error
            }
            files.head = head
            files.resumedAt = offset
            files.size = offset
            files.expectedSize = Self.expectedSize(of: head, resumedAt: offset, discardsBody: files.discardsBody)
            files.record = record(for: head, plan: files.plan, url: files.requestURL)
            if let record = files.record, partial.write(record) {
                return nil
            }
            files.record = nil
            partial.removeRecord()
            return nil
        }
    }

    func write(_ chunk: Data) -> SinkDemand {
        files.withLock { files in
            if let failure = files.failure { return .fail(failure) }
            guard let descriptor = files.descriptor, !files.released else { return .fail(.cancelled) }
            if files.discardsBody { return .more }
            // FileHandle writes the whole chunk or throws; what reached the file before a failure
            // is read back from the file itself.
            let failedWith: Int32?
            do {
                if files.handle?.fileDescriptor != descriptor {
                    files.handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
                }
                try files.handle!.write(contentsOf: chunk)
                files.size += Int64(chunk.count)
                failedWith = nil
            } catch {
                var info = stat()
                if fstat(descriptor, &info) == 0 { files.size = Int64(info.st_size) }
                failedWith = Self.posixCode(of: error)
            }
            guard let failedWith else { return .more }
            let failure = fileError(.cannotWriteToFile, "cannot write to \(partial.dataFile.path) after \(files.size) bytes: "
                                    + "\(Self.describe(failedWith)); make room on the disk, then download again to resume")
            files.failure = failure
            return .fail(failure)
        }
    }

    func close(_ error: RequestError?) -> AnyResult {
        files.withLock { files -> AnyResult in
            if let failure = files.failure { return .failure(failure) }
            if let error { return .failure(error) }
            guard let descriptor = files.descriptor, let head = files.head, !files.released else { return .failure(.cancelled) }
            if let expected = files.expectedSize, expected != files.size {
                let failure = RequestError.transportFailed(URLError(.networkConnectionLost, userInfo: [
                    NSLocalizedDescriptionKey: "the body ended after \(files.size) bytes of the \(expected) the server announced; "
                        + "download again to resume",
                    NSURLErrorFailingURLErrorKey: head.url as Any,
                ]))
                files.failure = failure
                return .failure(failure)
            }
            // Not forced to the disk (`fsync`), as neither URLSession nor curl's command line do:
            // that cost a 1 GiB download a quarter of its time (Benchmarks/ANALYSIS.md).
            let moved = control.withLock { control -> AnyResult in
                guard !control.ended else { return .failure(.cancelled) }
                guard rename(partial.dataFile.path, destination.path) == 0 else {
                    return .failure(fileError(.cannotMoveFile, "cannot move the download into place at \(destination.path): "
                                              + "\(Self.describe(errno)); the data is kept at \(partial.dataFile.path)"))
                }
                let file = DownloadedFile(url: destination, head: head, size: files.size, resumedAt: files.resumedAt)
                control.completed = file
                return .success(file)
            }
            switch moved {
            case .success:
                partial.removeRecord()
                _ = closeFile(descriptor)
                files.descriptor = nil
            case .failure(let error):
                files.failure = error
            }
            return moved
        }
    }

    func settle(_ result: AnyResult) -> AnyResult {
        control.withLock { control in
            // Once the file is in place, the download has completed, whatever came after.
            if let file = control.completed { return .success(file) }
            if case .failure = result { control.ended = true }
            return result
        }
    }

    func requestEnded(_ result: AnyResult) {
        files.withLock { files in
            guard !files.released else { return }
            files.released = true
            let descriptor = files.descriptor
            files.descriptor = nil
            defer { if let descriptor { _ = closeFile(descriptor) } }
            let (completed, keepsOnCancel) = control.withLock { control in
                control.ended = true
                return (control.completed != nil, control.keepsDataOnCancel ?? false)
            }
            guard !completed else { return }
            let keeps: Bool = if case .failure(.cancelled) = result { keepsOnCancel } else { options.keepsPartialDataOnFailure }
            if descriptor != nil {
                // This download wrote the data and holds its lock.
                if keeps, var record = files.record {
                    record.bytes = files.size
                    if partial.write(record) { return }
                }
                partial.remove()
            } else if files.adopted && !keeps {
                partial.removeUnlessLocked()
            }
        }
    }

    // MARK: - Helpers

    /// Readies a freshly opened data file: empty for a whole body, else exactly `offset` bytes
    /// long (the partial data the plan was made for). Returns the descriptor to write to.
    ///
    /// Data to start over is replaced by a new file rather than truncated: on ext4, closing a
    /// file that was truncated to nothing writes all of it to the disk at once
    /// (`auto_da_alloc`), which cost a 1 GiB download half a second (Benchmarks/ANALYSIS.md).
    private func prepare(_ descriptor: Int32, from offset: Int64) -> Result<Int32, RequestError> {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            return .failure(fileError(.cannotOpenFile, "cannot read \(partial.dataFile.path): \(Self.describe(errno))"))
        }
        if offset == 0 {
            guard info.st_size > 0 else { return .success(descriptor) }
            // The old file's lock is held until the new one is locked, so no other download
            // takes the destination in between.
            _ = unlink(partial.dataFile.path)
            switch partial.openLocked() {
            case .success(let fresh):
                _ = closeFile(descriptor)
                return .success(fresh)
            case .failure(.locked):
                return .failure(fileError(.cannotCreateFile, "another download to \(destination.path) is under way; "
                                          + "wait for it to end, or download to another destination"))
            case .failure(.system(let code)):
                return .failure(fileError(.cannotCreateFile, "cannot create \(partial.dataFile.path): \(Self.describe(code))"))
            }
        }
        guard Int64(info.st_size) == offset else {
            return .failure(fileError(.cannotOpenFile, "the partial data at \(partial.dataFile.path) changed while the request "
                                      + "was on its way (it no longer holds \(offset) bytes) and was removed; download again"))
        }
        guard lseek(descriptor, 0, SEEK_END) >= 0 else {
            return .failure(fileError(.cannotWriteToFile, "cannot append to \(partial.dataFile.path): \(Self.describe(errno))"))
        }
        return .success(descriptor)
    }

    /// Whether the destination can take a file: a file URL in a directory that exists.
    private func checkDestination() -> RequestError? {
        guard destination.isFileURL else {
            return fileError(.cannotCreateFile, "the destination \(destination.absoluteString) is not a file URL; "
                             + "make it with URL(fileURLWithPath:)")
        }
        let directory = destination.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return fileError(.cannotCreateFile, "the directory \(directory.path) does not exist; create it before "
                             + "downloading to \(destination.path)")
        }
        return nil
    }

    /// The record that lets a later download continue this body; `nil` when it cannot be
    /// continued (a requested range, no strong validator, a content-coded body).
    private func record(for head: ResponseHead, plan: ResumePlan, url: URL?) -> PartialDownload.Record? {
        guard let url else { return nil }
        switch plan {
        case .requestedRange:
            return nil
        case .resume(_, let validator):
            // A part comes with its version's validator; the one asked with stands if it has none.
            guard ResumeValidator.isUncoded(head) else { return nil }
            return PartialDownload.Record(url: url.absoluteString, validator: ResumeValidator.of(head) ?? validator)
        case .whole:
            return ResumeValidator.of(head).map { PartialDownload.Record(url: url.absoluteString, validator: $0) }
        }
    }

    /// The file's size when complete, as the head announces it (the `Content-Length` of an
    /// uncoded body after the partial data it continues); `nil` when unknown.
    private static func expectedSize(of head: ResponseHead, resumedAt: Int64, discardsBody: Bool) -> Int64? {
        if discardsBody { return resumedAt }
        guard ResumeValidator.isUncoded(head),
              let length = head.headerFields["Content-Length"].flatMap({ Int64($0.trimmingCharacters(in: .whitespaces)) })
        else { return nil }
        return resumedAt + length
    }

    private func fileError(_ code: URLError.Code, _ message: String) -> RequestError {
        .transportFailed(URLError(code, userInfo: [NSLocalizedDescriptionKey: message, NSURLErrorFailingURLErrorKey: destination]))
    }

    /// The `errno` behind a FileHandle error (EIO when it names none).
    private static func posixCode(of error: any Error) -> Int32 {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return Int32(error.code) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return Int32(underlying.code)
        }
        return EIO
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

// The C function, out of reach of the sink's own `close` inside it.
private func closeFile(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}

