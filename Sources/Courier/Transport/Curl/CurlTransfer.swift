#if os(Linux)
import CourierCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A finished transfer's response as the loop thread has it.
struct CurlResponse: Sendable {
    let head: ParsedHead
    let body: Data
    var negotiated: NegotiatedVersions?
}

/// One request sent through the curl transport: what callers' threads and the loop thread share.
/// Its counters and flags are atomics, so reading progress or cancelling never waits for the loop.
final class CurlTransfer: Sendable {
    /// How the response is handed over.
    enum Delivery: Sendable {
        /// All at once, on the completion queue.
        case buffered(@Sendable (Result<TransportResponse, RequestError>) -> Void)
        /// As it arrives, from the loop thread (the receiver is the queue's own, and quick).
        case streamed(any TransportStreamReceiver)
    }

    let request: TransportRequest
    let delivery: Delivery
    private let completed = Once()
    private let cancelled = Atomic<Bool>(false)
    let bytesSent = Atomic<Int64>(0)
    let bytesReceived = Atomic<Int64>(0)
    let totalBytesToSend = Atomic<Int64>(-1)
    let totalBytesToReceive = Atomic<Int64>(-1)

    init(request: TransportRequest, delivery: Delivery) {
        self.request = request
        self.delivery = delivery
    }

    var progress: TransferProgress {
        TransferProgress(bytesSent: bytesSent.load(ordering: .relaxed), totalBytesToSend: totalBytesToSend.load(ordering: .relaxed),
                         bytesReceived: bytesReceived.load(ordering: .relaxed),
                         totalBytesToReceive: totalBytesToReceive.load(ordering: .relaxed))
    }

    /// Marks it cancelled; true the first time.
    func cancel() -> Bool {
        !cancelled.exchange(true, ordering: .acquiringAndReleasing)
    }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Hands the result over, the first time only, on this thread (the loop's): a buffered one
    /// as a hand-over (`TransportHandOver`: the queue finishes it here or moves it to its work
    /// queue), completed once the other transfers of the loop's pass are made into responses;
    /// a streamed one's end (its head and body went before) at once.
    func complete(_ result: Result<CurlResponse, RequestError>) {
        guard completed.take() else { return }
        switch delivery {
        case .buffered(let completion):
            let response = result.flatMap { Self.response($0, url: request.urlRequest.url) }
            TransportHandOver.run { TransportHandOver.complete(response, with: completion) }
        case .streamed(let receiver):
            if case .failure(let error) = result { return receiver.transportDidComplete(error) }
            receiver.transportDidComplete(nil)
        }
    }

    static func response(_ response: CurlResponse, url: URL?) -> Result<TransportResponse, RequestError> {
        guard let url else {
            // Cannot happen: libcurl sent the request to this URL.
            return .failure(.transportFailed(URLError(.badURL, userInfo: [NSLocalizedDescriptionKey: "the request has no URL"])))
        }
        var transportResponse = TransportResponse(head: head(of: response.head, url: url), body: response.body)
        transportResponse.negotiated = response.negotiated
        return .success(transportResponse)
    }

    /// The head as the server sent it (its fields in order, names as spelled, repeated names
    /// kept); no `HTTPURLResponse` is made unless user code asks for one.
    static func head(of parsed: ParsedHead, url: URL) -> ResponseHead {
        ResponseHead(status: parsed.status, headerFields: HTTPFields(parsed.fields), url: url)
    }
}

/// A transfer's state on the loop thread while libcurl runs it: the response head being parsed,
/// the body so far, the request body being read, and why a callback stopped the transfer.
final class CurlExchange {
    let transfer: CurlTransfer
    private let options: CurlOptions
    // Unchecked: only the loop thread touches these, from one libcurl callback at a time, which
    // never runs inside another; the runtime's check would cost two calls and a thread-local
    // lookup at every access, twice per header line.
    @exclusivity(unchecked) private var parser = ResponseHeadParser()
    @exclusivity(unchecked) private var body = Data()
    @exclusivity(unchecked) private var reader: CurlBodyReader
    /// Why a callback stopped the transfer, which is the real error rather than libcurl's.
    @exclusivity(unchecked) private var failure: RequestError?
    /// A streamed transfer's receiver asked for a pause: the next bytes are left with libcurl.
    @exclusivity(unchecked) private var pausedByReceiver = false
    /// The easy handle running it (set by `CurlEasy.prepare`), for `bodyCoding(of:)`.
    weak var easy: CurlEasy?
    /// The TLS version of the connection the last head arrived on, read while the transfer held it.
    @exclusivity(unchecked) private var tlsVersion: TLSVersion?

    /// What the write callback tells libcurl.
    enum BodyStep {
        case taken, pause, stop
    }

    init(transfer: CurlTransfer, options: CurlOptions, reader: CurlBodyReader) {
        self.transfer = transfer
        self.options = options
        self.reader = reader
    }

