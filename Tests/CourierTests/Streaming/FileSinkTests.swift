import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// A download's body on its way to the file: the hidden partial file, the move into place, and
/// what cancellations and failures leave behind. The server's side is played by the test.
final class FileSinkTests: DownloadTestCase {

    func testTheBodyGoesToAHiddenFileFirstAndOntoTheDestinationOnlyWhenComplete() async throws {
        // Given a download whose server has sent its head and a first chunk
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        let exchange = try transport.next()
        exchange.head(200, ["Content-Length": "10", "ETag": "\"v1\""])
        exchange.sendAndWait(bytes("01234"))

        // Then the bytes so far are in the hidden partial file, its record names the URL and the
        // version, and the destination does not exist yet
        XCTAssertEqual(try Data(contentsOf: partial.dataFile), bytes("01234"))
        XCTAssertEqual(partial.readRecord(), PartialDownload.Record(url: source, validator: .entityTag("\"v1\"")))
        XCTAssertFalse(exists(destination))

        // When the rest arrives
        exchange.send(bytes("56789"))
        exchange.finish()
        let file = try await download.file

        // Then the destination holds the whole body, and the hidden files are gone
        XCTAssertEqual(try Data(contentsOf: destination), bytes("0123456789"))
        XCTAssertFalse(exists(partial.dataFile))
        XCTAssertFalse(exists(partial.recordFile))
        XCTAssertEqual(file.url, destination)
        XCTAssertEqual(file.size, 10)
        XCTAssertEqual(file.resumedAt, 0)
        XCTAssertEqual(file.response.statusCode, 200)
        // And the ID's observer got the same, once
        let observedFile = try await result(observed).get()
        XCTAssertEqual(observedFile.url, destination)
        XCTAssertEqual(observedFile.size, 10)
        // And the request is finished for anyone who looks once the result is delivered
        let late = expectation(description: "late observer")
        let finished = Recorder<Bool>()
        queue.addObserver(for: download.id) { [queue] (_: Result<DownloadedFile, RequestError>) in
            finished.append(queue!.isFinished(download.id))
            late.fulfill()
        }
        await fulfillment(of: [late], timeout: 30)
        XCTAssertEqual(finished.all, [true])
        // And the request asked for the bytes as stored, and no range
        XCTAssertEqual(exchange.request.value(forHTTPHeaderField: "Accept-Encoding"), "identity")
        XCTAssertNil(exchange.request.value(forHTTPHeaderField: "Range"))
        XCTAssertNil(exchange.request.value(forHTTPHeaderField: "If-Range"))
    }

    func testAnExistingFileAtTheDestinationIsReplacedOnlyOnceTheBodyIsComplete() async throws {
        // Given an older file at the destination
        try bytes("old").write(to: destination)
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let exchange = try transport.next()
        exchange.head(200)
        exchange.sendAndWait(bytes("new "))

        // Then while the body arrives, the old file is still whole
        XCTAssertEqual(try Data(contentsOf: destination), bytes("old"))

        // When the body is complete, the new file replaces it
        exchange.send(bytes("file"))
        exchange.finish()
        _ = try await download.file
        XCTAssertEqual(try Data(contentsOf: destination), bytes("new file"))
    }

