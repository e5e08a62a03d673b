import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Progress and queue lifetime against real servers.
final class FeaturesIntegrationTests: XCTestCase {
    func testUploadAndDownloadProgressReachTheTotals() throws {
        // Given a 32 MiB multipart upload to the sink
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-progress-\(UUID()).bin")
        try Data(repeating: 0x5A, count: 32 * 1024 * 1024).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let form = MultipartFormData()
        form.append(fileURL: file, withName: "blob", fileName: "blob.bin")
        let total = try form.contentLength
        let queue = try HTTPBin.queue()
        let reports = Recorder<TransferProgress>()
        let done = expectation(description: "upload")

        // When its progress is observed
        let id = queue.add(BodyRequest<MultipartFormData, EchoObject>(parameters: form, path: try HTTPBin.uploadSink().absoluteString + "/up"))
        queue.addProgressObserver(for: id, interval: 0.01) { reports.append($0) }
        queue.addObserver(for: id) { (_: Result<EchoObject, RequestError>) in done.fulfill() }
        wait(for: [done], timeout: 60)

        // Then reports never go backwards, and the last one, before the result, is the whole body
        let sent = reports.all.map(\.bytesSent)
        XCTAssertFalse(sent.isEmpty)
        XCTAssertEqual(sent, sent.sorted())
        XCTAssertEqual(reports.all.last?.bytesSent, total)
        XCTAssertEqual(reports.all.last?.fractionSent, 1)
        print("upload progress reports: \(reports.count)")
    }

    func testReleasedQueueWithARealSessionCancelsAndIsDeallocated() throws {
        // Given a real queue with a request in flight to /delay/10
        let sent = DispatchSemaphore(value: 0)
        _ = try HTTPBin.url()   // skips (or fails under Scripts/test.sh) before any expectation exists
        let deallocated = expectation(description: "queue deallocated")
        var queue: RequestQueue? = try HTTPBin.queue(delegate: LifetimeDelegate(sent: sent) { deallocated.fulfill() })
        weak let weakQueue = queue
        let cancelled = expectation(description: "cancelled")
        let id = queue!.add(PathRequest<EmptyResponse>("/delay/10"))
        queue!.addObserver(for: id) { (result: Result<EmptyResponse, RequestError>) in
            if case .failure(.cancelled) = result { cancelled.fulfill() }
        }
        XCTAssertEqual(sent.wait(timeout: .now() + 60), .success)

        // When the last reference goes
        let releasedAt = ContinuousClock.now
        queue = nil

        // Then its URLSession (which holds its delegate) does not keep it alive, and the request
        // ends at once, not when the server answers: the bound lies between milliseconds and the
        // answer up to 10 s after the send, far from both
        wait(for: [deallocated, cancelled], timeout: 60)
        XCTAssertNil(weakQueue)
        XCTAssertLessThan(ContinuousClock.now - releasedAt, .seconds(5))
    }
}

private final class LifetimeDelegate: RequestQueueDelegate {
    let sent: DispatchSemaphore
    let onDeinit: @Sendable () -> Void
    init(sent: DispatchSemaphore, onDeinit: @escaping @Sendable () -> Void) {
        self.sent = sent
        self.onDeinit = onDeinit
    }
    deinit { onDeinit() }
    func requestQueue(_ queue: RequestQueue, didSend request: URLRequest) { sent.signal() }
}