    /// Whether the request is all sent (to libcurl) and its response head has not come: what the
    /// loop waits awake for with one transfer running, where a body arriving or being sent is not.
    var awaitsResponseHead: Bool {
        reader.isRead && !parser.isComplete
    }

    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        let wasComplete = parser.isComplete
        do throws(ResponseHeadParser.Failure) {
            try parser.consume(line)
        } catch {
            return stop(.transportFailed(URLError(.badServerResponse, userInfo: [
                NSLocalizedDescriptionKey: error.reason, NSURLErrorFailingURLErrorKey: transfer.request.urlRequest.url as Any,
            ])))
        }
        guard !wasComplete, parser.isComplete, let head = parser.head else { return true }
        tlsVersion = easy?.connectionTLSVersion
        let length = head.lastValue(of: "Content-Length").flatMap { Int64($0) }
        let countable: Bool
        switch bodyCoding(of: head) { case .success(let asSent): countable = asSent; case .failure(let error): return stop(error) }
        if let length, countable {
            transfer.totalBytesToReceive.store(length, ordering: .relaxed)
            // The limit is a buffered body's; a stream's consumer bounds memory by pausing.
            if case .buffered = transfer.delivery, let limit = options.maximumResponseSize, length > Int64(limit) {
                return stop(.responseTooLarge(limit: limit))
            }
        }
        options.cookies?.store(head.values(of: "Set-Cookie"), from: transfer.request.urlRequest)
        if case .streamed(let receiver) = transfer.delivery, let url = transfer.request.urlRequest.url {
            // The receiver must have the head before the first chunk.
            receiver.transportDidReceive(CurlTransfer.head(of: head, url: url))
        }
        return true
    }

    func receiveBody(_ chunk: UnsafeRawBufferPointer) -> BodyStep {
        switch transfer.delivery {
        case .buffered:
            // Counted decoded, so a compression bomb stops at the limit like any other body.
            if let limit = options.maximumResponseSize, body.count + chunk.count > limit {
                _ = stop(.responseTooLarge(limit: limit))
                return .stop
            }
            body.append(contentsOf: chunk)
        case .streamed(let receiver):
            // Streams have no size limit: their consumer bounds memory by pausing.
            if pausedByReceiver { return .pause }
            if receiver.transportDidReceive(Data(chunk)) == .pause { pausedByReceiver = true }
        }
        transfer.bytesReceived.add(Int64(chunk.count), ordering: .relaxed)
        return .taken
    }

    /// The receiver wants more: true when the transfer was paused and must be unpaused.
    func resumeDelivery() -> Bool {
        defer { pausedByReceiver = false }
        return pausedByReceiver
    }

    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard let count = reader.read(into: buffer) else {
            _ = stop(.transportFailed(URLError(.cannotOpenFile, userInfo: [
                NSLocalizedDescriptionKey: "the request body could not be read\(reader.failureDescription)",
            ])))
            return nil
        }
        transfer.bytesSent.add(Int64(count), ordering: .relaxed)
        return count
    }

    /// Rewinds the request body to `offset`, for libcurl to send it again.
    func rewindBody(to offset: Int64) -> Bool {
        guard reader.seek(to: offset) else { return false }
        transfer.bytesSent.store(offset, ordering: .relaxed)
        return true
    }

    private func stop(_ error: RequestError) -> Bool {
        failure = failure ?? error
        return false
    }

    /// The transfer's result, once libcurl finished it with `code`.
    func result(code: Int32, easy: CurlEasy) -> Result<CurlResponse, RequestError> {
        reader.close()
        if let failure { return .failure(failure) }
        let url = transfer.request.urlRequest.url
        guard code == 0 else {
            if parser.head == nil, code == Int32(COURIER_CURLE_OUT_OF_MEMORY) {
                // libcurl refuses a header line over 100 KB this way, before Courier sees it.
                return .failure(.transportFailed(URLError(.badServerResponse, userInfo: [
                    NSLocalizedDescriptionKey: "the server sent a header line larger than libcurl accepts (100 KB)",
                    NSURLErrorFailingURLErrorKey: url as Any,
                ])))
            }
            if let url, let failure = options.tls.failure(code: code, message: easy.errorMessage ?? "", url: url,
                                                          presentedKey: easy.presentedPublicKey) {
                return .failure(failure)
            }
            return .failure(CurlErrors.error(code: code, message: easy.errorMessage, url: url))
        }
        guard let head = parser.head else {
            return .failure(.transportFailed(URLError(.badServerResponse, userInfo: [
                NSLocalizedDescriptionKey: "the server's response ended before its head was complete",
                NSURLErrorFailingURLErrorKey: url as Any,
            ])))
        }
        return .success(CurlResponse(head: head, body: body, negotiated: NegotiatedVersions(http: easy.httpVersion, tls: tlsVersion)))
    }

    /// Ends an exchange that never finished (cancelled, or its transport went away).
    func close() {
        reader.close()
    }
}
#endif