    func testCancellingMidBodyStopsTheTransferRemovesThePartialDataAndEndsOnce() async throws {
        // Given a download with 1000 bytes in its partial file
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        let exchange = try transport.next()
        exchange.head(200, ["ETag": "\"v1\""])
        exchange.sendAndWait(Data(count: 1000))
        XCTAssertEqual(partial.dataSize(), 1000)

        // When it is cancelled
        download.cancel()

        // Then it ends cancelled, once; the transfer was stopped; nothing is left on disk
        guard case .failure(.cancelled) = try await result(observed) else { return XCTFail("not cancelled") }
        do {
            _ = try await download.file
            XCTFail("a cancelled download has a file")
        } catch {
            guard case .cancelled = error else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(exchange.wasCancelled)
        XCTAssertNil(exchange.send(Data(count: 10)), "the transfer took a chunk after it was cancelled")
        XCTAssertFalse(exists(partial.dataFile))
        XCTAssertFalse(exists(partial.recordFile))
        XCTAssertFalse(exists(destination))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
    }

    func testCancellingKeepingPartialDataLeavesTheDataAndARecordOfIt() async throws {
        // Given a download with 1000 bytes in its partial file
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        let exchange = try transport.next()
        exchange.head(200, ["ETag": "\"v1\"", "Content-Length": "5000"])
        exchange.sendAndWait(Data(repeating: 7, count: 1000))

        // When it is cancelled keeping its partial data
        download.cancel(keepingPartialData: true)

        // Then it ends cancelled, and the data stays with a record of its URL, version and size
        guard case .failure(.cancelled) = try await result(observed) else { return XCTFail("not cancelled") }
        XCTAssertEqual(try Data(contentsOf: partial.dataFile), Data(repeating: 7, count: 1000))
        XCTAssertEqual(partial.readRecord(), PartialDownload.Record(url: source, validator: .entityTag("\"v1\""), bytes: 1000))
        XCTAssertFalse(exists(destination))
    }

    func testCancellingByIDRemovesThePartialData() async throws {
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        let exchange = try transport.next()
        exchange.head(200, ["ETag": "\"v1\""])
        exchange.sendAndWait(Data(count: 10))

        queue.cancel(download.id)

        guard case .failure(.cancelled) = try await result(observed) else { return XCTFail("not cancelled") }
        XCTAssertFalse(exists(partial.dataFile))
        XCTAssertFalse(exists(partial.recordFile))
    }

    func testAFailureMidBodyKeepsTheDataForALaterDownload() async throws {
        // Given a download with 5 bytes in its partial file
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        let exchange = try transport.next()
        exchange.head(200, ["ETag": "\"v1\"", "Content-Length": "10"])
        exchange.sendAndWait(bytes("01234"))

        // When the connection drops
        exchange.finish(.transportFailed(URLError(.networkConnectionLost)))

        // Then the download fails with that, and its data and record stay
        let outcome = try await result(observed)
        XCTAssertEqual(outcome.urlError?.code, .networkConnectionLost)
        XCTAssertEqual(try Data(contentsOf: partial.dataFile), bytes("01234"))
        XCTAssertEqual(partial.readRecord(), PartialDownload.Record(url: source, validator: .entityTag("\"v1\""), bytes: 5))
    }

    func testAFailureRemovesTheDataWhenTheOptionsSaySo() async throws {
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination,
                                      options: DownloadOptions(keepsPartialDataOnFailure: false))
        let observed = observe(download)
        let exchange = try transport.next()
        exchange.head(200, ["ETag": "\"v1\""])
        exchange.sendAndWait(bytes("01234"))

        exchange.finish(.transportFailed(URLError(.networkConnectionLost)))

        let outcome = try await result(observed)
        XCTAssertEqual(outcome.urlError?.code, .networkConnectionLost)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
    }

    func testABodyShorterThanAnnouncedFailsAndIsKept() async throws {
        // Given a server that announces 10 bytes, sends 5 and ends as if complete
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        let exchange = try transport.next()
        exchange.head(200, ["ETag": "\"v1\"", "Content-Length": "10"])
        exchange.sendAndWait(bytes("01234"))
        exchange.finish()

        // Then the download fails saying so, and nothing incomplete is moved into place
        let outcome = try await result(observed)
        XCTAssertEqual(outcome.urlError?.code, .networkConnectionLost)
        XCTAssertEqual(outcome.message, "the body ended after 5 bytes of the 10 the server announced; download again to resume")
        XCTAssertFalse(exists(destination))
        XCTAssertEqual(partial.readRecord()?.bytes, 5)
    }

    func testDataThatCannotBeContinuedIsNotKept() async throws {
        // Given a server whose only validator is weak (RFC 9110: unusable in If-Range)
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        let exchange = try transport.next()
        exchange.head(200, ["ETag": "W/\"v1\""])
        exchange.sendAndWait(bytes("01234"))
        XCTAssertFalse(exists(partial.recordFile), "a record of data that cannot be continued")

        // When the download is cancelled keeping its partial data
        download.cancel(keepingPartialData: true)

        // Then nothing is kept: no later download could continue it safely
        guard case .failure(.cancelled) = try await result(observed) else { return XCTFail("not cancelled") }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
    }

