import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Downloads against real servers (httpbin; nginx serving static files, slowly when a test must
/// interrupt one), through the run's network transport (Scripts/test.sh runs this with curl and
/// with URLSession).
final class DownloadIntegrationTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-downloads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private var destination: URL { folder.appendingPathComponent("file.bin") }

    private func folderContents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    // MARK: - Whole downloads

    func testTheFileIsByteIdenticalToABufferedFetch() async throws {
        // Given httpbin's seeded random bytes, the same for the same seed
        let queue = try HTTPBin.queue()
        let path = "/bytes/102400?seed=7"

        // When they are downloaded, and fetched whole
        let file = try await queue.download(PathRequest<EmptyResponse>(path), to: destination).file
        let whole = try await queue.send(PathRequest<RawBody>(path))

        // Then the file has every byte, and nothing else is left in its folder
        XCTAssertEqual(whole.data.count, 102_400)
        XCTAssertEqual(try Data(contentsOf: destination), whole.data)
        XCTAssertEqual(file.size, 102_400)
        XCTAssertEqual(file.resumedAt, 0)
        XCTAssertEqual(file.response.statusCode, 200)
        XCTAssertEqual(try folderContents(), ["file.bin"])
    }

    func testDownloadsAreNotLimitedByTheMaximumResponseSize() async throws {
        // Given a queue that refuses bodies over 1 KiB
        let queue = try HTTPBin.queue { $0.maximumResponseSize = 1024 }
        let path = "/bytes/102400?seed=3"

        // When 100 KiB are downloaded
        let file = try await queue.download(PathRequest<EmptyResponse>(path), to: destination).file

        // Then the file has them all, while a buffered fetch of the same is refused
        XCTAssertEqual(file.size, 102_400)
        do {
            _ = try await queue.send(PathRequest<RawBody>(path))
            XCTFail("the limit did not apply to a buffered fetch")
        } catch .responseTooLarge(let limit) {
            XCTAssertEqual(limit, 1024)
        }
    }

    func testProgressObserversFollowADownloadToItsLastByteBeforeItsResult() async throws {
        // Given a download that takes a second, observed for progress and for its result
        let queue = try HTTPBin.queue()
        let download = queue.download(PathRequest<EmptyResponse>("/range/102400?chunk_size=4096&duration=1"), to: destination)
        let events = Recorder<String>()
        let ended = expectation(description: "result")
        queue.addProgressObserver(for: download.id, interval: 0) { events.append("progress \($0.bytesReceived)") }
        queue.addObserver(for: download.id) { (result: Result<DownloadedFile, RequestError>) in
            events.append("result \((try? result.get().size) ?? -1)")
            ended.fulfill()
        }

        // When it completes
        await fulfillment(of: [ended], timeout: 60)

        // Then progress came while bytes arrived, never went back, and reached every byte before the result
        let all = events.all
        XCTAssertEqual(all.suffix(2), ["progress 102400", "result 102400"])
        let received = all.dropLast().compactMap { Int64($0.dropFirst("progress ".count)) }
        XCTAssertEqual(received, received.sorted(), "progress went back: \(all)")
        // (The one count here that depends on timing, with a margin: the server spreads the body
        // over 1 s, and the queue polls progress every 50 ms, so this needs one of about 20 polls
        // to land while the body arrives; the last count and the order hold by design.)
        XCTAssertTrue(received.contains { $0 > 0 && $0 < 102_400 }, "no progress while the body arrived: \(all)")
    }

    // MARK: - Resuming

    func testAnInterruptedRangeDownloadFromHTTPBinIsContinued() async throws {
        // Given a download of httpbin's /range (which answers Range, and sends ETag: range102400)
        // cancelled keeping its partial data once some bytes are in the file
        let path = "/range/102400?chunk_size=1024&duration=2"
        let kept = try await interruptedDownload(of: PathRequest<EmptyResponse>(path))
        XCTAssertEqual(PartialDownload(destination: destination).readRecord(),
                       PartialDownload.Record(url: try HTTPBin.url().absoluteString + path, validator: .entityTag("range102400"),
                                              bytes: kept))

        // When it is downloaded again (by another queue: what it continues is on disk)
        let sent = SentRequests()
        let queue = try HTTPBin.queue(delegate: sent)
        let file = try await queue.download(PathRequest<EmptyResponse>(path), to: destination).file

        // Then the request asked for the rest of that version, and the file is byte for byte the resource
        let request = try XCTUnwrap(sent.all.last)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Range"), "bytes=\(kept)-")
        XCTAssertEqual(request.value(forHTTPHeaderField: "If-Range"), "range102400")
        XCTAssertEqual(file.response.statusCode, 206)
        XCTAssertEqual(file.resumedAt, kept)
        XCTAssertEqual(file.size, 102_400)
        XCTAssertEqual(try Data(contentsOf: destination), Data((0..<102_400).map { UInt8(ascii: "a") + UInt8($0 % 26) }))
        XCTAssertEqual(try folderContents(), ["file.bin"])
    }

    func testAnInterruptedDownloadFromNginxIsContinuedWithItsETag() async throws {
        // Given a static file, and a download of it cancelled (keeping its data) part of the way
        let (url, content) = try publish(count: 1 << 20)
        let kept = try await interruptedDownload(of: slowly(url))
        let entityTag = try XCTUnwrap(PartialDownload(destination: destination).readRecord()?.entityTag)

        // When it is downloaded again
        let sent = SentRequests()
        let queue = try HTTPBin.queue(delegate: sent)
        let file = try await queue.download(PathRequest<EmptyResponse>(url.absoluteString), to: destination).file

        // Then nginx received the range from where the data ended, with the ETag it had given, and
        // sent that part; the file is byte for byte the original
        XCTAssertEqual(file.response.statusCode, 206)
        XCTAssertEqual(file.response.value(forHTTPHeaderField: "X-Received-Range"), "bytes=\(kept)-")
        XCTAssertEqual(file.response.value(forHTTPHeaderField: "X-Received-If-Range"), entityTag)
        XCTAssertEqual(file.response.value(forHTTPHeaderField: "ETag"), entityTag)
        XCTAssertEqual(sent.all.last?.value(forHTTPHeaderField: "Range"), "bytes=\(kept)-")
        XCTAssertEqual(file.resumedAt, kept)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertEqual(try folderContents(), ["file.bin"])
    }

    func testAResourceThatChangedIsDownloadedWholeAgain() async throws {
        // Given a download of a static file cancelled part of the way, keeping its data
        let (url, _) = try publish(count: 1 << 20)
        let kept = try await interruptedDownload(of: slowly(url))
        let oldTag = try XCTUnwrap(PartialDownload(destination: destination).readRecord()?.entityTag)

        // When the file changes on the server, and it is downloaded again
        let (_, changed) = try publish(count: (1 << 20) + 1000, at: url)
        let queue = try HTTPBin.queue()
        let file = try await queue.download(PathRequest<EmptyResponse>(url.absoluteString), to: destination).file

        // Then the range was asked for with the old ETag, nginx sent the new version whole, and the
        // file is that version alone
        XCTAssertEqual(file.response.value(forHTTPHeaderField: "X-Received-Range"), "bytes=\(kept)-")
        XCTAssertEqual(file.response.value(forHTTPHeaderField: "X-Received-If-Range"), oldTag)
        XCTAssertNotEqual(file.response.value(forHTTPHeaderField: "ETag"), oldTag)
        XCTAssertEqual(file.response.statusCode, 200)
        XCTAssertEqual(file.resumedAt, 0)
        XCTAssertEqual(file.size, Int64(changed.count))
        XCTAssertEqual(try Data(contentsOf: destination), changed)
        XCTAssertEqual(try folderContents(), ["file.bin"])
    }

    func testPartialDataThatIsAlreadyWholeIsCompletedByA416() async throws {
        // Given a static file downloaded whole, then put back as partial data with its record (as
        // a download cancelled after its last byte would leave it)
        let (url, content) = try publish(count: 50_000)
        let queue = try HTTPBin.queue()
        let whole = try await queue.download(PathRequest<EmptyResponse>(url.absoluteString), to: destination).file
        let partial = PartialDownload(destination: destination)
        try FileManager.default.moveItem(at: destination, to: partial.dataFile)
        let entityTag = try XCTUnwrap(whole.response.value(forHTTPHeaderField: "ETag"))
        XCTAssertTrue(partial.write(PartialDownload.Record(url: url.absoluteString, validator: .entityTag(entityTag), bytes: 50_000)))

        // When it is downloaded again
        let file = try await queue.download(PathRequest<EmptyResponse>(url.absoluteString), to: destination).file

        // Then nginx said the range starts at the end (416), and the partial data is the file
        XCTAssertEqual(file.response.statusCode, 416)
        // (nginx adds its headers twice to a 416, which HTTPURLResponse joins)
        XCTAssertEqual(received("X-Received-Range", in: file.response), ["bytes=50000-"])
        XCTAssertEqual(received("X-Received-If-Range", in: file.response), [entityTag])
        XCTAssertEqual(file.resumedAt, 50_000)
        XCTAssertEqual(file.size, 50_000)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertEqual(try folderContents(), ["file.bin"])
    }

    // MARK: - Cancelling

    func testCancellingALongDownloadStopsItRemovesItsFileAndEndsOnce() async throws {
        // Given a download of a body that would take eight seconds (nginx sends 2 MiB at 256 KiB/s),
        // with bytes in its partial file, on a queue of one slot, which a transfer holds until the
        // transport says it has stopped. (Not an endless body: Linux's URLSession may go on reading
        // a cancelled transfer, without bound under ThreadSanitizer; a slow one bounds it.)
        let (url, _) = try publish(count: 2 << 20)
        let watch = ChunkWatch()
        let queue = try watch.queue(maxConcurrent: 1)
        let download = queue.download(slowly(url), to: destination)
        let results = Recorder<Result<DownloadedFile, RequestError>>()
        let ended = expectation(description: "result")
        queue.addObserver(for: download.id) { (result: Result<DownloadedFile, RequestError>) in
            results.append(result)
            ended.fulfill()
        }
        let descriptorsWhileWriting = Recorder<Int>()
        let folder: URL = self.folder

        // When it is cancelled once bytes are in its file
        watch.whenFirstChunkIsTaken {
            descriptorsWhileWriting.append(openDescriptors(into: folder))
            download.cancel()
        }

        // Then it ends with one cancelled result; nothing is left on disk
        await fulfillment(of: [ended], timeout: 60)
        XCTAssertEqual(results.count, 1)
        guard case .failure(.cancelled) = results.all.first else { return XCTFail("\(results.all)") }
        XCTAssertEqual(try folderContents(), [])
        // And the transfer stopped: the one slot is free again for the next request
        let echo = try await queue.send(PathRequest<Echo>("/get"))
        XCTAssertTrue(echo.url.hasSuffix("/get"))
        // And no descriptor into the folder is left open (the check does see one while writing)
        XCTAssertEqual(descriptorsWhileWriting.all, [1], "the check sees the open partial file")
        XCTAssertEqual(openDescriptors(into: folder), 0)
    }

    func testNoDescriptorIntoTheFolderStaysOpen() async throws {
        // Given downloads that complete, are cancelled mid-body (keeping their data or not) and are rejected
        let queue = try HTTPBin.queue()
        for index in 0..<3 {
            _ = try await queue.download(PathRequest<EmptyResponse>("/bytes/20000?seed=\(index)"),
                                         to: folder.appendingPathComponent("done-\(index)")).file
        }
        let (long, _) = try publish(count: 2 << 20)
        for keeping in [false, true] {
            let watch = ChunkWatch()
            let watchedQueue = try watch.queue()
            let download = watchedQueue.download(slowly(long), to: folder.appendingPathComponent("slow-\(keeping)"))
            watch.whenFirstChunkIsTaken { download.cancel(keepingPartialData: keeping) }
            do {
                _ = try await download.file
                XCTFail("an eight-second body ended at once")
            } catch {
                guard case .cancelled = error else { return XCTFail("\(error)") }
            }
            withExtendedLifetime(watchedQueue) {}
        }
        do {
            _ = try await queue.download(PathRequest<EmptyResponse>("/status/404"), to: folder.appendingPathComponent("missing")).file
            XCTFail("a 404 was downloaded")
        } catch {
            XCTAssertEqual(error.statusCode, 404)
        }

        // Then no descriptor points into the folder any more
        XCTAssertEqual(openDescriptors(into: folder), 0)
        // And what is left is the three files and the partial data kept on request
        let left = try folderContents()
        XCTAssertEqual(left.filter { !$0.hasPrefix(".slow-true") }, ["done-0", "done-1", "done-2"])
        XCTAssertFalse(left.filter { $0.hasPrefix(".slow-true") }.isEmpty, "the partial data kept: \(left)")
    }

    // MARK: - Helpers

    /// Writes `count` random bytes as a new static file (or replaces the one at `url`, atomically);
    /// returns its URL and content.
    private func publish(count: Int, at url: URL? = nil) throws -> (URL, Data) {
        let (base, directory) = try HTTPBin.staticFiles()
        let name = url?.lastPathComponent ?? "download-\(UUID().uuidString).bin"
        var generator = SystemRandomNumberGenerator()
        let content = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try content.write(to: directory.appendingPathComponent(name), options: .atomic)
        return (base.appendingPathComponent(name), content)
    }

    /// A request nginx answers at 256 KiB per second, so that a download of it can be interrupted.
    private func slowly(_ url: URL) -> PathRequest<EmptyResponse> {
        PathRequest(url.absoluteString, headers: ["X-Courier-Rate": "262144"])
    }

    /// Downloads `request` to `destination` and cancels it keeping its partial data as soon as a
    /// chunk of the body is in the file (told by the transport, not waited for); returns how many
    /// bytes were kept.
    private func interruptedDownload(of request: PathRequest<EmptyResponse>,
                                     file: StaticString = #filePath, line: UInt = #line) async throws -> Int64 {
        let watch = ChunkWatch()
        let queue = try watch.queue()
        let download = queue.download(request, to: destination)
        watch.whenFirstChunkIsTaken { download.cancel(keepingPartialData: true) }
        do {
            _ = try await download.file
            XCTFail("the download completed before it could be interrupted", file: file, line: line)
        } catch {
            guard case .cancelled = error else { throw error }
        }
        withExtendedLifetime(queue) {}
        let kept = try XCTUnwrap(PartialDownload(destination: destination).dataSize(), "no partial data was kept", file: file, line: line)
        XCTAssertGreaterThan(kept, 0, file: file, line: line)
        return kept
    }

    /// The distinct values of a header nginx may have sent more than once.
    private func received(_ name: String, in response: HTTPURLResponse) -> Set<String> {
        Set((response.value(forHTTPHeaderField: name) ?? "").components(separatedBy: ", "))
    }
}

