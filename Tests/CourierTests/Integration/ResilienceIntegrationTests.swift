import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Redirects, authentication, retries and size limits against the real httpbin.
final class ResilienceIntegrationTests: XCTestCase {
    private static let secretHeaders = ["Authorization": "Bearer secret", "Cookie": "session=1", "X-Api-Key": "key",
                                        "X-Other": "public"]

    private func redirect(to url: String, status: Int = 302) -> String {
        "/redirect-to?url=" + url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&status_code=\(status)"
    }

    func testCrossOriginRedirectLeavesSecretsBehind() async throws {
        // Given a redirect from 127.0.0.1 to httpbin on 127.0.0.2, with secrets in the headers
        let queue = try HTTPBin.queue { $0.sensitiveHeaders = ["X-Api-Key"] }
        let target = try HTTPBin.secondOrigin().absoluteString + "/headers"

        // When it is followed
        let echo = try await queue.send(PathRequest<EchoObject>(redirect(to: target), headers: Self.secretHeaders))

        // Then the other origin got only the public header
        let headers = echo.field("headers")
        XCTAssertNil(headers["Authorization"])
        XCTAssertNil(headers["Cookie"])
        XCTAssertNil(headers["X-Api-Key"])
        XCTAssertEqual(headers["X-Other"] as? String, "public")
        XCTAssertEqual(headers["Host"] as? String, URL(string: target)?.host.map { "\($0):\(URL(string: target)!.port!)" })
    }

    func testSameOriginRedirectKeepsHeaders() async throws {
        let queue = try HTTPBin.queue { $0.sensitiveHeaders = ["X-Api-Key"] }
        let echo = try await queue.send(PathRequest<EchoObject>(redirect(to: "/headers"), headers: Self.secretHeaders))
        let headers = echo.field("headers")
        XCTAssertEqual(headers["Authorization"] as? String, "Bearer secret")
        XCTAssertEqual(headers["Cookie"] as? String, "session=1")
        XCTAssertEqual(headers["X-Api-Key"] as? String, "key")
    }

    func testTemporaryRedirectResendsMethodAndBody() async throws {
        // Given POSTs answered by 307 and 308, one with a JSON body, one with a streamed multipart file
        let queue = try HTTPBin.queue()
        struct Note: JSONBodyData { let title: String }
        let json = try await queue.send(BodyRequest<Note, EchoObject>(parameters: Note(title: "kept"),
                                                                       path: redirect(to: "/post", status: 307)))
        XCTAssertEqual(json.field("json") as? [String: String], ["title": "kept"])

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-307-\(UUID()).bin")
        try Data(repeating: 0x61, count: 2 * 1024 * 1024).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let form = MultipartFormData()
        form.append(fileURL: file, withName: "doc", fileName: "doc.txt", mimeType: "text/plain")
        let multipart = try await queue.send(BodyRequest<MultipartFormData, EchoObject>(
            parameters: form, path: redirect(to: "/post", status: 308)))

        // Then the redirected requests arrived as POSTs with their bodies
        XCTAssertEqual((multipart.field("files")["doc"] as? String)?.count, 2 * 1024 * 1024)
    }

    func testSeeOtherTurnsPostIntoGet() async throws {
        let queue = try HTTPBin.queue()
        let echo = try await queue.send(BodyRequest<TextBody, EchoObject>(parameters: TextBody(text: "x"),
                                                                          path: redirect(to: "/anything", status: 303)))
        XCTAssertEqual(echo.object["method"] as? String, "GET")
        XCTAssertEqual(echo.object["data"] as? String, "")
    }

    func testRedirectLimit() async throws {
        let queue = try HTTPBin.queue()
        do {
            _ = try await queue.send(PathRequest<EchoObject>("/redirect/12"))
            XCTFail("expected too many redirects")
        } catch {
            guard case .tooManyRedirects(11) = error else { return XCTFail("\(error)") }
        }
        let refusing = try HTTPBin.queue { $0.redirectPolicy = .never }
        do {
            _ = try await refusing.send(PathRequest<EchoObject>("/redirect/1"))
            XCTFail("expected the 302 itself")
        } catch {
            XCTAssertEqual(error.statusCode, 302)
        }
    }