    func testARejectedStatusFailsAsAnyRequestAndLeavesPartialDataAlone() async throws {
        // Given partial data from an earlier download
        try leavePartialData("01234")
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        let exchange = try transport.next()

        // When the server answers 404 with a body
        exchange.head(404)
        exchange.sendAndWait(bytes("gone"))
        exchange.finish()

        // Then the download fails with the status and the body, and the partial data is as it was
        guard case .failure(.validationFailed(let response, let body)) = try await result(observed) else {
            return XCTFail("not a validation failure")
        }
        XCTAssertEqual(response.statusCode, 404)
        XCTAssertEqual(body.string, "gone")
        XCTAssertEqual(try Data(contentsOf: partial.dataFile), bytes("01234"))
        XCTAssertEqual(partial.readRecord(), PartialDownload.Record(url: source, validator: .entityTag("\"v1\""), bytes: 5))
        XCTAssertFalse(exists(destination))
    }

    func testAMissingDirectoryFailsSayingWhichPathAndWhatToDo() async throws {
        // Given a destination in a directory that does not exist
        let missing = folder.appendingPathComponent("missing")
        let destination = missing.appendingPathComponent("big.iso")
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        let exchange = try transport.next()

        // When the body would start
        exchange.head(200)

        // Then the download fails saying which directory to create, the transfer is stopped, and
        // nothing is created
        let outcome = try await result(observed)
        XCTAssertEqual(outcome.urlError?.code, .cannotCreateFile)
        XCTAssertEqual(outcome.message, "the directory \(missing.path) does not exist; create it before downloading to \(destination.path)")
        XCTAssertEqual(outcome.urlError?.userInfo[NSURLErrorFailingURLErrorKey] as? URL, destination)
        XCTAssertTrue(exchange.wasCancelled)
        XCTAssertFalse(exists(missing))
    }

    func testADestinationThatIsNotAFileURLFailsSayingHowToMakeOne() async throws {
        let destination = URL(string: "https://example.com/big.iso")!
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        try transport.next().head(200)

        let outcome = try await result(observed)
        XCTAssertEqual(outcome.urlError?.code, .cannotCreateFile)
        XCTAssertEqual(outcome.message, "the destination https://example.com/big.iso is not a file URL; make it with URL(fileURLWithPath:)")
    }

    func testTwoDownloadsToOneDestinationCannotInterleave() async throws {
        // Given a download under way
        let first = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let firstExchange = try transport.next()
        firstExchange.head(200, ["ETag": "\"v1\""])
        firstExchange.sendAndWait(bytes("01234"))

        // When a second download to the same destination gets its head
        let second = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let secondObserved = observe(second)
        try transport.next().head(200, ["ETag": "\"v1\""])

        // Then the second fails saying why, and the first completes untouched
        let outcome = try await result(secondObserved)
        XCTAssertEqual(outcome.urlError?.code, .cannotCreateFile)
        XCTAssertEqual(outcome.message, "another download to \(destination.path) is under way (it holds \(partial.dataFile.path)); "
                       + "wait for it to end, or download to another destination")
        firstExchange.send(bytes("56789"))
        firstExchange.finish()
        let file = try await first.file
        XCTAssertEqual(file.size, 10)
        XCTAssertEqual(try Data(contentsOf: destination), bytes("0123456789"))
    }

    func testARequestedRangeIsWrittenAsItComesAndNeverResumed() async throws {
        // Given a request that asks for a range itself
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso", headers: ["Range": "bytes=2-5"]), to: destination)
        let exchange = try transport.next()
        exchange.head(206, ["Content-Range": "bytes 2-5/10", "Content-Length": "4", "ETag": "\"v1\""])
        exchange.sendAndWait(bytes("23"))

        // Then its range went out as it was, and no record is kept of a part
        XCTAssertEqual(exchange.request.value(forHTTPHeaderField: "Range"), "bytes=2-5")
        XCTAssertNil(exchange.request.value(forHTTPHeaderField: "If-Range"))
        XCTAssertFalse(exists(partial.recordFile))

        // And the file is the part
        exchange.send(bytes("45"))
        exchange.finish()
        let file = try await download.file
        XCTAssertEqual(try Data(contentsOf: destination), bytes("2345"))
        XCTAssertEqual(file.size, 4)
        XCTAssertEqual(file.resumedAt, 0)
    }

