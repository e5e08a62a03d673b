#if os(Linux)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The network transport on Linux: libcurl's multi interface driven from one thread of its own
/// (see `CurlLoop`), with easy handles and connections reused from request to request.
///
/// It honours every ``TransportSettings`` value (see `CurlOptions` for the session configuration's)
/// but `completionQueue`: it calls completions on its loop thread, as hand-overs
/// (`TransportHandOver`), which the queue finishes there or moves to its work queue.
/// A buffered body over `maximumResponseSize` stops the transfer as it arrives, counted after
/// decoding; a streamed one pauses while its receiver asks it to.
final class CurlTransport: Transport {
    private let loop: CurlLoop

    /// A transport, or why libcurl cannot be used here.
    static func make(settings: TransportSettings) -> Result<CurlTransport, CurlUnavailable> {
        CurlLibrary.availability.map { version in
            CurlTransport(options: CurlOptions(settings: settings, curlVersion: version))
        }
    }

    private init(options: CurlOptions) {
        loop = CurlLoop(options: options)
    }

    func makeTask(for request: TransportRequest,
                  completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) -> any TransportTask {
        CurlTask(transfer: CurlTransfer(request: request, delivery: .buffered(completion)), loop: loop)
    }

    /// Streams the body from the loop thread as libcurl decodes it; a receiver's pause leaves
    /// further bytes with libcurl (`CURL_WRITEFUNC_PAUSE`), so a paused stream holds at most one
    /// more chunk (up to 128 KiB, its receive buffer, more when libcurl decompresses) until `resumeDelivery`.
    func makeStreamingTask(for request: TransportRequest, receiver: any TransportStreamReceiver) -> any TransportTask {
        CurlTask(transfer: CurlTransfer(request: request, delivery: .streamed(receiver)), loop: loop)
    }

    func invalidate() {
        loop.stop()
    }
}

private struct CurlTask: TransportTask {
    let transfer: CurlTransfer
    let loop: CurlLoop

    func resume() {
        if !loop.submit(.start(transfer)) { transfer.complete(.failure(.cancelled)) }
    }

    func cancel() {
        guard transfer.cancel() else { return }
        _ = loop.submit(.cancel(transfer))
    }

    var progress: TransferProgress { transfer.progress }

    func resumeDelivery() {
        _ = loop.submit(.resumeDelivery(transfer))
    }
}
#endif
