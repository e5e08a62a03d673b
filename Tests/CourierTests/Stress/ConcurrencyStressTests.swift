import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Eight threads add, cancel, observe, remove observers and release owners at random against one
/// queue, while a stub transport answers from other threads. Run under ThreadSanitizer by
/// Scripts/test.sh; it also checks that every request still ends exactly once.
final class ConcurrencyStressTests: XCTestCase {
    struct Ping: Response, Decodable { let message: String }
    struct Pong: Response, Decodable { let message: String }

    func testEightThreadsDoingEverythingAtOnce() throws {
        // Given a queue whose transport answers, fails or holds at random
        let transport = StubTransport { request in
            switch request.url!.lastPathComponent.utf8.reduce(0, { $0 &+ Int($1) }) & 7 {
            case 0: .failure(.networkConnectionLost)
            case 1: .status(500)
            default: .json(#"{"message":"m"}"#)
            }
        }
        let queue = makeQueue(transport: transport, maxConcurrent: 8, sweepInterval: 0.01)
        let perThread = 300
        let results = Locked<[RequestID: Int]>([:])
        let ids = Locked<[RequestID]>([])
        let done = expectation(description: "every request ended")
        done.expectedFulfillmentCount = 8 * perThread
        let seed = UInt64.random(in: 1...UInt64.max)
        print("ConcurrencyStressTests seed: \(seed)")

        // When 8 threads mix every operation
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var random = SeededGenerator(seed: seed &+ UInt64(thread))
            var owners: [ObserverOwner] = []
            for index in 0..<perThread {
                let id = index.isMultiple(of: 2)
                    ? queue.add(PathRequest<Ping>("/ping/\(thread)-\(index)"))
                    : queue.add(PathRequest<Pong>("/pong/\(thread)-\(index)"))
                ids.withLock { $0.append(id) }
                let observe: @Sendable (RequestID) -> Void = { id in
                    results.withLock { $0[id, default: 0] += 1 }
                    done.fulfill()
                }
                if index.isMultiple(of: 2) {
                    queue.addObserver(for: id) { (_: Result<Ping, RequestError>) in observe(id) }
                } else {
                    queue.addObserver(for: id) { (_: Result<Pong, RequestError>) in observe(id) }
                }
                switch random.next() % 6 {
                case 0:
                    let victim = ids.withLock { $0.randomElement(using: &random) }
                    if let victim { queue.cancel(victim) }
                case 1:
                    let owner = ObserverOwner()
                    owners.append(owner)
                    queue.addObserver(ownedBy: owner) { (_: Result<Ping, RequestError>) in }
                    queue.addObserver(ownedBy: owner) { (_: Result<Pong, RequestError>) in }
                case 2 where !owners.isEmpty:
                    let owner = owners.remove(at: Int(random.next() % UInt64(owners.count)))
                    queue.removeObservers(forType: Ping.self, ownedBy: owner)
                case 3 where !owners.isEmpty:
                    owners.removeFirst()  // released: its observers must go quietly
                case 4:
                    _ = queue.isFinished(id)
                default:
                    break
                }
            }
        }
        wait(for: [done], timeout: 60)
        TestQueues.callbacks.sync {}

        // Then every request ended exactly once
        let counts = results.withLock { $0 }
        XCTAssertEqual(counts.count, 8 * perThread)
        XCTAssertTrue(counts.values.allSatisfy { $0 == 1 }, "some request ended more than once (seed \(seed))")
    }
}

/// A small deterministic generator (SplitMix64), so a failing run can be replayed from its seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