    func testCancellingTheWaitingTaskDoesNotCancelTheDownload() async throws {
        // Given a task waiting for a download's file
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let waiter = Task { try await download.file }
        let exchange = try transport.next()

        // When that task is cancelled, and the body then arrives
        waiter.cancel()
        exchange.head(200)
        exchange.sendAndWait(bytes("all of it"))
        exchange.finish()

        // Then the download went on, and the task got the file
        let file = try await waiter.value
        XCTAssertEqual(file.size, 9)
        XCTAssertFalse(exchange.wasCancelled)
        XCTAssertEqual(try Data(contentsOf: destination), bytes("all of it"))
    }

    func testADownloadCancelledBeforeItWasSentLeavesPartialDataAlone() async throws {
        // Given one slot, taken by a first download, and partial data for a second one
        queue = makeQueue(maxConcurrent: 1)
        let first = queue.download(PathRequest<EmptyResponse>("/first"), to: folder.appendingPathComponent("first"))
        let firstExchange = try transport.next()
        try leavePartialData("01234")
        let second = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(second)

        // When the second is cancelled while it waits for the slot
        second.cancel()

        // Then it ends cancelled without having touched the partial data
        guard case .failure(.cancelled) = try await result(observed) else { return XCTFail("not cancelled") }
        XCTAssertEqual(try Data(contentsOf: partial.dataFile), bytes("01234"))
        XCTAssertEqual(partial.readRecord()?.bytes, 5)
        firstExchange.head(200)
        firstExchange.finish()
        _ = try await first.file
        XCTAssertEqual(transport.all.count, 1, "the cancelled download went on the wire")
    }

