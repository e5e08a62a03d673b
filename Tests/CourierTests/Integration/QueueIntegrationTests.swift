import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The queue against a real local httpbin, checking what the server received.
final class QueueIntegrationTests: XCTestCase {

    func testServerReceivesMethodPathAndHeadersFromWillSend() throws {
        // Given a delegate that signs every request, and a request with its own header
        let queue = try HTTPBin.queue(delegate: SigningDelegate())
        let request = PathRequest<Echo>("/anything/users/42?expand=true", headers: ["X-Client": "courier-tests"])

        // When it is sent
        let result = try XCTUnwrap(self.result(of: queue.add(request), on: queue, as: Echo.self, timeout: 60))
        let echo = try result.get()

        // Then httpbin saw the method, path, query and both headers
        XCTAssertEqual(echo.method, "GET")
        XCTAssertEqual(echo.url, try HTTPBin.url().absoluteString + "/anything/users/42?expand=true")
        XCTAssertEqual(echo.args, ["expand": "true"])
        XCTAssertEqual(echo.headers["X-Client"], "courier-tests")
        XCTAssertEqual(echo.headers["Authorization"], "Bearer signed-by-delegate")
    }

    func testServerReceivesTheBodyWithItsContentType() async throws {
        // Given a POST with a text body containing UTF-8 and reserved characters
        let queue = try HTTPBin.queue()
        let text = "héllo & goodbye = 中文\n"
        let request = BodyRequest<TextBody, Echo>(parameters: TextBody(text: text), path: "/anything")

        // When it is sent
        let echo = try await queue.send(request)

        // Then the server got the exact bytes, the method and the Content-Type Courier set
        XCTAssertEqual(echo.method, "POST")
        XCTAssertEqual(echo.data, text)
        XCTAssertEqual(echo.headers["Content-Type"], "text/plain; charset=utf-8")
        XCTAssertEqual(echo.headers["Content-Length"], "\(text.utf8.count)")
    }

    func testQueryStringParametersAreAppendedToThePathQuery() async throws {
        let queue = try HTTPBin.queue()
        let request = QueryRequest(parameters: RawQuery(query: "b=2&c=%26"), path: "/get?a=1")
        let echo = try await queue.send(request)
        XCTAssertEqual(echo.args, ["a": "1", "b": "2", "c": "&"])
    }

    func testErrorStatusFailsValidationWithStatusAndBody() throws {
        // Given a server that answers 418 with a body
        let queue = try HTTPBin.queue()

        // When the request is observed
        let result = try XCTUnwrap(self.result(of: queue.add(PathRequest<Echo>("/status/418")), on: queue, as: Echo.self, timeout: 60))

        // Then it fails validation, carrying the status and the body httpbin sent
        guard case .failure(let error) = result, case .validationFailed(let response, let body) = error else {
            return XCTFail("expected a validation failure, got \(result)")
        }
        XCTAssertEqual(response.statusCode, 418)
        XCTAssertTrue(body.string?.contains("teapot") == true, body.string ?? "<no body>")
        XCTAssertTrue(error.description.contains("418"), error.description)
    }

    func testCancelInFlightEndsPromptly() throws {
        // Given a request to /delay/10 that has been sent
        let sent = DispatchSemaphore(value: 0)
        let queue = try HTTPBin.queue(delegate: SentSignal(semaphore: sent))
        let id = queue.add(PathRequest<Echo>("/delay/10"))
        XCTAssertEqual(sent.wait(timeout: .now() + 60), .success)

        // When it is cancelled
        let cancelledAt = ContinuousClock.now
        queue.cancel(id)
        let result = try XCTUnwrap(self.result(of: id, on: queue, as: Echo.self, timeout: 60))

        // Then it ends as cancelled at once, long before the server would have answered. The
        // bound tells "at once" (milliseconds, a thousand times under it) from "when the answer
        // comes" (up to 10 s after the send); it must stay under 10 s, and 5 s is far from both.
        guard case .failure(.cancelled) = result else { return XCTFail("got \(result)") }
        XCTAssertLessThan(ContinuousClock.now - cancelledAt, .seconds(5))
        XCTAssertTrue(queue.isFinished(id))
    }

