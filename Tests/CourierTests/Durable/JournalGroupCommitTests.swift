import Foundation
import XCTest
@testable import Courier

/// Concurrent appends grouped into one transaction: every row present once, fewer transactions
/// than rows, each caller back only once its row is committed.
final class JournalGroupCommitTests: JournalTestCase {
    /// Runs `body(index)` on `count` threads of their own (not a pool: a caller blocked in a commit
    /// must not keep the others from starting) and waits for all of them, at most 30 seconds.
    private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success, "the threads did not finish")
    }

    func testAppendsWaitingForACommitShareTheNextTransaction() throws {
        // Given a journal whose first commit waits until the 15 other appends are queued
        let fifteenQueued = DispatchSemaphore(value: 0)
        let groups = Locked<[Int]>([])
        let journal = try openJournal(
            didQueueAppend: { waiting in if waiting == 15 { fifteenQueued.signal() } },
            willCommitAppends: { size in
                if groups.withLock({ $0.append(size); return $0.count }) == 1 {
                    XCTAssertEqual(fifteenQueued.wait(timeout: .now() + 10), .success)
                }
            })
        // When 16 threads append one request each
        let entries = Locked<[JournalEntry]>([])
        onThreads(16) { index in
            do {
                let entry = try journal.append(Self.sampleRequest(index))
                entries.withLock { $0.append(entry) }
            } catch {
                XCTFail("append \(index) failed: \(error)")
            }
        }
        // Then two transactions committed them: the first alone, the 15 others together
        XCTAssertEqual(groups.withLock { $0 }, [1, 15])
        XCTAssertEqual(journal.appendTransactions, 2)
        // And every row is present once, as each caller was told
        let returned = entries.withLock { $0 }.sorted { $0.sequence < $1.sequence }
        XCTAssertEqual(try journal.pending(), returned)
        XCTAssertEqual(returned.map(\.sequence), Array(1...16))
        XCTAssertEqual(Set(returned.map(\.request.url)).count, 16)
    }

    func testResultsAndNotesOfResultsSeenRideInTheAppendsTransaction() throws {
        // Given a journal with two pending requests, the first's result recorded, whose next
        // commit waits (once it is in it) until three more writes are queued behind it
        let committing = DispatchSemaphore(value: 0)
        let threeQueued = DispatchSemaphore(value: 0)
        let groups = Locked<[Int]>([])
        let armed = Locked(false)
        let journal = try openJournal(
            didQueueAppend: { waiting in if waiting == 3 { threeQueued.signal() } },
            willCommitAppends: { size in
                guard armed.withLock({ $0 }) else { return }
                if groups.withLock({ $0.append(size); return $0.count }) == 1 {
                    committing.signal()
                    XCTAssertEqual(threeQueued.wait(timeout: .now() + 10), .success)
                }
            })
        let first = try journal.append(Self.sampleRequest(1))
        let second = try journal.append(Self.sampleRequest(2))
        XCTAssertTrue(try journal.recordResult(first.requestID, .failure("gone")))
        armed.withLock { $0 = true }

        // When an append is being committed, and meanwhile come the second's result, a note that
        // the first's result was seen, and another append
        let writes: [@Sendable () throws -> Void] = [
            { _ = try journal.append(Self.sampleRequest(3)) },
            { XCTAssertTrue(try journal.recordResult(second.requestID, .response(status: 201, headerFields: [:], body: Data()))) },
            { try journal.markDelivered(first.requestID) },
            { _ = try journal.append(Self.sampleRequest(4)) },
        ]
        let done = DispatchGroup()
        for (index, write) in writes.enumerated() {
            if index == 1 { XCTAssertEqual(committing.wait(timeout: .now() + 10), .success) }
            done.enter()
            Thread {
                do { try write() } catch { XCTFail("write \(index) failed: \(error)") }
                done.leave()
            }.start()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)

        // Then the three rode in one transaction, and each change is there
        XCTAssertEqual(groups.withLock { $0 }, [1, 3])
        XCTAssertEqual(try journal.pending().count, 2)
        XCTAssertEqual(try journal.results(undeliveredOnly: true).map(\.requestID), [second.requestID])
        XCTAssertEqual(try journal.results(undeliveredOnly: false).count, 2)
    }

    func testNotesOfSeveralResultsSeenFromOneCallerAreOneTransaction() throws {
        // Given a journal with three results recorded, counting the groups it commits from then on
        let groups = Locked<[Int]>([])
        let armed = Locked(false)
        let journal = try openJournal(willCommitAppends: { size in
            if armed.withLock({ $0 }) { groups.withLock { $0.append(size) } }
        })
        let entries = try (1...3).map { try journal.append(Self.sampleRequest($0)) }
        for entry in entries { XCTAssertTrue(try journal.recordResult(entry.requestID, .failure("gone"))) }
        armed.withLock { $0 = true }

        // When one caller notes all three as seen, and then a batch with an unknown ID among them
        try journal.markDelivered(entries.map(\.requestID))
        XCTAssertThrowsError(try journal.markDelivered(["no-such-request", entries[0].requestID]))

        // Then the three notes were one transaction (not one flush each), the batch with the
        // unknown ID another, and nothing is left undelivered
        XCTAssertEqual(groups.withLock { $0 }, [3, 2])
        XCTAssertEqual(try journal.results(undeliveredOnly: true).count, 0)
        XCTAssertEqual(try journal.results(undeliveredOnly: false).count, 3)
    }

    func testSixteenThreadsAppendingKeepEveryRowOnceInFewerTransactions() throws {
        // Given a journal
        var journal: Journal? = try openJournal()
        // When 16 threads append 25 requests each, as fast as they can
        let entries = Locked<[JournalEntry]>([])
        let appending = journal!
        onThreads(16) { thread in
            for index in 0..<25 {
                do {
                    let entry = try appending.append(Self.sampleRequest(thread * 1000 + index, lane: "lane-\(thread)"))
                    entries.withLock { $0.append(entry) }
                } catch {
                    XCTFail("append \(thread)/\(index) failed: \(error)")
                }
            }
        }
        // Then fewer transactions than rows committed them
        let transactions = journal!.appendTransactions
        XCTAssertLessThan(transactions, 400)
        XCTAssertGreaterThanOrEqual(transactions, 1)
        // And after a reopen every row is there once, each lane's rows in the order its thread added them
        journal!.close()
        journal = try openJournal()
        let pending = try journal!.pending()
        XCTAssertEqual(pending, entries.withLock { $0 }.sorted { $0.sequence < $1.sequence })
        XCTAssertEqual(pending.count, 400)
        XCTAssertEqual(Set(pending.map(\.requestID)).count, 400)
        for thread in 0..<16 {
            let urls = pending.filter { $0.request.lane == "lane-\(thread)" }.map(\.request.url.path)
            XCTAssertEqual(urls, (0..<25).map { "/messages/\(thread * 1000 + $0)" })
        }
    }

    /// Not a test of behaviour: the figures of durable appends, printed when
    /// COURIER_JOURNAL_MEASURE=1 (skipped otherwise).
    func testMeasureAppendThroughputAndLatency() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["COURIER_JOURNAL_MEASURE"] == "1", "set COURIER_JOURNAL_MEASURE=1")
        for threads in [1, 16] {
            try? FileManager.default.removeItem(at: folder)
            let journal = try Journal(folder: folder)
            defer { journal.close() }
            let perThread = threads == 1 ? 400 : 100
            let latencies = Locked<[Double]>([])
            let start = ContinuousClock.now
            onThreads(threads) { thread in
                for index in 0..<perThread {
                    let began = ContinuousClock.now
                    _ = try? journal.append(Self.sampleRequest(thread * 1000 + index))
                    let elapsed = ContinuousClock.now - began
                    latencies.withLock { $0.append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6) }
                }
            }
            let seconds = Double((ContinuousClock.now - start).components.attoseconds) / 1e18
                + Double((ContinuousClock.now - start).components.seconds)
            let sorted = latencies.withLock { $0 }.sorted()
            let count = sorted.count
            print(String(format: "journal appends, %2d threads: %d appends in %.2f s = %.0f/s; latency µs median %.0f, p99 %.0f; %d transactions",
                         threads, count, seconds, Double(count) / seconds, sorted[count / 2], sorted[count * 99 / 100],
                         journal.appendTransactions))
        }
    }
}
