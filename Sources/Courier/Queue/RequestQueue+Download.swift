import Foundation

extension RequestQueue {
    /// Sends a request and writes its response body to a file, resuming what an earlier download
    /// to the same destination left.
    ///
    /// ```swift
    /// let download = queue.download(ImageRequest(id: 7), to: URL(fileURLWithPath: "/tmp/7.jpg"))
    /// let file = try await download.file
    /// print(file.size, file.resumedAt)
    /// ```
    /// The request waits for a slot, runs its delegates, follows redirects, refreshes
    /// credentials and is retried as any request until its response head is accepted (a 2xx
    /// status, or a `416` saying the partial data is already whole); see ``Download`` for what
    /// happens after. The request's `ResponseType` is not used: observers of the download's
    /// ``Download/id`` get a ``DownloadedFile``. Bodies are not limited by
    /// ``RequestQueueConfiguration/maximumResponseSize``.
    ///
    /// The request is sent with `Accept-Encoding: identity` unless it sets that header itself, so
    /// that the file holds the resource's bytes as the server stores them and a resume can
    /// continue at a byte offset. With partial data to continue it also carries `Range` and
    /// `If-Range`; a request that sets `Range` itself gets what it asked for and is never resumed.
    /// - Parameters:
    ///   - request: The request.
    ///   - destination: A file URL in a directory that exists; a file there is replaced once the
    ///     download completes.
    ///   - priority: Its place among waiting requests. Default: `.normal`.
    ///   - options: Resuming and partial data. Default: ``DownloadOptions/init()`` (resume, keep
    ///     partial data on failure).
    public func download<R: Request>(_ request: R, to destination: URL, priority: RequestPriority = .normal,
                                     options: DownloadOptions = DownloadOptions()) -> Download {
        let sink = FileSink(destination: destination, options: options)
        let outcome = AwaitedResult()
        let box = StreamBox(request: request, sink: sink, outcome: DownloadedFile.self)
        // Started on the calling thread when it may start at once, as `stream` and `send` do.
        let (id, mustStart) = enqueue(box: box, priority: priority, owner: nil, completion: { result in
            sink.requestEnded(result)
            outcome.resolve(result)
        }, startsHere: true)
        let download = Download(id: id, destination: destination, sink: sink, outcome: outcome, queue: self)
        if mustStart { runClaimedStartLoopHere() }
        return download
    }
}
