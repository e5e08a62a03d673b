import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The sentences `RequestError.description` writes: what went wrong and what to do.
final class RequestErrorDescriptionTests: XCTestCase {
    func testATransportFailureKeepsCourierOwnExplanation() {
        let error = RequestError.transportFailed(URLError(.cannotCreateFile, userInfo: [
            NSLocalizedDescriptionKey: "the folder /tmp/missing does not exist: create it first",
            NSURLErrorFailingURLErrorKey: URL(string: "https://example.com/file.bin")!,
        ]))
        XCTAssertEqual(error.description, "The request failed before a response arrived: cannot create file (code -3000) "
                       + "for https://example.com/file.bin: the folder /tmp/missing does not exist: create it first.")
    }

    func testATransportFailureWithoutExplanationNamesItsCode() {
        let error = RequestError.transportFailed(URLError(.networkConnectionLost))
        XCTAssertEqual(error.description, "The request failed before a response arrived: network connection lost (code -1005).")
    }

    func testAStatusErrorShowsItsBodyOnOneLineWithControlCharactersEscaped() {
        // Given a 404 whose body has line breaks, a tab, a DEL and text beyond ASCII
        let url = URL(string: "https://example.com/missing")!
        let response = HTTPURLResponse(url: url, statusCode: 404, httpVersion: "HTTP/1.1", headerFields: [:])!
        let body = ResponseData(Data("<h1>Not\tFound</h1>\r\n\u{7F}é👍🏽\n".utf8))

        // Then the description escapes the control characters and keeps the rest as it came
        XCTAssertEqual(RequestError.validationFailed(response, body: body).description,
                       "The server answered with status 404 (\(HTTPURLResponse.localizedString(forStatusCode: 404))) "
                       + "from https://example.com/missing; "
                       + "body: <h1>Not\\tFound</h1>\\r\\n\\u{7F}é👍🏽\\n.")
    }

    func testStreamLimitsSayWhatToRaise() {
        XCTAssertEqual(RequestError.streamLimitExceeded(.lineLength(4)).description,
                       "The stream was stopped: a line was longer than 4 bytes; raise StreamOptions.maximumLineLength "
                       + "if the server's lines are that long.")
        XCTAssertTrue(RequestError.streamLimitExceeded(.bufferSize(8)).description.contains("StreamOptions.maximumBufferSize"))
        XCTAssertTrue(RequestError.streamLimitExceeded(.eventSize(16)).description.contains("ServerSentEventOptions.maximumEventSize"))
    }

    func testTheBufferedLimitSaysToStreamOrDownload() {
        XCTAssertEqual(RequestError.responseTooLarge(limit: 1024).description,
                       "The response is larger than the 1024-byte limit (maximumResponseSize); the transfer was stopped. "
                       + "Receive large bodies with queue.stream or queue.download, which have no such limit, "
                       + "or raise the queue's maximumResponseSize.")
    }
}
