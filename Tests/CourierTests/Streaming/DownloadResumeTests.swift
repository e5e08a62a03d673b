import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// A download continuing partial data: what it asks for, and what it does with each answer. The
/// server's side is played by the test.
final class DownloadResumeTests: DownloadTestCase {

    func testAFailedDownloadIsContinuedByTheNextWithRangeAndIfRange() async throws {
        // Given a download that failed after 5 of 10 bytes
        let first = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let firstExchange = try transport.next()
        firstExchange.head(200, ["ETag": "\"v1\"", "Content-Length": "10"])
        firstExchange.sendAndWait(bytes("01234"))
        firstExchange.finish(.transportFailed(URLError(.networkConnectionLost)))
        _ = try? await first.file

        // When the same URL is downloaded to the same destination again
        let second = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(second)
        let exchange = try transport.next()

        // Then it asks for the rest of that version only
        XCTAssertEqual(exchange.request.value(forHTTPHeaderField: "Range"), "bytes=5-")
        XCTAssertEqual(exchange.request.value(forHTTPHeaderField: "If-Range"), "\"v1\"")
        XCTAssertEqual(exchange.request.value(forHTTPHeaderField: "Accept-Encoding"), "identity")

        // And the rest, sent as a part, completes the file
        exchange.head(206, ["ETag": "\"v1\"", "Content-Range": "bytes 5-9/10", "Content-Length": "5"])
        exchange.sendAndWait(bytes("567"))
        exchange.send(bytes("89"))
        exchange.finish()
        let file = try await result(observed).get()
        XCTAssertEqual(try Data(contentsOf: destination), bytes("0123456789"))
        XCTAssertEqual(file.size, 10)
        XCTAssertEqual(file.resumedAt, 5)
        XCTAssertEqual(file.response.statusCode, 206)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["big.iso"])
    }

    func testALastModifiedDateIsSentWhenThereIsNoEntityTag() async throws {
        try leavePartialData("01234", validator: .lastModified("Sun, 06 Nov 1994 08:49:37 GMT"))
        _ = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let exchange = try transport.next()
        XCTAssertEqual(exchange.request.value(forHTTPHeaderField: "Range"), "bytes=5-")
        XCTAssertEqual(exchange.request.value(forHTTPHeaderField: "If-Range"), "Sun, 06 Nov 1994 08:49:37 GMT")
        exchange.finish(.cancelled)
    }

    func testA200ToAResumeStartsTheFileOver() async throws {
        // Given partial data of version "v1"
        try leavePartialData("01234")
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let exchange = try transport.next()
        XCTAssertEqual(exchange.request.value(forHTTPHeaderField: "Range"), "bytes=5-")

        // When the server sends the whole of a new version (the resource changed)
        exchange.head(200, ["ETag": "\"v2\"", "Content-Length": "4"])
        exchange.sendAndWait(bytes("abcd"))
        exchange.finish()

        // Then the file is the new version alone
        let file = try await download.file
        XCTAssertEqual(try Data(contentsOf: destination), bytes("abcd"))
        XCTAssertEqual(file.size, 4)
        XCTAssertEqual(file.resumedAt, 0)
        XCTAssertFalse(exists(partial.dataFile))
    }

    func testAPartThatDoesNotContinueTheDataFailsAndRemovesIt() async throws {
        // Given partial data of 5 bytes
        try leavePartialData("01234")
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        let exchange = try transport.next()

        // When the server sends a part from elsewhere
        exchange.head(206, ["ETag": "\"v1\"", "Content-Range": "bytes 0-9/10"])

        // Then the download fails saying so, the transfer stops, and the data is dropped so that
        // the next download starts over
        let outcome = try await result(observed)
        XCTAssertEqual(outcome.urlError?.code, .badServerResponse)
        XCTAssertEqual(outcome.message, "bytes from 5 on were asked for, but the server sent Content-Range: bytes 0-9/10; "
                       + "the partial data at \(partial.dataFile.path) was removed, so that downloading again starts over")
        XCTAssertTrue(exchange.wasCancelled)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
        _ = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        XCTAssertNil(try transport.next().request.value(forHTTPHeaderField: "Range"))
    }

    func testA416NamingTheDataLengthCompletesTheDownloadWithoutABody() async throws {
        // Given partial data that is in fact the whole resource
        try leavePartialData("0123456789")
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let exchange = try transport.next()
        XCTAssertEqual(exchange.request.value(forHTTPHeaderField: "Range"), "bytes=10-")

        // When the server says the range starts at its end (with a body of its own)
        exchange.head(416, ["Content-Range": "bytes */10", "Content-Type": "text/html"])
        exchange.sendAndWait(bytes("<html>416</html>"))
        exchange.finish()

        // Then the partial data is the file
        let file = try await download.file
        XCTAssertEqual(try Data(contentsOf: destination), bytes("0123456789"))
        XCTAssertEqual(file.size, 10)
        XCTAssertEqual(file.resumedAt, 10)
        XCTAssertEqual(file.response.statusCode, 416)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["big.iso"])
    }

    func testA416NamingAnotherLengthFailsAndDropsTheData() async throws {
        try leavePartialData("0123456789")
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        try transport.next().head(416, ["Content-Range": "bytes */4"])

        let outcome = try await result(observed)
        XCTAssertEqual(outcome.urlError?.code, .badServerResponse)
        XCTAssertEqual(outcome.message, "the server refused the range from byte 10 (416): the resource has 4 bytes, fewer than the "
                       + "partial data; the partial data at \(partial.dataFile.path) was removed, so that downloading again starts over")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
    }

    func testDataOfAnotherURLIsNotContinued() async throws {
        try Data(count: 5).write(to: partial.dataFile)
        partial.write(PartialDownload.Record(url: "https://files.example.com/other.iso", validator: .entityTag("\"v1\""), bytes: 5))
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let exchange = try transport.next()
        XCTAssertNil(exchange.request.value(forHTTPHeaderField: "Range"))
        exchange.head(200)
        exchange.sendAndWait(bytes("new"))
        exchange.finish()
        _ = try await download.file
        XCTAssertEqual(try Data(contentsOf: destination), bytes("new"))
    }

    func testResumingCanBeTurnedOff() async throws {
        try leavePartialData("01234")
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination,
                                      options: DownloadOptions(resumes: false))
        let exchange = try transport.next()
        XCTAssertNil(exchange.request.value(forHTTPHeaderField: "Range"))
        XCTAssertNil(exchange.request.value(forHTTPHeaderField: "If-Range"))
        exchange.head(200)
        exchange.sendAndWait(bytes("whole"))
        exchange.finish()
        let file = try await download.file
        XCTAssertEqual(file.resumedAt, 0)
        XCTAssertEqual(try Data(contentsOf: destination), bytes("whole"))
    }

    func testARedirectHopCarriesTheRangeOn() async throws {
        // Given partial data, and a server that redirects to a mirror
        try leavePartialData("01234")
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let redirect = try transport.next()
        redirect.head(302, ["Location": "https://mirror.example.com/big.iso"])
        redirect.finish()

        // When the queue follows it
        let hop = try transport.next()

        // Then the hop asks the mirror for the same rest of the same version
        XCTAssertEqual(hop.request.url?.absoluteString, "https://mirror.example.com/big.iso")
        XCTAssertEqual(hop.request.value(forHTTPHeaderField: "Range"), "bytes=5-")
        XCTAssertEqual(hop.request.value(forHTTPHeaderField: "If-Range"), "\"v1\"")
        // And its part completes the file
        hop.head(206, ["ETag": "\"v1\"", "Content-Range": "bytes 5-9/10"])
        hop.sendAndWait(bytes("56789"))
        hop.finish()
        let file = try await download.file
        XCTAssertEqual(file.resumedAt, 5)
        XCTAssertEqual(try Data(contentsOf: destination), bytes("0123456789"))
    }

    func testARetriedAttemptAsksForTheRangeAgain() async throws {
        // Given a retry policy, partial data, and a server that first answers 503
        queue = makeQueue { $0.retryPolicy = RetryPolicy(maximumAttempts: 2, baseDelay: 0, jitter: 0) }
        try leavePartialData("01234")
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let refused = try transport.next()
        refused.head(503)
        refused.finish()

        // When the request is sent again
        let retry = try transport.next()

        // Then the retry asks for the range too
        XCTAssertEqual(refused.request.value(forHTTPHeaderField: "Range"), "bytes=5-")
        XCTAssertEqual(retry.request.value(forHTTPHeaderField: "Range"), "bytes=5-")
        XCTAssertEqual(retry.request.value(forHTTPHeaderField: "If-Range"), "\"v1\"")
        retry.head(206, ["Content-Range": "bytes 5-9/10"])
        retry.sendAndWait(bytes("56789"))
        retry.finish()
        let file = try await download.file
        XCTAssertEqual(file.resumedAt, 5)
        XCTAssertEqual(try Data(contentsOf: destination), bytes("0123456789"))
    }

    func testACancelledDownloadKeptForLaterIsContinued() async throws {
        // Given a download cancelled keeping its partial data
        let first = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let firstExchange = try transport.next()
        firstExchange.head(200, ["ETag": "\"v1\""])
        firstExchange.sendAndWait(bytes("0123"))
        first.cancel(keepingPartialData: true)
        _ = try? await first.file

        // When it is downloaded again
        let second = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let exchange = try transport.next()

        // Then the rest is asked for, and completes the file
        XCTAssertEqual(exchange.request.value(forHTTPHeaderField: "Range"), "bytes=4-")
        exchange.head(206, ["ETag": "\"v1\"", "Content-Range": "bytes 4-9/10"])
        exchange.sendAndWait(bytes("456789"))
        exchange.finish()
        let file = try await second.file
        XCTAssertEqual(file.resumedAt, 4)
        XCTAssertEqual(try Data(contentsOf: destination), bytes("0123456789"))
    }

    func testACancelledResumeRemovesTheDataItMeantToContinue() async throws {
        // Given partial data, and a download that meant to continue it, cancelled before its head
        try leavePartialData("01234")
        let download = queue.download(PathRequest<EmptyResponse>("/big.iso"), to: destination)
        let observed = observe(download)
        _ = try transport.next()

        // When it is cancelled
        download.cancel()

        // Then the data is gone too
        guard case .failure(.cancelled) = try await result(observed) else { return XCTFail("not cancelled") }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
    }

    func testABufferedRequestCannotMakeADownloadedFile() async throws {
        // Given a request whose response type is DownloadedFile, sent as any request
        let id = queue.add(PathRequest<DownloadedFile>("/big.iso"))
        let exchange = try transport.next()
        exchange.head(200)
        exchange.send(bytes("body"))
        exchange.finish()

        // Then it fails saying to download it instead
        let outcome = try await withCheckedThrowingContinuation { continuation in
            queue.addObserver(for: id) { (result: Result<DownloadedFile, RequestError>) in continuation.resume(returning: result) }
        }
        guard case .failure(.serializationFailed(let type, let underlying)) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(type, "Courier.DownloadedFile")
        XCTAssertEqual("\(underlying)", "a DownloadedFile is made only by RequestQueue.download(_:to:), which writes the body to a "
                       + "file; send this request with download(_:to:) rather than add or send")
    }
}