    func testTimeoutEndsAsTimedOut() throws {
        let queue = try HTTPBin.queue()
        let start = ContinuousClock.now
        let id = queue.add(PathRequest<Echo>("/delay/10", timeout: 0.5))
        let result = try XCTUnwrap(self.result(of: id, on: queue, as: Echo.self, timeout: 60))
        // Ended by the 0.5 s timeout, not by the answer at 10 s: the bound lies between the two,
        // 16 times the timeout (an answer would also not be .timedOut)
        guard case .failure(.timedOut) = result else { return XCTFail("got \(result)") }
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(8))
    }

    func testConnectionRefusedIsATransportFailure() throws {
        // Given a port where nothing listens
        let queue = try HTTPBin.queue()
        let url = "http://127.0.0.1:\(HTTPBin.closedPort())/get"

        // When a request goes there (an absolute path overrides the base URL)
        let result = try XCTUnwrap(self.result(of: queue.add(PathRequest<Echo>(url)), on: queue, as: Echo.self, timeout: 60))

        // Then it fails on the wire with the URLError that says so
        guard case .failure(.transportFailed(let error)) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(error.code, .cannotConnectToHost)
    }

    func testTwoHundredRequestsFromEightThreadsAreEachObservedOnce() throws {
        // Given a queue and an observer of every Echo response
        let queue = try HTTPBin.queue(maxConcurrent: 8)
        let owner = ObserverOwner()
        let byID = Locked<[RequestID: [String]]>([:])
        let typeCount = Locked(0)
        let done = expectation(description: "200 ID results")
        done.expectedFulfillmentCount = 200
        queue.addObserver(ownedBy: owner) { (_: Result<Echo, RequestError>) in typeCount.withLock { $0 += 1 } }

        // When 8 threads add 25 requests each, all at once, each with its own number
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<25 {
                let number = "\(thread)-\(index)"
                let id = queue.add(PathRequest<Echo>("/anything?n=\(number)"))
                queue.addObserver(for: id) { (result: Result<Echo, RequestError>) in
                    let seen = (try? result.get().args["n"]) ?? "failed: \(result)"
                    byID.withLock { $0[id, default: []].append(seen == number ? "ok" : "wrong \(seen) for \(number)") }
                    done.fulfill()
                }
            }
        }
        wait(for: [done], timeout: 60)
        TestQueues.callbacks.sync {}

        // Then every request got exactly one result, the server saw each number, and the type
        // observer heard all 200
        let results = byID.withLock { $0 }
        XCTAssertEqual(results.count, 200)
        XCTAssertEqual(results.values.filter { $0 != ["ok"] }.count, 0, "\(results.values.filter { $0 != ["ok"] }.prefix(3))")
        XCTAssertEqual(typeCount.withLock { $0 }, 200)
        withExtendedLifetime(owner) {}
    }

    func testSharedQueueWorksWithAbsoluteURLs() async throws {
        let url = try HTTPBin.url().absoluteString + "/get?from=shared"
        let echo = try await RequestQueue.shared.send(PathRequest<Echo>(url))
        XCTAssertEqual(echo.args, ["from": "shared"])
    }
}

private struct QueryRequest: Request {
    typealias ResponseType = Echo
    var parameters: RawQuery
    var path: String
    var method: HTTPMethod { .get }
}

private final class SigningDelegate: RequestQueueDelegate {
    func requestQueue(_ queue: RequestQueue, willSend request: inout URLRequest) {
        request.setValue("Bearer signed-by-delegate", forHTTPHeaderField: "Authorization")
    }
}

private final class SentSignal: RequestQueueDelegate {
    let semaphore: DispatchSemaphore
    init(semaphore: DispatchSemaphore) { self.semaphore = semaphore }
    func requestQueue(_ queue: RequestQueue, didSend request: URLRequest) { semaphore.signal() }
}
