import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A completed download: the file in place at its destination, and how it got there. The result
/// that ``Download/file`` returns and that observers of a ``Download``'s ``Download/id`` get.
///
/// ```swift
/// let download = queue.download(ReportRequest(), to: destination)
/// queue.addObserver(for: download.id) { (result: Result<DownloadedFile, RequestError>) in
///     if case .success(let file) = result {
///         print(file.url.path, file.size, file.resumedAt > 0 ? "resumed" : "whole")
///     }
/// }
/// ```
public struct DownloadedFile: Response {
    /// Where the file is: the destination the download was given.
    public let url: URL
    /// The last response head: `200` for a whole body, `206` for the rest of a resumed one, and
    /// `416` when the partial data already held the whole resource (nothing more was sent).
    public let head: ResponseHead
    /// The file's size in bytes.
    public let size: Int64
    /// Where this transfer started in the file: 0 for a whole download, otherwise the size of the
    /// partial data it continued.
    public let resumedAt: Int64

    /// ``head`` as a Foundation `HTTPURLResponse`, made when first asked for.
    public var response: HTTPURLResponse { head.httpURLResponse }

    /// Creates a value describing a completed download.
    public init(url: URL, head: ResponseHead, size: Int64, resumedAt: Int64) {
        self.url = url
        self.head = head
        self.size = size
        self.resumedAt = resumedAt
    }

    /// Creates a value describing a completed download, from a Foundation response.
    public init(url: URL, response: HTTPURLResponse, size: Int64, resumedAt: Int64) {
        self.init(url: url, head: ResponseHead(response), size: size, resumedAt: resumedAt)
    }

    /// Always throws: a `DownloadedFile` is made only by ``RequestQueue/download(_:to:priority:options:)``,
    /// which writes the body to a file as it arrives. A request whose `ResponseType` is
    /// `DownloadedFile` sent with `add` or `send` has no file, and fails with
    /// ``RequestError/serializationFailed(type:underlying:)`` saying to download it instead.
    public init(body: ResponseData, head: ResponseHead) throws {
        throw RequestError.serializationFailed(type: String(reflecting: DownloadedFile.self), underlying: NotADownload())
    }

    /// Why a buffered response cannot be a `DownloadedFile`.
    private struct NotADownload: Error, CustomStringConvertible {
        var description: String {
            "a DownloadedFile is made only by RequestQueue.download(_:to:), which writes the body to a file; "
                + "send this request with download(_:to:) rather than add or send"
        }
    }
}
