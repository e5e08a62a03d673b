import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// 5,000 requests through one queue while faults happen: random cancels from other threads,
/// timeouts, slow and dripping responses, error statuses, refused connections, and the server
/// killed with SIGKILL mid-flight and restarted. Every request must end exactly once, with the
/// error its fault calls for, before the deadline.
final class FaultStressTests: XCTestCase {
    enum Kind: String, CaseIterable {
        case ok, status, slow, drip, refused
    }

    struct Record {
        var kind: Kind
        var added: Date
        var outcomes: [String] = []
        var finished: Date?
        var cancelIssued = false
    }

    func testEveryRequestEndsExactlyOnceUnderFaults() throws {
        let server = KillableServer(gunicorn: try KillableServer.gunicornPath(), port: HTTPBin.closedPort())
        try server.start()
        defer { server.kill() }
        let refusedURL = "http://127.0.0.1:\(HTTPBin.closedPort())/get"
        // Slow and dripping answers come from the SSE server, whose answers never come in time:
        // /held/KEY sends nothing for 60 s, /events/endless sends a head and then an event every
        // 100 ms for days. httpbin's /delay/1 and /drip?duration=1 raced the 0.3 s and 0.4 s
        // timeouts with a margin of 0.6 s, which a busy machine under ThreadSanitizer can eat
        // (the queue's timer late, the answer first); these leave 59 s, or no end at all.
        let sse = try HTTPBin.sseServer().absoluteString

        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = DispatchQueue(label: "fault-stress.callbacks")
        configuration.maxConcurrentRequests = 32
        configuration.timeoutInterval = 10
        configuration.transport = HTTPBin.transport
        let queue = RequestQueue(configuration: configuration, baseURL: server.url)

        let total = 5_000
        let seed = UInt64.random(in: 1...UInt64.max)
        print("FaultStressTests seed: \(seed)")
        let records = Locked<[RequestID: Record]>([:])
        let issued = Locked<[RequestID]>([])
        let delivered = Locked(0)
        let done = expectation(description: "\(total) results")
        done.expectedFulfillmentCount = total
        let start = Date()
        // Every request must end by then: a request that never ends would hold the test until the
        // deadline. The whole run takes about 15 s on an idle 2-core machine; 300 s is 20 times
        // that, so only a request that hangs, not a slow machine, reaches it.
        let deadline = start.addingTimeInterval(300)
        let downWindow = Locked<(Date?, Date?)>((nil, nil))
        let killAt = total / 3, restartAt = total / 3 + 600
        let faultQueue = DispatchQueue(label: "fault-stress.server")
        // At most 200 requests outstanding, so that the load spreads over time and the server's
        // death hits a few hundred requests rather than all that are left.
        let outstanding = DispatchSemaphore(value: 200)

        @Sendable func request(_ kind: Kind, _ number: Int) -> PathRequest<EmptyResponse> {
            switch kind {
            case .ok: PathRequest("/get?n=\(number)")
            case .status: PathRequest(number.isMultiple(of: 2) ? "/status/503" : "/status/404")
            // Each slow request is a URL of its own: one that joined a transfer started earlier
            // (identical requests share one) could end within its timeout.
            case .slow: PathRequest("\(sse)/held/fault-stress-\(seed)-\(number)", timeout: 0.3)
            case .drip: PathRequest("\(sse)/events/endless?interval_ms=100&count=1000000&n=\(number)", timeout: 0.4)
            case .refused: PathRequest(refusedURL)
            }
        }

        // When 4 threads add 1,250 requests each while 2 threads cancel at random
        DispatchQueue.concurrentPerform(iterations: 6) { thread in
            var random = SeededGenerator(seed: seed &+ UInt64(thread))
            if thread >= 4 {
                for _ in 0..<600 {
                    let victim = issued.withLock { $0.isEmpty ? nil : $0[Int(random.next() % UInt64($0.count))] }
                    guard let victim else { continue }
                    records.withLock { $0[victim]?.cancelIssued = true }
                    queue.cancel(victim)
                }
                return
            }
            for number in 0..<(total / 4) {
                let roll = random.next() % 100
                let kind: Kind = roll < 55 ? .ok : roll < 70 ? .status : roll < 80 ? .slow : roll < 88 ? .drip : .refused
                guard outstanding.wait(timeout: .now() + 60) == .success else { return }
                let added = Date()
                let id = queue.add(request(kind, thread * 10_000 + number))
                records.withLock { $0[id] = Record(kind: kind, added: added) }
                issued.withLock { $0.append(id) }
                queue.addObserver(for: id) { (result: Result<EmptyResponse, RequestError>) in
                    let outcome = switch result {
                    case .success: "success"
                    case .failure(.validationFailed(let response, _)): "status \(response.statusCode)"
                    case .failure(.transportFailed(let error)) where error.code == .unknown:
                        "transport -1 \((error as NSError).userInfo[NSUnderlyingErrorKey] ?? "")"
                    case .failure(.transportFailed(let error)): "transport \(error.code.rawValue)"
                    case .failure(let error): "\(error)".components(separatedBy: ":").first ?? "\(error)"
                    }
                    records.withLock {
                        $0[id]?.outcomes.append(outcome)
                        $0[id]?.finished = Date()
                    }
                    let count = delivered.withLock { $0 += 1; return $0 }
                    // The server dies a third of the way through and comes back 600 results later.
                    if count == killAt {
                        faultQueue.async { downWindow.withLock { $0.0 = Date() }; server.kill() }
                    } else if count == restartAt {
                        faultQueue.async { try? server.start(); downWindow.withLock { $0.1 = Date() } }
                    }
                    outstanding.signal()
                    done.fulfill()
                }
            }
        }
        wait(for: [done], timeout: deadline.timeIntervalSinceNow)
        faultQueue.sync {}
        configuration.callbackQueue.sync {}

        // Then: exactly one result per request, each the one its fault calls for, all in time
        let (down, up) = downWindow.withLock { $0 }
        let all = records.withLock { $0 }
        var counts: [String: Int] = [:]
        var wrong: [String] = []
        for (id, record) in all {
            XCTAssertEqual(record.outcomes.count, 1, "request \(id) (\(record.kind)) ended \(record.outcomes.count) times: \(record.outcomes)")
            guard let outcome = record.outcomes.first, let finished = record.finished else { continue }
            counts["\(record.kind.rawValue) → \(outcome)", default: 0] += 1
            XCTAssertLessThan(finished, deadline)
            var allowed: Set<String> = switch record.kind {
            case .ok: ["success"]
            case .status: ["status 503", "status 404"]
            case .slow, .drip: ["The request timed out"]
            case .refused: ["transport \(URLError.Code.cannotConnectToHost.rawValue)"]
            }
            if record.cancelIssued { allowed.insert("The request was cancelled.") }
            // While the server was down (and just after), anything it served may fail on the wire.
            let windowStart = (down ?? .distantFuture).addingTimeInterval(-0.5)
            let windowEnd = (up ?? .distantFuture).addingTimeInterval(1)
            if record.added < windowEnd && finished > windowStart {
                allowed.formUnion(["transport \(URLError.Code.cannotConnectToHost.rawValue)",
                                   "transport \(URLError.Code.networkConnectionLost.rawValue)",
                                   "transport \(URLError.Code.badServerResponse.rawValue)",
                                   "The request timed out"])
            }
            if !allowed.contains(where: { outcome.hasPrefix($0) }) {
                wrong.append("\(id) \(record.kind): \(outcome)")
            }
        }
        XCTAssertEqual(all.count, total)
        XCTAssertEqual(delivered.withLock { $0 }, total, "no request may end twice or never")
        XCTAssertTrue(wrong.isEmpty, "unexpected outcomes: \(wrong.prefix(10))")
        XCTAssertNotNil(down, "the server was never killed")
        XCTAssertNotNil(up, "the server was never restarted")

        print("FaultStressTests: \(total) requests in \(String(format: "%.1f", Date().timeIntervalSince(start))) s; "
              + "server down for \(String(format: "%.2f", (up ?? Date()).timeIntervalSince(down ?? Date()))) s")
        for (key, count) in counts.sorted(by: { $0.key < $1.key }) {
            print("  \(key): \(count)")
        }
    }
}
