import Foundation
import XCTest
@testable import Courier

/// The task of a request the store answers: its answer handed over once, on resume, unless it
/// was cancelled first; its progress the whole body once it has answered.
final class CachedAnswerTaskTests: XCTestCase {
    private let answer = TransportResponse(
        head: ResponseHead(status: 200, headerFields: ["Content-Type": "text/plain"], url: URL(string: "https://example.com/a")!),
        body: Data("stored".utf8))

    private func task(_ results: Locked<[Result<TransportResponse, RequestError>]>) -> CachedAnswerTask {
        CachedAnswerTask(answer) { result in results.withLock { $0.append(result) } }
    }

    func testResumeAnswersOnceAndThenShowsTheWholeBody() {
        let results = Locked<[Result<TransportResponse, RequestError>]>([])
        let task = task(results)
        XCTAssertEqual(task.progress.bytesReceived, 0)
        // When it is resumed, then cancelled and resumed again
        task.resume()
        task.cancel()
        task.resume()
        // Then it answered once, with the stored answer
        let answers = results.withLock { $0 }
        XCTAssertEqual(answers.count, 1)
        XCTAssertEqual(try answers.first?.get().body, Data("stored".utf8))
        XCTAssertEqual(task.progress.bytesReceived, 6)
        XCTAssertEqual(task.progress.totalBytesToReceive, 6)
    }

    func testCancelBeforeResumeAnswersCancelledOnce() {
        let results = Locked<[Result<TransportResponse, RequestError>]>([])
        let task = task(results)
        task.cancel()
        task.resume()
        task.cancel()
        let answers = results.withLock { $0 }
        XCTAssertEqual(answers.count, 1)
        guard case .failure(.cancelled)? = answers.first else { return XCTFail("\(answers)") }
        XCTAssertEqual(task.progress.bytesReceived, 0)
    }
}
