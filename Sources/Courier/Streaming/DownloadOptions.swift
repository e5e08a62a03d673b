/// How a download treats partial data: whether it continues what an earlier download to the
/// same destination left, and whether it leaves its own behind when it fails.
///
/// ```swift
/// var options = DownloadOptions()
/// options.keepsPartialDataOnFailure = false   // a failed download leaves nothing behind
/// let download = queue.download(ISORequest(), to: destination, options: options)
/// ```
public struct DownloadOptions: Sendable, Hashable {
    /// Whether a download continues the partial data left at its destination by an earlier
    /// download of the same URL that failed or was cancelled with
    /// ``Download/cancel(keepingPartialData:)``: it asks for the rest with `Range`, and with
    /// `If-Range` so that a resource that changed meanwhile comes whole. Default: `true`.
    /// With `false` the download starts over, replacing any partial data.
    public var resumes: Bool = true

    /// Whether a download that fails (the connection drops, the disk fills, the server answers
    /// 503) keeps its partial data, what it wrote or what it was continuing, so that a later
    /// download to the same destination continues it. Default: `true`; with `false` a failed
    /// download leaves nothing behind.
    ///
    /// Partial data is kept only when it can be continued: the server gave a strong validator
    /// (an entity tag, or a `Last-Modified` date a minute older than the response's `Date`), sent
    /// the body without a content coding, and the request did not ask for a range of its own;
    /// otherwise it is removed. A cancelled download removes its partial data unless cancelled
    /// with ``Download/cancel(keepingPartialData:)``.
    public var keepsPartialDataOnFailure: Bool = true

    /// Default options: resume, and keep partial data on failure.
    public init() {}

    /// Options with the given values.
    /// - Parameters:
    ///   - resumes: Continue partial data left at the destination. Default: `true`.
    ///   - keepsPartialDataOnFailure: Keep this download's partial data if it fails. Default: `true`.
    public init(resumes: Bool = true, keepsPartialDataOnFailure: Bool = true) {
        self.resumes = resumes
        self.keepsPartialDataOnFailure = keepsPartialDataOnFailure
    }
}
