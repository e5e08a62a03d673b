#if os(Linux)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// What the curl transport takes from the session configuration that the queue does not do
/// itself: transport-level timeouts and proxies. Always through curl, whatever the run's transport.
final class CurlTransportIntegrationTests: XCTestCase {
    private func queue(_ configure: (inout RequestQueueConfiguration) -> Void) throws -> RequestQueue {
        try HTTPBin.queue { config in
            config.transport = .curl
            configure(&config)
        }
    }

    private func proxyPort() throws -> Int {
        guard let text = ProcessInfo.processInfo.environment["COURIER_PROXY_PORT"], let port = Int(text) else {
            throw HTTPBin.missing("Proxy tests need Scripts/forward_proxy.py: run Scripts/test.sh (COURIER_PROXY_PORT)")
        }
        return port
    }

    /// Whether its body was decoded during a hand-over of the curl loop (`TransportHandOver`).
    struct HandOverWitness: Response {
        let decodedInHandOver: Bool
        let byteCount: Int

        init(body: ResponseData, head: ResponseHead) throws {
            decodedInHandOver = TransportHandOver.isActive
            byteCount = body.data.count
        }
    }

    final class QuietDelegate: RequestQueueDelegate {}

    func testTheLoopFinishesASmallResponseItselfOnlyWithoutDelegates() async throws {
        // Given two queues on the curl transport, one without delegates and one with a delegate
        let plain = try queue { _ in }
        let delegate = QuietDelegate()
        let delegated = try HTTPBin.queue(delegate: delegate) { $0.transport = .curl }

        // When each gets a small body (1 KiB), and the plain one a body over the 64 KiB limit
        let small = try await plain.send(PathRequest<HandOverWitness>("/bytes/1024"))
        let withDelegate = try await delegated.send(PathRequest<HandOverWitness>("/bytes/1024"))
        let large = try await plain.send(PathRequest<HandOverWitness>("/bytes/70000"))

        // Then only the small body without delegates was decoded on the loop, in its hand-over
        XCTAssertEqual(small.byteCount, 1024)
        XCTAssertTrue(small.decodedInHandOver)
        XCTAssertEqual(withDelegate.byteCount, 1024)
        XCTAssertFalse(withDelegate.decodedInHandOver)
        XCTAssertEqual(large.byteCount, 70000)
        XCTAssertFalse(large.decodedInHandOver)
    }

    func testTimeoutIntervalForRequestEndsAnIdleTransfer() async throws {
        // Given an idle timeout of 1 s, and a server that says nothing for 10 s
        let queue = try queue { $0.sessionConfiguration.timeoutIntervalForRequest = 1 }
        let start = ContinuousClock.now

        // Then the transfer ends as timed out, long before the queue's own 20 s deadline
        do {
            _ = try await queue.send(PathRequest<EmptyResponse>("/delay/10"))
            XCTFail("expected a timeout")
        } catch {
            guard case .timedOut = error else { return XCTFail("expected .timedOut, got \(error)") }
        }
        // Only the idle timeout ends it as .timedOut before the server answers at 10 s, and the
        // queue's deadline would at 20 s: the bound lies between, 8 times the 1 s timeout
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(8))
    }

    func testTimeoutIntervalForResourceBoundsABusyTransfer() async throws {
        // Given a resource timeout of 1 s, and a server that drips its body over 6 s (never idle)
        let queue = try queue { $0.sessionConfiguration.timeoutIntervalForResource = 1 }
        let start = ContinuousClock.now
        do {
            _ = try await queue.send(PathRequest<StatusAndBody>("/drip?duration=6&numbytes=6&delay=0"))
            XCTFail("expected a timeout")
        } catch {
            guard case .timedOut = error else { return XCTFail("expected .timedOut, got \(error)") }
        }
        // The body would end at 6 s (a success) and the queue's deadline at 20 s; the 1 s
        // resource timeout ends it first, and the bound (5 times it) says it did
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(5))
    }

    func testTheSessionsHTTPProxyIsUsed() async throws {
        // Given the forward proxy in the session configuration
        let port = try proxyPort()
        let queue = try queue { config in
            config.sessionConfiguration.connectionProxyDictionary = ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": port]
        }

        // When a request goes to httpbin
        let echo = try await queue.send(PathRequest<Echo>("/anything?through=proxy"))

        // Then it went through the proxy, which said so, and arrived whole
        XCTAssertEqual(echo.headers["X-Courier-Proxy"], "forwarded")
        XCTAssertEqual(echo.args, ["through": "proxy"])
    }

    func testADisabledProxyIsNotUsed() async throws {
        let port = try proxyPort()
        let queue = try queue { config in
            config.sessionConfiguration.connectionProxyDictionary = ["HTTPEnable": 0, "HTTPProxy": "127.0.0.1", "HTTPPort": port]
        }
        let echo = try await queue.send(PathRequest<Echo>("/anything"))
        XCTAssertNil(echo.headers["X-Courier-Proxy"])
    }
}
#endif
