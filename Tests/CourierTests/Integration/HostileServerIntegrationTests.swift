import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Servers that misbehave (Scripts/hostile_server.py, started by Scripts/test.sh): every request
/// ends promptly, with an error that names what the server did wrong, and bounded memory.
final class HostileServerIntegrationTests: XCTestCase {
    private struct Outcome {
        let result: Result<StatusAndBody, RequestError>
        let seconds: Double
        let peakGrowth: Int

        var error: RequestError? {
            if case .failure(let error) = result { return error }
            return nil
        }

        /// The `URLError` code of a transport failure.
        var urlErrorCode: URLError.Code? {
            if case .transportFailed(let error)? = error { return error.code }
            return nil
        }

        /// The failure's full text, its `URLError`'s own description included.
        var message: String {
            guard let error else { return "no error" }
            if case .transportFailed(let urlError) = error {
                return "\(error) \(urlError.userInfo[NSLocalizedDescriptionKey] as? String ?? "")"
            }
            return "\(error)"
        }
    }

    /// What "promptly" allows, in seconds. The queue's timeout is 60 s (see `send`): a request the
    /// server made hang would end then, as `.timedOut`. The bound is half of that, far above what
    /// these take when they end promptly (about a second at most, printed by each test, and a few
    /// times that under ThreadSanitizer on a busy machine), so it tells the two apart by design.
    private static let promptly: Double = 30

    private func hostileServer() throws -> URL { try HTTPBin.hostileServer() }

    /// Sends GET `path` to the hostile server and measures how long it took and how far memory grew.
    /// - Parameter transport: The transport to use; by default the run's.
    private func send(_ path: String, maximumResponseSize: Int? = nil, through transport: RequestTransport? = nil) async throws -> Outcome {
        let base = try hostileServer()
        let queue = try HTTPBin.queue { config in
            config.maximumResponseSize = maximumResponseSize
            config.timeoutInterval = 60
            if let transport { config.transport = transport }
        }
        let sampler = MemorySampler()
        let start = ContinuousClock.now
        let result: Result<StatusAndBody, RequestError>
        do {
            result = .success(try await queue.send(PathRequest<StatusAndBody>(base.absoluteString + path)))
        } catch {
            result = .failure(error)
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let outcome = Outcome(result: result, seconds: seconds, peakGrowth: sampler.stop())
        let name = transport.map { _ in "curl" } ?? (HTTPBin.usesURLSession ? "URLSession" : "curl")
        print("hostile \(path) through \(name): \(outcome.message); "
              + String(format: "%.2f s, peak RSS growth %d MiB", outcome.seconds, outcome.peakGrowth >> 20))
        return outcome
    }

    func testA401WithAChallengeEndsPromptlyWithItsStatusHeadersAndBody() async throws {
        // Given 401s with WWW-Authenticate and a body (Basic hangs Linux's URLSession if left alone)
        for (path, scheme) in [("/challenge", "Bearer"), ("/challenge-basic", "Basic")] {
            let outcome = try await send(path)
            guard case .validationFailed(let response, let body)? = outcome.error else {
                XCTFail("\(path): expected a validation failure, got \(outcome.message)")
                continue
            }
            XCTAssertEqual(response.statusCode, 401, path)
            XCTAssertEqual(response.value(forHTTPHeaderField: "WWW-Authenticate"), "\(scheme) realm=\"courier\"", path)
            // Linux's URLSession drops the body of a Basic challenge it cancels (Linux notes);
            // curl keeps every body
            let lost = HTTPBin.usesURLSession && scheme == "Basic"
            XCTAssertEqual(body.string, lost ? "" : #"{"error":"token expired"}"#, path)
            XCTAssertLessThan(outcome.seconds, Self.promptly, path)
        }
    }

    func testAGarbageStatusLineIsABadServerResponse() async throws {
        let outcome = try await send("/garbage-status")
        XCTAssertEqual(outcome.urlErrorCode, .badServerResponse, outcome.message)
        XCTAssertLessThan(outcome.seconds, Self.promptly)
    }

    func testAnEightMegabyteHeaderEndsPromptlyAsABadServerResponse() async throws {
        let outcome = try await send("/huge-header")
        XCTAssertNotNil(outcome.error, "an 8 MB header field must not be accepted")
        if !HTTPBin.usesURLSession {
            // (Linux's URLSession says only "out of memory", with no code of its own)
            XCTAssertEqual(outcome.urlErrorCode, .badServerResponse, outcome.message)
            XCTAssertTrue(outcome.message.contains("header line larger than libcurl accepts"), outcome.message)
        }
        XCTAssertLessThan(outcome.seconds, Self.promptly)
    }

    func testAHundredThousandHeaderFieldsEndPromptlyAsABadServerResponse() async throws {
        let outcome = try await send("/many-headers")
        XCTAssertEqual(outcome.urlErrorCode, .badServerResponse, outcome.message)
        if !HTTPBin.usesURLSession {
            XCTAssertTrue(outcome.message.contains("more than 1000 header fields"), outcome.message)
        }
        XCTAssertLessThan(outcome.seconds, Self.promptly)
    }

    // Bounded memory is a feature of the curl transport: Linux's URLSession reads ahead of its
    // delegate, so a fast endless body or bomb takes hundreds of megabytes (and seconds to tens of
    // seconds) before its limit stops it (documented on maximumResponseSize). These run through
    // curl whatever the run's transport.

    func testAnEndlessBodyStopsAtTheLimitWithBoundedMemory() async throws {
        let limit = 10 << 20
        let outcome = try await send("/endless", maximumResponseSize: limit, through: .curl)
        guard case .responseTooLarge(let reported)? = outcome.error else {
            return XCTFail("expected responseTooLarge, got \(outcome.message)")
        }
        XCTAssertEqual(reported, limit)
        XCTAssertLessThan(outcome.seconds, Self.promptly)
        XCTAssertLessThan(outcome.peakGrowth, limit + (32 << 20), "peak growth \(outcome.peakGrowth >> 20) MiB")
    }

    func testACompressionBombStopsAtTheLimitCountingDecodedBytes() async throws {
        let limit = 10 << 20
        let outcome = try await send("/gzip-bomb", maximumResponseSize: limit, through: .curl)
        guard case .responseTooLarge(let reported)? = outcome.error else {
            return XCTFail("expected responseTooLarge, got \(outcome.message)")
        }
        XCTAssertEqual(reported, limit)
        XCTAssertLessThan(outcome.seconds, Self.promptly)
        XCTAssertLessThan(outcome.peakGrowth, limit + (32 << 20), "peak growth \(outcome.peakGrowth >> 20) MiB")
    }
}
