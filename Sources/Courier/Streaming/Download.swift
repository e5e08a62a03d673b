import Foundation

/// A response body on its way to a file. Made by ``RequestQueue/download(_:to:priority:options:)``.
///
/// ```swift
/// let destination = URL(fileURLWithPath: "/var/cache/app/catalog.zip")
/// let download = queue.download(CatalogRequest(), to: destination)
/// queue.addProgressObserver(for: download.id) { progress in
///     print(progress.bytesReceived, "of", progress.totalBytesToReceive)
/// }
/// let file = try await download.file   // in place at `destination`
/// ```
///
/// The body goes to a hidden file next to the destination (`.<name>.courier-partial`) as it
/// arrives, so memory stays bounded whatever its size; only a complete body is moved onto the
/// destination, atomically, replacing any file there. Like URLSession's and curl's, the file is
/// not forced to the disk before it is moved (that would cost a large download a quarter of its
/// time), so a power cut soon after may leave it incomplete. A download that fails keeps its partial
/// data (see ``DownloadOptions``), and a later download of the same URL to the same destination
/// asks for the rest only (`Range`, with `If-Range` so that a resource that changed meanwhile
/// comes whole).
///
/// The request goes through the queue like any other until its response head is accepted: it
/// waits for a slot, delegates see it, redirects, credential refreshes, retries and its timeout
/// apply. From then on the body is the file's: no timeout, no retry (a download continues where
/// it stopped when started again), and ``RequestQueueConfiguration/maximumResponseSize`` does not apply.
///
/// The download goes on whether or not this object is kept: its observers get its result either way.
public final class Download: Sendable {
    /// The request's ID, for ``RequestQueue/addObserver(for:handler:)`` (with a
    /// `Result<DownloadedFile, RequestError>`), ``RequestQueue/addProgressObserver(for:interval:handler:)``
    /// and ``RequestQueue/cancel(_:)``.
    public let id: RequestID
    /// Where the file goes once complete.
    public let destination: URL

    private let sink: FileSink
    private let outcome: AwaitedResult
    private let queue: WeakRequestQueue

    init(id: RequestID, destination: URL, sink: FileSink, outcome: AwaitedResult, queue: RequestQueue) {
        self.id = id
        self.destination = destination
        self.sink = sink
        self.outcome = outcome
        self.queue = WeakRequestQueue(queue)
    }

    /// The file, once the download has ended and it is in place at ``destination``.
    ///
    /// Throws how the download failed otherwise: a failure on the wire, a status the download
    /// does not take (``RequestError/validationFailed(_:body:)``), a file that cannot be written
    /// (``RequestError/transportFailed(_:)`` with `.cannotCreateFile` or `.cannotWriteToFile`,
    /// its description saying which path), ``RequestError/cancelled``.
    ///
    /// Waiting is all it does: cancelling the waiting task does not cancel the download, nor end
    /// the wait early (like `Task.value`); ``cancel()`` does both.
    public var file: DownloadedFile {
        get async throws(RequestError) {
            try await outcome.value().typed(as: DownloadedFile.self).get()
        }
    }

    /// Stops the download; it ends with ``RequestError/cancelled`` and its partial data is
    /// removed (what it wrote, or what it was sent to continue; a download cancelled before it was
    /// sent leaves the destination's files alone). The same as ``RequestQueue/cancel(_:)`` with
    /// ``id``, and as ``RequestQueue/cancelAll()``. Does nothing once it has ended.
    public func cancel() {
        cancel(keepingPartialData: false)
    }

    /// Stops the download; it ends with ``RequestError/cancelled``. With `keepingPartialData`, the
    /// bytes received so far stay next to the destination, and a later download of the same URL
    /// to the same destination continues them (if the server gave a strong validator for them; see
    /// ``DownloadOptions/keepsPartialDataOnFailure``). Does nothing once it has ended.
    public func cancel(keepingPartialData: Bool) {
        sink.prepareCancel(keepingPartialData: keepingPartialData)
        queue.queue?.cancel(id)
    }
}