/// Records the URL requests a queue sent (after every hook: what went on the wire).
final class SentRequests: RequestQueueDelegate, Sendable {
    private let requests = Recorder<URLRequest>()

    var all: [URLRequest] { requests.all }

    func requestQueue(_ queue: RequestQueue, didSend request: URLRequest) {
        requests.append(request)
    }
}

/// Tells a test when the queue has taken a streamed body's first chunk (for a download: written
/// it to its file), through a queue on the run's network transport wrapped to watch, so that the
/// test can interrupt a download mid-body without waiting for anything but that event. Fires once.
final class ChunkWatch: Sendable {
    private let state = Locked<(taken: Bool, action: (@Sendable () -> Void)?)>((false, nil))

    /// A queue like `HTTPBin.queue()` whose transport reports to this watch. Keep it: a released
    /// queue cancels its requests.
    func queue(maxConcurrent: Int = 6) throws -> RequestQueue {
        try HTTPBin.queue(maxConcurrent: maxConcurrent) { configuration in
            configuration.transport = .custom { [self] settings in
                WatchingTransport(inner: HTTPBin.transport.make(settings), watch: self)
            }
        }
    }

    /// Runs `action` (on another thread) once the first chunk is taken, or at once if it was already.
    func whenFirstChunkIsTaken(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.taken { return true }
            state.action = action
            return false
        }
        if now { DispatchQueue.global().async(execute: action) }
    }

    fileprivate func chunkTaken() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.taken else { return nil }
            state.taken = true
            defer { state.action = nil }
            return state.action
        }
        // Not on the transport's thread, which is delivering the body.
        if let action { DispatchQueue.global().async(execute: action) }
    }

    private final class WatchingTransport: Transport {
        let inner: any Transport
        let watch: ChunkWatch

        init(inner: any Transport, watch: ChunkWatch) {
            self.inner = inner
            self.watch = watch
        }

        func makeTask(for request: TransportRequest,
                      completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) -> any TransportTask {
            inner.makeTask(for: request, completion: completion)
        }

        func makeStreamingTask(for request: TransportRequest, receiver: any TransportStreamReceiver) -> any TransportTask {
            inner.makeStreamingTask(for: request, receiver: Receiver(inner: receiver, watch: watch))
        }

        func invalidate() {
            inner.invalidate()
        }
    }

    private final class Receiver: TransportStreamReceiver {
        let inner: any TransportStreamReceiver
        let watch: ChunkWatch

        init(inner: any TransportStreamReceiver, watch: ChunkWatch) {
            self.inner = inner
            self.watch = watch
        }

        func transportDidReceive(_ response: HTTPURLResponse) {
            inner.transportDidReceive(response)
        }

        func transportDidReceive(_ chunk: Data) -> TransportDemand {
            let demand = inner.transportDidReceive(chunk)
            // `.more` once the head is decided: the chunk went to the sink (a held one pauses).
            if demand == .more { watch.chunkTaken() }
            return demand
        }

        func transportDidComplete(_ error: RequestError?) {
            inner.transportDidComplete(error)
        }
    }
}