    func testAWriteFailureEndsTheDownloadSayingWhatToDo() async throws {
        // Given a process that may write files of at most 4096 bytes (as a full disk would stop it)
        let previousHandler = signal(SIGXFSZ, SIG_IGN)
        var previousLimit = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_FSIZE.rawValue), &previousLimit), 0)
        var limit = previousLimit
        limit.rlim_cur = 4096
        XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit), 0)
        defer {
            _ = setrlimit(Int32(RLIMIT_FSIZE.rawValue), &previousLimit)
            _ = signal(SIGXFSZ, previousHandler)
        }
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        let exchange = try transport.next()
        exchange.head(200, ["ETag": "\"v1\""])
        exchange.sendAndWait(Data(count: 3000))

        // When a chunk does not fit
        exchange.send(Data(count: 3000))

        // Then the download fails saying where and what to do, the transfer is stopped, and what was
        // written is kept to resume
        let outcome = try await result(observed)
        XCTAssertEqual(outcome.urlError?.code, .cannotWriteToFile)
        XCTAssertEqual(outcome.message, "cannot write to \(partial.dataFile.path) after 4096 bytes: \(String(cString: strerror(EFBIG))); "
                       + "make room on the disk, then download again to resume")
        XCTAssertTrue(exchange.wasCancelled)
        XCTAssertEqual(partial.dataSize(), 4096)
        XCTAssertEqual(partial.readRecord()?.bytes, 4096)
        XCTAssertFalse(exists(destination))
    }

    func testNoFileDescriptorIsLeftOpen() async throws {
        // Given a first download done
        func complete(_ name: String) async throws {
            let download = queue.download(PathRequest<EmptyResponse>("/\(name)"), to: folder.appendingPathComponent(name))
            let exchange = try transport.next()
            exchange.head(200, ["ETag": "\"v1\""])
            exchange.sendAndWait(Data(count: 100))
            exchange.finish()
            _ = try await download.file
        }
        try await complete("warm-up")
        XCTAssertEqual(openDescriptors(into: folder), 0)

        // When downloads complete, are cancelled (keeping data or not), fail, and collide
        for index in 0..<4 {
            try await complete("done-\(index)")
        }
        for keeping in [false, true, false, true] {
            let download = queue.download(PathRequest<EmptyResponse>("/c"), to: folder.appendingPathComponent("c-\(keeping)-\(UUID())"))
            let exchange = try transport.next()
            exchange.head(200, ["ETag": "\"v1\""])
            exchange.sendAndWait(Data(count: 100))
            download.cancel(keepingPartialData: keeping)
            _ = try? await download.file
        }
        for _ in 0..<4 {
            let download = queue.download(PathRequest<EmptyResponse>("/f"), to: folder.appendingPathComponent("f-\(UUID())"))
            let exchange = try transport.next()
            exchange.head(200, ["ETag": "\"v1\""])
            exchange.sendAndWait(Data(count: 100))
            exchange.finish(.transportFailed(URLError(.networkConnectionLost)))
            _ = try? await download.file
        }
        let holder = queue.download(PathRequest<EmptyResponse>("/same"), to: destination)
        let holderExchange = try transport.next()
        holderExchange.head(200)
        holderExchange.sendAndWait(Data(count: 100))
        let collider = queue.download(PathRequest<EmptyResponse>("/same"), to: destination)
        try transport.next().head(200)
        _ = try? await collider.file
        holderExchange.finish()
        _ = try await holder.file

        // Then no descriptor names the folder or a file in it (counting the process's descriptors
        // instead failed by chance under ThreadSanitizer: other tests' sockets closed meanwhile)
        XCTAssertEqual(openDescriptors(into: folder), 0)
    }

    // MARK: - The sink on its own: ends that race

    private func head(_ status: Int, _ headers: [String: String] = [:]) -> ResponseHead {
        ResponseHead(status: status, headerFields: HTTPFields(headers), url: URL(string: source)!)
    }

    func testACancellationAfterTheFileIsInPlaceLeavesTheDownloadComplete() throws {
        // Given a sink whose body is complete and in place
        let sink = FileSink(destination: destination, options: DownloadOptions())
        var request = URLRequest(url: URL(string: source)!)
        sink.willSend(&request)
        XCTAssertNil(sink.open(head(200), resumeTransfer: {}))
        XCTAssertEqual(text(sink.write(bytes("whole"))), "more")
        guard case .success = sink.close(nil) else { return XCTFail("not complete") }

        // When a cancellation comes before the queue took the result
        let settled = sink.settle(.failure(.cancelled))
        sink.requestEnded(settled)

        // Then the download's result is the file, which stays
        guard case .success(let file as DownloadedFile) = settled else { return XCTFail("\(settled)") }
        XCTAssertEqual(file.size, 5)
        XCTAssertEqual(try Data(contentsOf: destination), bytes("whole"))
    }

    func testACancellationBeforeTheBodyEndsKeepsTheFileOutOfPlace() throws {
        // Given a sink whose body has arrived, and a cancellation the queue took first
        let sink = FileSink(destination: destination, options: DownloadOptions())
        var request = URLRequest(url: URL(string: source)!)
        sink.willSend(&request)
        XCTAssertNil(sink.open(head(200, ["ETag": "\"v1\""]), resumeTransfer: {}))
        XCTAssertEqual(text(sink.write(bytes("whole"))), "more")
        let settled = sink.settle(.failure(.cancelled))

        // When the transport's end comes after it
        let closed = sink.close(nil)
        sink.requestEnded(settled)

        // Then the file was not moved into place, and the partial data is gone
        guard case .failure(.cancelled) = closed, case .failure(.cancelled) = settled else { return XCTFail("\(closed) \(settled)") }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
        XCTAssertEqual(text(sink.write(bytes("late"))), "fail: \(RequestError.cancelled)")
    }
}

/// A sink's demand as text, to compare in assertions.
private func text(_ demand: SinkDemand) -> String {
    switch demand {
    case .more: "more"
    case .pause: "pause"
    case .fail(let error): "fail: \(error)"
    }
}
