import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Responses in content codings against a real origin (Scripts/sse_server.py's /coded/NAME),
/// through the run's network transport: the curl transport delivers a body in a coding libcurl
/// cannot decode as it was sent, with its `Content-Encoding`, and the cache stores it like any
/// other; Linux's URLSession cannot (its libcurl handle fails the transfer), which Courier turns
/// into `URLError.cannotDecodeContentData` saying to use the curl transport (Linux notes).
final class ContentCodingIntegrationTests: XCTestCase {
    /// The origin's CODED_BODY: not UTF-8, not gzip.
    private static let codedBody = Data("courier-coded".utf8) + Data([0x00, 0x01, 0x80, 0xFE, 0xFF])
    /// Behind real time, so that the origin's `Date` (uvicorn's, up to two seconds old) is never
    /// earlier than the cache's clock: no apparent age, and the stored response's age is exact.
    private let clock = TestClock(Date().timeIntervalSince1970 - 30)
    private let metrics = MetricsRecorder()

    private func queue(cached: Bool = false, maximumResponseSize: Int? = 64 << 20) throws -> RequestQueue {
        try HTTPBin.queue(delegate: metrics) { [clock] configuration in
            if cached {
                configuration.cache = ResponseCache(memory: MemoryStore(capacity: 1 << 20), disk: nil, directory: nil,
                                                    heuristicFreshnessLimit: 86_400, clock: { clock.now })
            }
            configuration.maximumResponseSize = maximumResponseSize
        }
    }

    /// /coded/NAME on the origin, counted under a key of its own.
    private func coded(_ name: String) throws -> (url: String, key: String, server: URL) {
        let server = try HTTPBin.sseServer()
        let key = UUID().uuidString
        return (server.absoluteString + "/coded/\(name)?key=\(key)", key, server)
    }

    /// Requests the origin sees for one GET in a coding libcurl cannot decode: one, or two where
    /// libcurl (8.5 and later) can only have it sent again with decoding off.
    private var arrivalsPerUndecodableGET: Int {
        #if os(Linux)
        CurlContentCodings.loaded.switchesMidTransfer ? 1 : 2
        #else
        1
        #endif
    }

    /// The one outcome URLSession on Linux can give for a body in a coding it cannot decode;
    /// `coding` is named when URLSession had the head (the queue's size limit makes its tasks
    /// delegate-driven, and 64 MiB is the default).
    private func assertURLSessionCannotDecode(_ result: Result<Reply<Data>, RequestError>, coding: String? = "x-courier",
                                              file: StaticString = #filePath, line: UInt = #line) {
        guard case .failure(.transportFailed(let error)) = result else {
            return XCTFail("expected URLError.cannotDecodeContentData, got \(result)", file: file, line: line)
        }
        XCTAssertEqual(error.code, .cannotDecodeContentData, file: file, line: line)
        let description = error.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
        XCTAssertTrue(description.contains("RequestTransport.curl"), description, file: file, line: line)
        if let coding {
            XCTAssertTrue(description.contains("the content coding \"\(coding)\""), description, file: file, line: line)
        }
    }

    private func reply(_ url: String, method: HTTPMethod = .get, on queue: RequestQueue) async -> Result<Reply<Data>, RequestError> {
        do {
            return .success(try await queue.reply(to: PathRequest<Data>(url, method: method)))
        } catch {
            return .failure(error)
        }
    }

    func testABodyInAnUnknownCodingIsDeliveredAsSentWithItsContentEncoding() async throws {
        // Given an origin answering with `Content-Encoding: x-courier`, a coding no client decodes
        let (url, key, server) = try coded("unknown")
        let queue = try queue()
        // When it is fetched
        let result = await reply(url, on: queue)
        // Then the curl transport delivers the bytes as sent, with the coding they are in
        if HTTPBin.usesURLSession { return assertURLSessionCannotDecode(result) }
        let reply = try result.get()
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(reply.value, Self.codedBody)
        XCTAssertEqual(reply.headerFields["Content-Encoding"], "x-courier")
        XCTAssertEqual(reply.headerFields["Content-Length"], "18")
        XCTAssertEqual(reply.metrics.bytesReceived, 18)
        XCTAssertEqual(reply.source, .network)
        XCTAssertEqual(try HTTPBin.arrivals(key, at: server), arrivalsPerUndecodableGET)
    }

    func testWithoutASizeLimitTheSameBodyArrivesThoughURLSessionCannotNameTheCoding() async throws {
        // Given a queue without a size limit (URLSession's tasks then have completion handlers and no head on failure)
        let (url, _, _) = try coded("unknown")
        // When the x-courier body is fetched
        let result = await reply(url, on: try queue(maximumResponseSize: nil))
        // Then curl delivers it as sent; URLSession fails as documented, without the coding's name
        if HTTPBin.usesURLSession { return assertURLSessionCannotDecode(result, coding: nil) }
        XCTAssertEqual(try result.get().value, Self.codedBody)
    }

    func testAStackedCodingWithAnUnknownOneIsDeliveredAsSentNotHalfDecoded() async throws {
        // Given `Content-Encoding: gzip, x-courier`: x-courier cannot be undone, so gzip cannot be either
        let (url, _, _) = try coded("stacked")
        // When it is fetched
        let result = await reply(url, on: try queue())
        // Then the body is the one sent, untouched, with both codings named
        if HTTPBin.usesURLSession { return assertURLSessionCannotDecode(result, coding: "gzip, x-courier") }
        let reply = try result.get()
        XCTAssertEqual(reply.value, Self.codedBody)
        XCTAssertEqual(reply.headerFields["Content-Encoding"], "gzip, x-courier")
    }

    func testGzipAndIdentityAreStillHandledAsBefore() async throws {
        // Given a gzip body and an identity one
        let queue = try queue()
        // When they are fetched
        let gzip = try await reply(coded("gzip").url, on: queue).get()
        let identity = try await reply(coded("identity").url, on: queue).get()
        // Then gzip arrives decoded, identity as sent, through either transport
        XCTAssertEqual(String(decoding: gzip.value, as: UTF8.self), "decoded by libcurl\n")
        XCTAssertEqual(identity.value, Self.codedBody)
        XCTAssertEqual(identity.headerFields["Content-Encoding"], "identity")
    }

    func testABodyInAnUnknownCodingIsStoredAndServedAgainFromTheCacheWithTheSameBytes() async throws {
        // Given a cached queue and a response in x-courier with max-age=60
        let (url, key, server) = try coded("unknown")
        let queue = try queue(cached: true)
        // When it is fetched, then again ten seconds later
        let first = await reply(url, on: queue)
        clock.advance(10)
        let second = await reply(url, on: queue)
        if HTTPBin.usesURLSession {
            // (nothing could be stored: both reached the origin and failed the same way)
            assertURLSessionCannotDecode(first)
            assertURLSessionCannotDecode(second)
            return XCTAssertEqual(try HTTPBin.arrivals(key, at: server), 2)
        }
        // Then the second answer came from the cache: the same bytes and coding, the origin not asked again
        let stored = try second.get()
        XCTAssertEqual(try first.get().source, .network)
        XCTAssertEqual(stored.source, .cache(.fresh))
        XCTAssertEqual(stored.value, Self.codedBody)
        XCTAssertEqual(stored.headerFields["Content-Encoding"], "x-courier")
        XCTAssertEqual(stored.headerFields["Age"], "10")
        XCTAssertEqual(try HTTPBin.arrivals(key, at: server), arrivalsPerUndecodableGET)
    }

    func testTheSizeLimitCountsAPassedThroughBodyAsSent() async throws {
        // Given a limit of 17 bytes and an 18-byte body in x-courier
        let queue = try queue(maximumResponseSize: 17)
        // When it is fetched
        let result = await reply(try coded("unknown").url, on: queue)
        // Then it is refused by its Content-Length, which counts the bytes as sent (URLSession's
        // delegate refuses it from the head too, before its libcurl fails on the coding)
        guard case .failure(.responseTooLarge(let limit)) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(limit, 17)
    }

    func testAPOSTAnsweredInAnUnknownCoding() async throws {
        // Given a POST the origin answers in x-courier
        let (url, key, server) = try coded("unknown")
        // When it is sent
        let result = await reply(url, method: .post, on: try queue())
        if HTTPBin.usesURLSession { return assertURLSessionCannotDecode(result) }
        #if os(Linux)
        if !CurlContentCodings.loaded.switchesMidTransfer {
            // Then with libcurl 8.5 and later, which cannot pass it through, it is not sent twice
            guard case .failure(.transportFailed(let error)) = result else { return XCTFail("\(result)") }
            XCTAssertEqual(error.code, .cannotDecodeContentData)
            XCTAssertTrue((error.userInfo[NSLocalizedDescriptionKey] as? String ?? "").contains("\"x-courier\""))
            return XCTAssertEqual(try HTTPBin.arrivals(key, at: server), 1)
        }
        #endif
        // Then before 8.5 its answer is delivered as sent
        XCTAssertEqual(try result.get().value, Self.codedBody)
        XCTAssertEqual(try HTTPBin.arrivals(key, at: server), 1)
    }

    func testAStreamedBodyInAnUnknownCodingArrivesAsSent() async throws {
        // Given a streamed GET of a body in x-courier
        let queue = try queue()
        let stream = queue.stream(PathRequest<EmptyResponse>(try coded("unknown").url))
        // When it is read to its end
        var received = Data()
        do {
            for try await chunk in stream { received.append(chunk) }
        } catch {
            // (URLSession ends the stream with the same error as a buffered request)
            if HTTPBin.usesURLSession { return assertURLSessionCannotDecode(.failure(error)) }
            throw error
        }
        XCTAssertFalse(HTTPBin.usesURLSession, "URLSession delivered a body it cannot decode")
        // Then the bytes are the ones sent, and the head names their coding
        XCTAssertEqual(received, Self.codedBody)
        let head = try await stream.response
        XCTAssertEqual(head.value(forHTTPHeaderField: "Content-Encoding"), "x-courier")
        withExtendedLifetime(queue) {}
    }
}
