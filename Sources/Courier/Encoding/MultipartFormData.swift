import Foundation

/// A `multipart/form-data` body (RFC 7578): files, data and text fields, as an HTML form uploads them.
///
/// ```swift
/// let form = MultipartFormData()
/// form.append(fileURL: videoURL, withName: "video", fileName: "clip.mp4", mimeType: "video/mp4")
/// form.append(data: thumbnail, withName: "thumb", fileName: "t.png", mimeType: "image/png")
/// form.append(value: "Holiday", withName: "title")
/// ```
/// Files are not read when appended: Courier streams them from disk when the request is sent,
/// so memory stays bounded whatever their size. A form with files whose body reaches
/// ``streamingThreshold`` is written to a temporary file first, in chunks, and sent from there.
///
/// Names and file names may hold any Unicode text and are sent as UTF-8; `"`, CR and LF are
/// written `%22`, `%0D` and `%0A` as browsers do (WHATWG HTML), so a name cannot end its header
/// early or forge a part. The form is safe to fill from several threads; parts keep their append order.
public final class MultipartFormData: BodyData, StreamableBodyData, Sendable {
    /// Bodies with files from this size (1 MiB) on are written to a temporary file instead of memory.
    public static let streamingThreshold: Int64 = 1 << 20

    /// The size of the chunks files are copied in (256 KiB), which bounds the memory a copy uses.
    static let chunkSize = 256 * 1024

    /// The boundary between parts: `courier-` and 32 random hexadecimal digits (128 bits),
    /// so it cannot plausibly occur in a file.
    public let boundary: String

    private let parts = Locked<[MultipartPart]>([])

    /// Creates an empty form with a random boundary.
    public convenience init() {
        var generator = SystemRandomNumberGenerator()
        let hex = (0..<16).flatMap { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return [lowercaseHexDigit(byte >> 4), lowercaseHexDigit(byte)]
        }
        self.init(boundary: "courier-" + String(decoding: hex, as: UTF8.self))
    }

    /// Creates an empty form with a fixed boundary, for tests.
    init(boundary: String) {
        self.boundary = boundary
    }

    /// `multipart/form-data; boundary=<boundary>`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    // MARK: Appending

    /// Appends a file part whose content is streamed from `fileURL` when the request is sent.
    ///
    /// - Parameters:
    ///   - fileURL: The file whose content is the part's; it is read only when the body is built.
    ///   - name: The form field's name.
    ///   - fileName: The file name the server sees. Defaults to `fileURL`'s last path component.
    ///   - mimeType: The part's `Content-Type`. Defaults to a guess from the file name's
    ///     extension (`png`, `jpg`, `pdf`, `mp4`, …), else `application/octet-stream`.
    ///
    /// The file is checked when the body is built: a missing, unreadable or directory URL then throws
    /// ``RequestError/invalidParameters(keyPath:reason:)`` with `name` as the key path.
    public func append(fileURL: URL, withName name: String, fileName: String? = nil, mimeType: String? = nil) {
        let fileName = fileName ?? fileURL.lastPathComponent
        append(MultipartPart(name: name, fileName: fileName, contentType: mimeType ?? MIMEType.guess(forFileName: fileName),
                             content: .file(fileURL), boundary: boundary))
    }

    /// Appends a part whose content is `data`.
    ///
    /// - Parameters:
    ///   - data: The part's content.
    ///   - name: The form field's name.
    ///   - fileName: The file name the server sees. Defaults to none (no `filename` parameter).
    ///   - mimeType: The part's `Content-Type`. Defaults to a guess from `fileName`'s extension,
    ///     else `application/octet-stream`.
    public func append(data: Data, withName name: String, fileName: String? = nil, mimeType: String? = nil) {
        let contentType = mimeType ?? fileName.map(MIMEType.guess(forFileName:)) ?? MIMEType.fallback
        append(MultipartPart(name: name, fileName: fileName, contentType: contentType, content: .data(data), boundary: boundary))
    }

    /// Appends a text field. Its content is `value`'s UTF-8 bytes, with no `Content-Type` header (text, as browsers send it).
    public func append(value: String, withName name: String) {
        append(MultipartPart(name: name, fileName: nil, contentType: nil, content: .data(Data(value.utf8)), boundary: boundary))
    }

    /// Appends the stored properties of `parameters` as text fields, named as in a query string
    /// but unescaped: `user[name]`, `user[tags][]`, … (see ``ParameterEncodingOptions``; the type's
    /// ``Serializable/encodingOptions`` apply).
    ///
    /// - Parameters:
    ///   - parameters: The value whose stored properties become fields.
    ///   - name: Prefixes every field name: with `"user"`, property `name` becomes `user[name]`.
    ///     Defaults to none: the properties are top-level fields.
    /// - Throws: ``RequestError/invalidParameters(keyPath:reason:)`` for a value that cannot be encoded;
    ///   nothing is appended then.
    public func append<Value: Serializable>(parameters: Value, withName name: String? = nil) throws {
        let fields = try encodeFormFields(parameters, withName: name, options: Value.encodingOptions)
        let newParts = fields.map {
            MultipartPart(name: $0.name, fileName: nil, contentType: nil, content: .data(Data($0.value.utf8)), boundary: boundary)
        }
        parts.withLock { $0.append(contentsOf: newParts) }
    }

    private func append(_ part: MultipartPart) {
        parts.withLock { $0.append(part) }
    }

    // MARK: Body

    /// The body's size in bytes, computed from the files' sizes without reading them.
    /// Throws ``RequestError/invalidParameters(keyPath:reason:)`` for a file that cannot be read.
    public var contentLength: Int64 {
        get throws { try MultipartBody(parts: parts.withLock { $0 }, boundary: boundary).contentLength }
    }

    /// The whole body in memory, files included: use it for small forms only. Courier itself
    /// sends forms through the queue's streaming path, which streams large ones from disk.
    /// Throws ``RequestError/invalidParameters(keyPath:reason:)`` for a file that cannot be read.
    public func encode() throws -> Data {
        try MultipartBody(parts: parts.withLock { $0 }, boundary: boundary).data()
    }

    /// The body in memory when it has no files or is smaller than ``streamingThreshold``;
    /// otherwise written to a temporary file that the caller removes once the request ends.
    /// Every file is checked before any byte is written.
    func makeBodySource() throws -> RequestBodySource {
        let body = try MultipartBody(parts: parts.withLock { $0 }, boundary: boundary)
        guard body.hasFiles, body.contentLength >= Self.streamingThreshold else {
            return .data(try body.data())
        }
        return .file(try body.writeToTemporaryFile(chunkSize: Self.chunkSize), isTemporary: true)
    }
}