    func testUnauthorizedWithChallengeEndsPromptly() async throws {
        // Given requests that get a 401 with WWW-Authenticate (which hangs Linux's URLSession)
        let queue = try HTTPBin.queue { $0.timeoutInterval = 30 }
        for path in ["/basic-auth/user/pass", "/bearer", "/status/401"] {
            let start = ContinuousClock.now
            do {
                _ = try await queue.send(PathRequest<EchoObject>(path))
                XCTFail("expected a 401 for \(path)")
            } catch {
                // Then each ends at once as a validation failure carrying the status and headers
                guard case .validationFailed(let response, _) = error else { return XCTFail("\(path): \(error)") }
                XCTAssertEqual(response.statusCode, 401, path)
                // (A hang would end at the 30 s timeout, as .timedOut; a 401 takes milliseconds.
                // The bound lies between, a hundred times the usual.)
                XCTAssertLessThan(ContinuousClock.now - start, .seconds(10), "\(path) waited for the 30 s timeout")
                if path != "/status/401" {
                    XCTAssertNotNil(response.value(forHTTPHeaderField: "WWW-Authenticate"), path)
                }
            }
        }
    }

    func testConfiguredCredentialsAnswerBasicAuth() async throws {
        let queue = try HTTPBin.queue { $0.credentials = HTTPCredentials(user: "ada", password: "lovelace") }
        let echo = try await queue.send(PathRequest<EchoObject>("/basic-auth/ada/lovelace"))
        XCTAssertEqual(echo.object["authenticated"] as? Bool, true)
        XCTAssertEqual(echo.object["user"] as? String, "ada")
        do {
            _ = try await queue.send(PathRequest<EchoObject>("/basic-auth/ada/other-password"))
            XCTFail("wrong credentials must fail")
        } catch {
            XCTAssertEqual(error.statusCode, 401)
        }
    }

    func testFiftyConcurrentRequestsShareOneTokenRefresh() throws {
        // Given an authenticator with no token yet, and httpbin's /bearer, which wants one
        let authenticator = TokenAuthenticator(token: "", refreshed: "fresh-token")
        let queue = try HTTPBin.queue(maxConcurrent: 16) { $0.authenticator = authenticator }

        // When 50 requests go at once
        let done = expectation(description: "50 results")
        done.expectedFulfillmentCount = 50
        let tokens = Recorder<String>()
        for _ in 0..<50 {
            queue.addObserver(for: queue.add(PathRequest<EchoObject>("/bearer"))) { (result: Result<EchoObject, RequestError>) in
                tokens.append((try? result.get().object["token"] as? String) ?? "failed: \(result)")
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 60)

        // Then one refresh served them all, and the server saw the new token on every one
        XCTAssertEqual(authenticator.refreshCount, 1)
        XCTAssertEqual(tokens.all, Array(repeating: "fresh-token", count: 50))
    }

    func testRetriesUntilTheServerRecovers() async throws {
        // /status/503,200 answers one of the two at random; with 24 attempts all fail once in 16
        // million runs, and every answer is one of the two
        let log = Recorder<Int>()
        let queue = try HTTPBin.queue(delegate: RetryCounter(log: log)) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 24, baseDelay: 0.01, maximumDelay: 0.05)
        }
        _ = try await queue.send(PathRequest<EmptyResponse>("/status/503,200"))
        XCTAssertEqual(log.all, Array(1..<(log.count + 1)))

        let failing = try HTTPBin.queue(delegate: RetryCounter(log: log)) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 3, baseDelay: 0.01)
        }
        do {
            _ = try await failing.send(PathRequest<EmptyResponse>("/status/503"))
            XCTFail("expected the final 503")
        } catch {
            XCTAssertEqual(error.statusCode, 503)
        }
    }

    func testMaximumResponseSizeStopsLargeBodies() async throws {
        let queue = try HTTPBin.queue { $0.maximumResponseSize = 1024 }
        // A body announced with Content-Length, a chunked one without, and one within the limit
        for path in ["/bytes/4096", "/stream-bytes/65536?chunk_size=1024"] {
            do {
                _ = try await queue.send(PathRequest<EmptyResponse>(path))
                XCTFail("expected \(path) to be refused")
            } catch {
                guard case .responseTooLarge(1024) = error else { return XCTFail("\(path): \(error)") }
            }
        }
        _ = try await queue.send(PathRequest<EmptyResponse>("/bytes/512"))
    }
}

private final class RetryCounter: RequestQueueDelegate {
    let log: Recorder<Int>
    init(log: Recorder<Int>) { self.log = log }
    func requestQueue(_ queue: RequestQueue, willRetry request: URLRequest, attempt: Int, after error: RequestError) {
        log.append(attempt)
    }
}
