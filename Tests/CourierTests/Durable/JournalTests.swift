import Foundation
import XCTest
@testable import Courier

/// The journal of durable requests: what it keeps across a reopen, attempts, exactly one result
/// per request, delivery, purging and bounds.
final class JournalTests: JournalTestCase {
    // MARK: Round trip

    func testEveryFieldSurvivesAReopen() throws {
        // Given a journal with a request of every body kind, with and without a lane
        var journal: Journal? = try openJournal()
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("courier-journal-body-\(UUID().uuidString)")
        try Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 13) }).write(to: source)
        defer { try? FileManager.default.removeItem(at: source) }
        let bytes = try journal!.append(Self.sampleRequest(1), at: date(1_700_000_000_001))
        let none = try journal!.append(Self.sampleRequest(2, lane: nil, body: JournalBody.none), at: date(1_700_000_000_002))
        let file = try journal!.append(Self.sampleRequest(3, body: .file(source)), at: date(1_700_000_000_003))
        // When it is closed and opened again (after the app deleted its body file)
        journal!.close()
        try FileManager.default.removeItem(at: source)
        journal = try openJournal()
        // Then every request comes back equal, in the order added, its body file a copy in the journal's folder
        let pending = try journal!.pending()
        XCTAssertEqual(pending, [bytes, none, file])
        XCTAssertEqual(pending.map(\.sequence), [1, 2, 3])
        XCTAssertEqual(pending[0].request, Self.sampleRequest(1))
        XCTAssertEqual(pending[1].request.lane, nil)
        XCTAssertEqual(pending[1].request.body, JournalBody.none)
        XCTAssertEqual(pending[0].addedAt, date(1_700_000_000_001))
        XCTAssertEqual(pending[0].nextAttemptAt, date(1_700_000_000_001))
        XCTAssertEqual(pending[0].attempts, 0)
        XCTAssertEqual(pending[0].state, .pending)
        let copy = folder.appendingPathComponent("bodies").appendingPathComponent(file.requestID)
        XCTAssertEqual(pending[2].request.body, .file(copy))
        XCTAssertEqual(try Data(contentsOf: copy), Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 13) }))
        // And each request has an ID and an Idempotency-Key of its own, made once
        XCTAssertEqual(Set(pending.map(\.requestID)).count, 3)
        XCTAssertEqual(Set(pending.map(\.idempotencyKey)).count, 3)
        XCTAssertEqual(Set(pending.map(\.requestID)).intersection(pending.map(\.idempotencyKey)), [])
        XCTAssertEqual(try journal!.entry(bytes.requestID), bytes)
        XCTAssertNil(try journal!.entry("no-such-id"))
    }

    func testAMissingBodyFileIsRefusedAndNothingIsKept() throws {
        // Given a journal and a body file that does not exist
        let journal = try openJournal()
        let missing = folder.appendingPathComponent("no-such-body")
        // When a request with it is added
        XCTAssertThrowsError(try journal.append(Self.sampleRequest(1, body: .file(missing)))) { error in
            // Then it is refused, naming the file
            XCTAssertEqual((error as? JournalError)?.kind, .failed)
            XCTAssertEqual((error as? JournalError)?.detail.hasPrefix("cannot copy the body file \(missing.path): "), true, "\(error)")
        }
        // And nothing was journaled or copied
        XCTAssertEqual(try journal.pending(), [])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("bodies").path), [])
    }

    func testAnAppsKeyAddsItsWriteOnceEvenAcrossAReopen() throws {
        // Given a journal with a request added under the app's key, its body a file
        var journal: Journal? = try openJournal()
        let file = folder.appendingPathComponent("upload.bin")
        try Data("body".utf8).write(to: file)
        let first = try journal!.append(Self.sampleRequest(1, body: .file(file)), requestID: "r1", key: "message-7")
        journal!.close()
        journal = try openJournal()

        // When the same write is added again under the same key, and another under its own
        let again = try journal!.append(Self.sampleRequest(1, body: .file(file)), requestID: "r2", key: "message-7")
        let other = try journal!.append(Self.sampleRequest(2), requestID: "r3", key: "message-8")

        // Then the second add is the first request, the key is the one sent, and no copy of the body is left for it
        XCTAssertEqual(first.idempotencyKey, "message-7")
        XCTAssertEqual(again, first)
        XCTAssertEqual(try journal!.pending().map(\.requestID), ["r1", "r3"])
        XCTAssertEqual(other.idempotencyKey, "message-8")
        let bodies = folder.appendingPathComponent(Journal.bodiesFolderName)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: bodies.path), ["r1"])
        journal!.close()
    }

    func testAttemptsAreCountedAcrossAReopen() throws {
        // Given a pending request
        var journal: Journal? = try openJournal()
        let entry = try journal!.append(Self.sampleRequest(1), at: date(1_000))
        // When two attempts are marked and the journal reopened
        try journal!.markAttempt(entry.requestID, nextAttemptAt: date(5_000))
        try journal!.markAttempt(entry.requestID, nextAttemptAt: date(9_000))
        journal!.close()
        journal = try openJournal()
        // Then it has two attempts and the last next attempt time
        let pending = try journal!.pending()
        XCTAssertEqual(pending.map(\.attempts), [2])
        XCTAssertEqual(pending.map(\.nextAttemptAt), [date(9_000)])
        // And an unknown ID is a typed error
        XCTAssertThrowsError(try journal!.markAttempt("nope", nextAttemptAt: date(1))) { error in
            XCTAssertEqual((error as? JournalError)?.kind, .unknownRequest("nope"))
        }
    }

    // MARK: Results

    func testARequestHasExactlyOneResultAcrossAReopen() throws {
        // Given two pending requests
        var journal: Journal? = try openJournal()
        let first = try journal!.append(Self.sampleRequest(1), at: date(1_000))
        let second = try journal!.append(Self.sampleRequest(2), at: date(1_001))
        let head: HTTPFields = [HTTPField(name: "Content-Type", value: "application/json"), HTTPField(name: "Set-Cookie", value: "a=1")]
        // When one gets a response, then a second result, and the other a failure
        XCTAssertTrue(try journal!.recordResult(first.requestID, .response(status: 201, headerFields: head, body: Data("ok".utf8)),
                                                at: date(2_000)))
        XCTAssertFalse(try journal!.recordResult(first.requestID, .failure("late"), at: date(2_500)))
        XCTAssertTrue(try journal!.recordResult(second.requestID, .failure("The origin refused the write"), at: date(3_000)))
        journal!.close()
        journal = try openJournal()
        // Then after a reopen nothing is pending and each has its first result, undelivered
        XCTAssertEqual(try journal!.pending(), [])
        XCTAssertEqual(try journal!.results(), [
            JournalResult(requestID: first.requestID, outcome: .response(status: 201, headerFields: head, body: Data("ok".utf8)),
                          endedAt: date(2_000), delivered: false),
            JournalResult(requestID: second.requestID, outcome: .failure("The origin refused the write"), endedAt: date(3_000),
                          delivered: false),
        ])
        XCTAssertEqual(try journal!.entry(first.requestID)?.state, .ended)
        XCTAssertEqual(journal!.usage.pendingRequests, 0)
        // And a result for an unknown request is a typed error
        XCTAssertThrowsError(try journal!.recordResult("nope", .failure("x"))) { error in
            XCTAssertEqual((error as? JournalError)?.kind, .unknownRequest("nope"))
        }
    }

    func testDeliveredResultsArePurgedWithTheirRequestsAndBodyCopies() throws {
        // Given three ended requests (one with a body file) and one pending, results kept an hour once
        // delivered and a day undelivered
        var configuration = JournalConfiguration()
        configuration.deliveredResultRetention = 3_600
        configuration.undeliveredResultRetention = 86_400
        let journal = try openJournal(configuration)
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("courier-journal-body-\(UUID().uuidString)")
        try Data("file body".utf8).write(to: source)
        defer { try? FileManager.default.removeItem(at: source) }
        let delivered = try journal.append(Self.sampleRequest(1, body: .file(source)), at: date(0))
        let deliveredLater = try journal.append(Self.sampleRequest(2), at: date(0))
        let undelivered = try journal.append(Self.sampleRequest(3), at: date(0))
        let pending = try journal.append(Self.sampleRequest(4), at: date(0))
        try journal.recordResult(delivered.requestID, .failure("a"), at: date(1_000))
        try journal.recordResult(deliveredLater.requestID, .failure("b"), at: date(5_000_000))
        try journal.recordResult(undelivered.requestID, .failure("c"), at: date(1_000))
        try journal.markDelivered(delivered.requestID)
        try journal.markDelivered(deliveredLater.requestID)
        // When purged two hours after the first results ended
        let purge = try journal.purge(at: date(1_000 + 7_200_000))
        // Then only the first delivered result (and its request and body copy) is gone
        XCTAssertEqual(purge, JournalPurge(results: 1, requests: 1))
        XCTAssertEqual(try journal.results(undeliveredOnly: false).map(\.requestID), [undelivered.requestID, deliveredLater.requestID])
        XCTAssertEqual(try journal.results().map(\.requestID), [undelivered.requestID])
        XCTAssertNil(try journal.entry(delivered.requestID))
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("bodies/\(delivered.requestID)").path))
        XCTAssertEqual(try journal.pending().map(\.requestID), [pending.requestID])
        // When purged two days later
        XCTAssertEqual(try journal.purge(at: date(1_000 + 2 * 86_400_000)), JournalPurge(results: 2, requests: 2))
        // Then only the pending request is left
        XCTAssertEqual(try journal.results(undeliveredOnly: false), [])
        XCTAssertEqual(try journal.pending().map(\.requestID), [pending.requestID])
        XCTAssertThrowsError(try journal.markDelivered(delivered.requestID)) { error in
            XCTAssertEqual((error as? JournalError)?.kind, .unknownRequest(delivered.requestID))
        }
    }

    // MARK: Bounds

    func testTheDefaultBounds() {
        // Given the default configuration
        let configuration = JournalConfiguration()
        // Then its bounds and retention are as documented
        XCTAssertEqual(configuration.maximumPendingRequests, 10_000)
        XCTAssertEqual(configuration.maximumBytes, 67_108_864)
        XCTAssertEqual(configuration.deliveredResultRetention, 0)
        XCTAssertEqual(configuration.undeliveredResultRetention, 604_800)
        XCTAssertFalse(configuration.checksIndexesAtOpen)
    }

    func testARequestOverTheBoundsIsRefusedAndNothingIsKept() throws {
        // Given a journal for two pending requests and 1,000 bytes
        var configuration = JournalConfiguration()
        configuration.maximumPendingRequests = 2
        configuration.maximumBytes = 1_000
        var journal: Journal? = try openJournal(configuration)
        let first = try journal!.append(Self.sampleRequest(1))
        let second = try journal!.append(Self.sampleRequest(2))
        // When a third is added
        XCTAssertThrowsError(try journal!.append(Self.sampleRequest(3))) { error in
            // Then it is refused as over the bounds
            XCTAssertEqual((error as? JournalError)?.kind, .boundsReached)
            XCTAssertEqual((error as? JournalError)?.detail, "2 requests are pending, the most it holds (maximumPendingRequests)")
        }
        // When one ends, a request too large for the bytes left is refused as well
        try journal!.recordResult(first.requestID, .failure("x"))
        let large = Self.sampleRequest(4, body: .bytes(Data(repeating: 1, count: 800)))
        XCTAssertThrowsError(try journal!.append(large)) { error in
            XCTAssertEqual((error as? JournalError)?.kind, .boundsReached)
        }
        // Then after a reopen only the two accepted requests are there, and the counts are the same
        let usage = journal!.usage
        journal!.close()
        journal = try openJournal(configuration)
        XCTAssertEqual(try journal!.pending().map(\.requestID), [second.requestID])
        XCTAssertEqual(journal!.usage.pendingRequests, 1)
        XCTAssertEqual(journal!.usage.bytes, usage.bytes)
        // And a purge of the delivered result makes room again
        try journal!.markDelivered(first.requestID)
        try journal!.purge()
        XCTAssertNoThrow(try journal!.append(Self.sampleRequest(5)))
    }
}
