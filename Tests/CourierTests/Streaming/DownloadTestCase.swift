import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// What download unit tests share: a folder of their own, a queue on an ``ExchangeTransport``
/// whose server side the test plays, and the one-result check.
class DownloadTestCase: XCTestCase {
    var folder: URL!
    var transport: ExchangeTransport!
    var queue: RequestQueue!
    let source = "https://files.example.com/big.iso"

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        queue = makeQueue()
    }

    override func tearDownWithError() throws {
        queue = nil
        transport = nil
        try? FileManager.default.removeItem(at: folder)
    }

    /// A queue on a new exchange transport (which becomes `transport`).
    func makeQueue(maxConcurrent: Int = 6, delegate: (any RequestQueueDelegate)? = nil,
                   configure: (inout RequestQueueConfiguration) -> Void = { _ in }) -> RequestQueue {
        transport = ExchangeTransport()
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.maxConcurrentRequests = maxConcurrent
        configure(&configuration)
        return RequestQueue(configuration: configuration, delegate: delegate,
                            baseURL: URL(string: "https://files.example.com"), transport: transport)
    }

    var destination: URL { folder.appendingPathComponent("big.iso") }
    var partial: PartialDownload { PartialDownload(destination: destination) }

    func exists(_ url: URL) -> Bool {
        FileManager.default.fileExists(atPath: url.path)
    }

    /// Leaves partial data at the destination as a failed download of `source` would.
    func leavePartialData(_ bytes: String, validator: ResumeValidator = .entityTag("\"v1\"")) throws {
        try Data(bytes.utf8).write(to: partial.dataFile)
        XCTAssertTrue(partial.write(PartialDownload.Record(url: source, validator: validator, bytes: Int64(bytes.utf8.count))))
    }

    /// Registers an observer of the download's ID; ``results(_:)`` waits for its one call.
    func observe(_ download: Download) -> Observed {
        let observed = Observed(expectation: expectation(description: "result of \(download.id)"))
        queue.addObserver(for: download.id) { (result: Result<DownloadedFile, RequestError>) in
            observed.results.append(result)
            observed.expectation.fulfill()
        }
        return observed
    }

    /// The observer's one result (a second call fails the test: the expectation is over-fulfilled).
    func result(_ observed: Observed, file: StaticString = #filePath, line: UInt = #line) async throws
        -> Result<DownloadedFile, RequestError> {
        await fulfillment(of: [observed.expectation], timeout: 30)
        XCTAssertEqual(observed.results.count, 1, "results delivered", file: file, line: line)
        return try XCTUnwrap(observed.results.all.first, file: file, line: line)
    }

    final class Observed: Sendable {
        let expectation: XCTestExpectation
        let results = Recorder<Result<DownloadedFile, RequestError>>()
        init(expectation: XCTestExpectation) { self.expectation = expectation }
    }
}

extension Result where Success == DownloadedFile, Failure == RequestError {
    /// The `URLError` of a `transportFailed` failure.
    var urlError: URLError? {
        guard case .failure(.transportFailed(let error)) = self else { return nil }
        return error
    }

    /// The message a file error carries.
    var message: String? {
        urlError?.userInfo[NSLocalizedDescriptionKey] as? String
    }
}

func bytes(_ text: String) -> Data {
    Data(text.utf8)
}
