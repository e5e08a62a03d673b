import Foundation

/// A snapshot of a form's parts with every file checked, ready to be written to memory or disk.
///
/// Each part is `head`, content, CRLF; the body ends with `--boundary--` and CRLF.
struct MultipartBody {
    private let parts: [MultipartPart]
    /// The size of each part's file, measured when checked (nil for data parts).
    private let fileSizes: [Int64?]
    private let closing: Data
    let contentLength: Int64

    var hasFiles: Bool { fileSizes.contains { $0 != nil } }

    /// Checks every file part, so that a bad file fails before any byte is written.
    init(parts: [MultipartPart], boundary: String) throws {
        self.parts = parts
        closing = Data("--\(boundary)--\r\n".utf8)
        var sizes: [Int64?] = []
        var length = Int64(closing.count)
        for part in parts {
            let size: Int64
            switch part.content {
            case .data(let data):
                size = Int64(data.count)
                sizes.append(nil)
            case .file(let url):
                size = try Self.checkedSize(of: url, name: part.name)
                sizes.append(size)
            }
            length += Int64(part.head.count) + size + 2
        }
        fileSizes = sizes
        contentLength = length
    }

    private static func checkedSize(of url: URL, name: String) throws -> Int64 {
        guard url.isFileURL else {
            throw RequestError.invalidParameters(keyPath: name, reason: "\(url.absoluteString) is not a file URL")
        }
        let path = url.path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            throw RequestError.invalidParameters(keyPath: name, reason: "no file at \(path)")
        }
        guard attributes[.type] as? FileAttributeType != .typeDirectory else {
            throw RequestError.invalidParameters(keyPath: name, reason: "\(path) is a directory, not a file")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw RequestError.invalidParameters(keyPath: name, reason: "\(path) cannot be read")
        }
        guard let size = (attributes[.size] as? NSNumber)?.int64Value else {
            throw RequestError.invalidParameters(keyPath: name, reason: "the size of \(path) is unknown")
        }
        return size
    }

    /// The whole body in memory.
    func data() throws -> Data {
        var body = Data()
        body.reserveCapacity(Int(clamping: contentLength))
        try write(to: { body.append($0) })
        return body
    }

    /// Writes the body to a new file in the temporary directory, copying files in chunks of
    /// `chunkSize`; the file is removed again if writing fails.
    func writeToTemporaryFile(chunkSize: Int) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-multipart-\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw RequestError.invalidParameters(keyPath: "", reason: "could not create the temporary file \(url.path) for the multipart body")
        }
        do {
            let output = try FileHandle(forWritingTo: url)
            defer { try? output.close() }
            try write(chunkSize: chunkSize, to: { try output.write(contentsOf: $0) }, copyingFiles: { input, size in
                try Self.kernelCopy(from: input, to: output, count: size)
            })
        } catch {
            try? FileManager.default.removeItem(at: url)
            if error is RequestError { throw error }
            throw RequestError.invalidParameters(keyPath: "", reason: "could not write the multipart body to \(url.path): \(error)")
        }
        return url
    }

    /// Produces the body's bytes in order, files in chunks of at most `chunkSize` bytes.
    /// `copyingFiles`, when given, copies some of a file straight to the output first (it returns
    /// how many bytes it copied); the chunked copy does the rest.
    private func write(chunkSize: Int = MultipartFormData.chunkSize, to sink: (Data) throws -> Void,
                       copyingFiles: ((FileHandle, Int64) throws -> Int64)? = nil) throws {
        for (part, fileSize) in zip(parts, fileSizes) {
            try sink(part.head)
            switch part.content {
            case .data(let data):
                try sink(data)
            case .file(let url):
                try copy(url, size: fileSize ?? 0, name: part.name, chunkSize: chunkSize, to: sink, copyingFirst: copyingFiles)
            }
            try sink(Data("\r\n".utf8))
        }
        try sink(closing)
    }

    /// Copies up to `count` bytes from `input` to `output` inside the kernel (Linux `sendfile`),
    /// without passing them through user memory: about twice as fast as a read/write loop for
    /// large uploads. Returns the bytes copied; 0 where the kernel cannot do it, so that the
    /// chunked copy takes over.
    static func kernelCopy(from input: FileHandle, to output: FileHandle, count: Int64) throws -> Int64 {
        #if canImport(Glibc)
        var copied: Int64 = 0
        while copied < count {
            let step = sendfile(output.fileDescriptor, input.fileDescriptor, nil, Int(min(count - copied, 1 << 30)))
            if step > 0 {
                copied += Int64(step)
            } else if step == 0 {
                break  // the file ended early; the chunked copy reports it
            } else if errno == EINTR {
                continue
            } else if copied == 0, [EINVAL, ENOSYS, EOPNOTSUPP].contains(errno) {
                return 0
            } else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
        return copied
        #else
        return 0
        #endif
    }

    /// Copies exactly the `size` bytes measured when the file was checked, so the body
    /// matches ``contentLength`` even if the file grows meanwhile.
    private func copy(_ url: URL, size: Int64, name: String, chunkSize: Int, to sink: (Data) throws -> Void,
                      copyingFirst: ((FileHandle, Int64) throws -> Int64)?) throws {
        let input: FileHandle
        do {
            input = try FileHandle(forReadingFrom: url)
        } catch {
            throw RequestError.invalidParameters(keyPath: name, reason: "\(url.path) cannot be read: \(error)")
        }
        defer { try? input.close() }
        var remaining = size
        if let copyingFirst {
            do {
                remaining -= try copyingFirst(input, size)
            } catch {
                throw RequestError.invalidParameters(keyPath: name, reason: "\(url.path) cannot be copied: \(error)")
            }
        }
        while remaining > 0 {
            let chunk = try readChunk(input, count: Int(min(Int64(chunkSize), remaining)), url: url, name: name)
            guard !chunk.isEmpty else {
                throw RequestError.invalidParameters(keyPath: name, reason: "\(url.path) became shorter while it was read")
            }
            try sink(chunk)
            remaining -= Int64(chunk.count)
        }
    }

    private func readChunk(_ input: FileHandle, count: Int, url: URL, name: String) throws -> Data {
        do {
            #if canImport(ObjectiveC)
            // Foundation may autorelease the chunk; drain it now to keep memory bounded.
            return try autoreleasepool { try input.read(upToCount: count) ?? Data() }
            #else
            return try input.read(upToCount: count) ?? Data()
            #endif
        } catch {
            throw RequestError.invalidParameters(keyPath: name, reason: "\(url.path) cannot be read: \(error)")
        }
    }
}
