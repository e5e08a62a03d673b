import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

struct DurableMessage: Decodable, Sendable, Equatable {
    let id: Int
    let text: String
}

struct DurableDraft: JSONBodyData {
    let text: String
}

/// A durable write: POST /messages/<name> with a JSON body, answered by a ``DurableMessage``.
struct SendDurableMessage: Request {
    typealias ResponseType = DurableMessage
    var name: String
    var parameters: DurableDraft { DurableDraft(text: name) }
    var path: String { "/messages/\(name)" }
    var method: HTTPMethod { .post }
}

/// A queue with a journal in the test's folder, its requests answered by a ``StubTransport``.
class DurableQueueTestCase: JournalTestCase {
    let callbacks = DispatchQueue(label: "DurableQueueTests.callbacks")

    func durableQueue(_ transport: StubTransport, types: DurableResponseTypes = [DurableMessage.self],
                      limits: Durability.Limits = Durability.Limits(),
                      retryPolicy: RetryPolicy? = nil, delegate: (any RequestQueueDelegate)? = nil) -> RequestQueue {
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = callbacks
        configuration.retryPolicy = retryPolicy
        configuration.durability = Durability(folder: folder, responseTypes: types, limits: limits)
        return RequestQueue(configuration: configuration, delegate: delegate, baseURL: URL(string: "https://api.example.com"),
                            transport: transport)
    }

    /// Waits for the delivery blocks under way first: a result is noted as delivered once its
    /// observers' block has ended, and a queue released before that gives it again after a reopen.
    func release(_ queue: inout RequestQueue?, transport: StubTransport, file: StaticString = #filePath, line: UInt = #line) {
        callbacks.sync {}
        queue = nil
        XCTAssertTrue(transport.waitForInvalidation(), "the queue was not released", file: file, line: line)
    }

    /// A copy of the journal's files, opened as a journal of its own: what is on disk now,
    /// read without the queue's lock on the original.
    func journalOnDisk() throws -> Journal {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("courier-journal-copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: copy) }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: databasePath + suffix) {
            try FileManager.default.copyItem(atPath: databasePath + suffix,
                                             toPath: copy.appendingPathComponent(Journal.fileName).path + suffix)
        }
        let journal = try Journal(folder: copy)
        addTeardownBlock { journal.close() }
        return journal
    }

    static func created(_ id: Int, _ text: String) -> StubTransport.Reply {
        .json("{\"id\": \(id), \"text\": \"\(text)\"}", status: 201)
    }
}

/// Durable requests through the queue: journaled before `addDurably` returns, one
/// Idempotency-Key for every attempt, resumed after a reopen with their IDs, results of
/// unregistered types, and bad folders.
final class DurableQueueTests: DurableQueueTestCase {
    func testTheRequestIsJournaledBeforeAddDurablyReturns() throws {
        // Given a durable queue whose transport holds every request
        let transport = StubTransport { _ in .hold }
        let queue = durableQueue(transport)
        // When a request is added durably
        let id = try queue.addDurably(SendDurableMessage(name: "one"), lane: "chat-42")
        // Then the journal's file, read as it is on disk now, has it, with its ID and a key
        let pending = try journalOnDisk().pending()
        XCTAssertEqual(pending.count, 1)
        XCTAssertEqual(pending.first?.requestID, String(id.rawValue))
        XCTAssertEqual(pending.first?.request.method, "POST")
        XCTAssertEqual(pending.first?.request.url.absoluteString, "https://api.example.com/messages/one")
        XCTAssertEqual(pending.first?.request.lane, "chat-42")
        XCTAssertEqual(pending.first?.request.body, .bytes(Data("{\"text\":\"one\"}".utf8)))
        XCTAssertEqual(pending.first?.request.headerFields["Content-Type"], "application/json")
        XCTAssertEqual(pending.first?.request.responseType, String(reflecting: DurableMessage.self))
        XCTAssertEqual(pending.first?.idempotencyKey.count, 36)
        XCTAssertTrue(id.isDurable)
        XCTAssertTrue(transport.waitForStarts(1))
        transport.releaseAll(with: Self.created(1, "one"))
    }

    func testTheSameIdempotencyKeyGoesWithEveryAttempt() throws {
        // Given a durable queue whose first attempt is refused for now (503), and a retry policy
        // (a connection refused would not count as an attempt: DurableOfflineTests)
        let attempts = Locked(0)
        let transport = StubTransport { _ in
            attempts.withLock { $0 += 1; return $0 } == 1 ? .status(503) : Self.created(7, "retried")
        }
        let queue = durableQueue(transport, retryPolicy: RetryPolicy(maximumAttempts: 3, baseDelay: 0.01, jitter: 0))
        // When a POST is added durably
        let id = try queue.addDurably(SendDurableMessage(name: "retried"))
        // Then it ends with the second attempt's response
        XCTAssertEqual(try result(of: id, on: queue, as: DurableMessage.self)?.get(), DurableMessage(id: 7, text: "retried"))
        // And both attempts (a POST, retried for its key) carried the journal's key
        let keys = transport.started.map { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        XCTAssertEqual(keys.count, 2)
        XCTAssertEqual(keys[0], keys[1])
        let journal = try journalOnDisk()
        let entry = try XCTUnwrap(try journal.entry(String(id.rawValue)))
        XCTAssertEqual(keys[0], entry.idempotencyKey)
        // And the journal counted the failed attempt and kept the result
        XCTAssertEqual(entry.attempts, 1)
        XCTAssertEqual(entry.state, .ended)
        guard case .response(201, _, let body)? = try journal.result(String(id.rawValue))?.outcome else {
            return XCTFail("no response journaled")
        }
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "{\"id\": 7, \"text\": \"retried\"}")
    }

    func testAWriteAddedAgainUnderItsKeyIsTheSameRequestAcrossAReopen() throws {
        // Given a write added under the app's key, in flight when its queue is released
        let first = StubTransport { _ in .hold }
        var queue: RequestQueue? = durableQueue(first)
        let id = try queue!.addDurably(SendDurableMessage(name: "keyed"), lane: "chat", key: "draft-7")
        XCTAssertEqual(try queue!.addDurably(SendDurableMessage(name: "keyed"), key: "draft-7"), id)
        XCTAssertTrue(first.waitForStarts(1))
        release(&queue, transport: first)

        // When the app adds it again after a reopen, not knowing whether the first add went through
        let second = StubTransport { _ in Self.created(9, "keyed") }
        let reopened = durableQueue(second)
        let again = try reopened.addDurably(SendDurableMessage(name: "keyed"), lane: "chat", key: "draft-7")

        // Then it is the same request: one result, and every attempt carried the app's key
        XCTAssertEqual(again, id)
        XCTAssertEqual(try result(of: id, on: reopened, as: DurableMessage.self)?.get(), DurableMessage(id: 9, text: "keyed"))
        let keys = (first.started + second.started).map { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        XCTAssertEqual(keys, ["draft-7", "draft-7"])
        XCTAssertEqual(try journalOnDisk().pending(), [])
    }

    func testATypeObserverAfterARestartGetsTheResultsNobodySawOnce() throws {
        // Given a durable write that ended with nobody watching, then the app ended
        let first = StubTransport { _ in Self.created(5, "unseen") }
        var queue: RequestQueue? = durableQueue(first)
        let id = try queue!.addDurably(SendDurableMessage(name: "unseen"))
        XCTAssertTrue(first.waitForStarts(1))
        XCTAssertTrue(eventually { (try? self.journalOnDisk().results(undeliveredOnly: true).count) == 1 })
        release(&queue, transport: first)

        // When the relaunched app observes the type, then observes it again with another owner
        let reopened = durableQueue(StubTransport())
        let owner = ObserverOwner(), later = ObserverOwner()
        let heard = Recorder<Result<DurableMessage, RequestError>>()
        let got = expectation(description: "the type observer got the kept result")
        reopened.addObserver(ownedBy: owner) { (result: Result<DurableMessage, RequestError>) in heard.append(result); got.fulfill() }
        wait(for: [got], timeout: 30)
        XCTAssertTrue(eventually { (try? self.journalOnDisk().results(undeliveredOnly: true).count) == 0 })
        let heardLater = Recorder<Result<DurableMessage, RequestError>>()
        reopened.addObserver(ownedBy: later) { (result: Result<DurableMessage, RequestError>) in heardLater.append(result) }

        // Then the first got it once; the second, registered after it was seen, got nothing; its ID still finds it
        XCTAssertEqual(try heard.all.map { try $0.get() }, [DurableMessage(id: 5, text: "unseen")])
        XCTAssertEqual(try result(of: id, on: reopened, as: DurableMessage.self)?.get(), DurableMessage(id: 5, text: "unseen"))
        callbacks.sync {}
        reopened.workQueue.sync(flags: .barrier) {}
        callbacks.sync {}
        XCTAssertEqual(heardLater.count, 0)
        XCTAssertEqual(heard.count, 1)
    }

    func testPendingDurableRequestsListsWhatHasNotEndedAcrossARelaunch() throws {
        // Given two durable writes held by the transport, one in a lane under the app's key
        let first = StubTransport { _ in .hold }
        var queue: RequestQueue? = durableQueue(first)
        let keyed = try queue!.addDurably(SendDurableMessage(name: "a"), lane: "chat", key: "draft-1")
        let other = try queue!.addDurably(SendDurableMessage(name: "b"))
        XCTAssertTrue(first.waitForStarts(2))

        // Then both are listed, in order, with what they are
        let listed = try queue!.pendingDurableRequests()
        XCTAssertEqual(listed.map(\.id), [keyed, other])
        XCTAssertEqual(listed.map(\.lane), ["chat", nil])
        XCTAssertEqual(listed.first?.key, "draft-1")
        XCTAssertEqual(listed.map(\.method), ["POST", "POST"])
        XCTAssertEqual(listed.map(\.url.path), ["/messages/a", "/messages/b"])
        XCTAssertEqual(listed.map(\.attempts), [0, 0])
        release(&queue, transport: first)

        // When the app relaunches and the first is cancelled, the second answered
        let second = StubTransport { request in request.url?.path == "/messages/a" ? .hold : Self.created(2, "b") }
        let reopened = durableQueue(second)
        XCTAssertEqual(try reopened.pendingDurableRequests().first?.id, keyed, "the held one is listed after the relaunch")
        reopened.cancel(keyed)
        XCTAssertEqual(try result(of: other, on: reopened, as: DurableMessage.self)?.get(), DurableMessage(id: 2, text: "b"))
        guard case .failure(.cancelled)? = result(of: keyed, on: reopened, as: DurableMessage.self) else {
            return XCTFail("the cancelled one did not end cancelled")
        }

        // Then nothing is pending any more, and a queue without durability says it has none
        XCTAssertTrue(eventually { (try? reopened.pendingDurableRequests().isEmpty) == true })
        XCTAssertThrowsError(try makeQueue(transport: StubTransport()).pendingDurableRequests()) { error in
            XCTAssertEqual((error as? JournalError)?.kind, .notConfigured)
        }
    }

    func testAKeyThatCannotBeSentIsRefused() throws {
        let queue = durableQueue(StubTransport())
        for key in ["", "a\r\nInjected: 1"] {
            XCTAssertThrowsError(try queue.addDurably(SendDurableMessage(name: "x"), key: key)) { error in
                XCTAssertEqual((error as? JournalError)?.kind, .requestNotJournalable, "\(error)")
            }
        }
    }

    func testAReopenedQueueSendsThePendingRequestOnceAndDeliversItsResultUnderItsID() throws {
        // Given a durable request in flight when its queue is released (the app ends)
        let first = StubTransport { _ in .hold }
        var queue: RequestQueue? = durableQueue(first)
        let id = try queue!.addDurably(SendDurableMessage(name: "later"))
        XCTAssertTrue(first.waitForStarts(1))
        let key = first.started.first?.value(forHTTPHeaderField: "Idempotency-Key")
        release(&queue, transport: first)
        // When a queue is opened on the same folder
        let second = StubTransport { _ in Self.created(3, "later") }
        queue = durableQueue(second)
        // Then it sends the request again, once, with the same key
        XCTAssertTrue(second.waitForStarts(1))
        // And an observer added now gets its result under the same ID
        XCTAssertEqual(try result(of: id, on: queue!, as: DurableMessage.self)?.get(), DurableMessage(id: 3, text: "later"))
        XCTAssertEqual(second.started.map { $0.value(forHTTPHeaderField: "Idempotency-Key") }, [key])
        XCTAssertEqual(second.started.map { $0.url?.absoluteString }, ["https://api.example.com/messages/later"])
        XCTAssertEqual(second.started.first?.httpBody, Data("{\"text\":\"later\"}".utf8))
        release(&queue, transport: second)
        // And a third opening sends nothing and has no result left for it: the app got it once
        let third = StubTransport { _ in .status(500) }
        queue = durableQueue(third)
        let again = result(of: id, on: queue!, as: DurableMessage.self)
        guard case .failure(.resultUnavailable(id))? = again else {
            return XCTFail("the result was delivered again: \(String(describing: again))")
        }
        XCTAssertEqual(third.started.count, 0)
    }

    func testAResultOfARequestEndedBeforeTheReopenIsDeliveredAfterIt() throws {
        // Given a durable request that ended while nobody observed it, and its queue released
        let first = StubTransport { _ in Self.created(4, "unseen") }
        let finished = FinishDelegate(expectation(description: "finished"))
        var queue: RequestQueue? = durableQueue(first, delegate: finished)
        let id = try queue!.addDurably(SendDurableMessage(name: "unseen"))
        // (The delegate hears of the end after the journal has the result.)
        wait(for: [finished.finished], timeout: 30)
        XCTAssertNotNil(try journalOnDisk().result(String(id.rawValue)))
        release(&queue, transport: first)
        // When the queue is opened again and an observer asks for the ID
        let second = StubTransport { _ in .status(500) }
        queue = durableQueue(second)
        // Then it gets the journaled result, decoded into the registered type, and nothing is sent
        XCTAssertEqual(try result(of: id, on: queue!, as: DurableMessage.self)?.get(), DurableMessage(id: 4, text: "unseen"))
        XCTAssertEqual(second.started.count, 0)
    }

    func testAResultOfAnUnregisteredTypeKeepsTheRawResponse() throws {
        // Given a request pending when its queue is released
        let first = StubTransport { _ in .hold }
        var queue: RequestQueue? = durableQueue(first)
        let id = try queue!.addDurably(SendDurableMessage(name: "raw"))
        XCTAssertTrue(first.waitForStarts(1))
        release(&queue, transport: first)
        // When it is reopened without its response type registered, and the server answers
        let second = StubTransport { _ in Self.created(5, "raw") }
        queue = durableQueue(second, types: [])
        // Then the observer gets a failure naming the type, with the response as it came
        guard case .failure(.responseTypeNotRegistered(let name, let response, let body))? = result(
            of: id, on: queue!, as: DurableMessage.self) else { return XCTFail("not a responseTypeNotRegistered") }
        XCTAssertEqual(name, String(reflecting: DurableMessage.self))
        XCTAssertEqual(response.statusCode, 201)
        XCTAssertEqual(String(decoding: body.data, as: UTF8.self), "{\"id\": 5, \"text\": \"raw\"}")
    }

    func testAReadOnlyFolderMakesAddDurablyThrowAtOnceAndSendsNothing() throws {
        // Given a read-only folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard let restore = try makeReadOnly(folder) else { throw XCTSkip("cannot make a folder read-only for this user") }
        defer { restore() }
        // When a queue is opened on it
        var configuration = RequestQueueConfiguration.default
        configuration.durability = Durability(folder: folder)
        XCTAssertThrowsError(try RequestQueue.open(configuration: configuration)) { error in
            // Then opening says so
            XCTAssertEqual((error as? JournalError)?.kind, .readOnly)
        }
        // And a queue made anyway throws the same at every durable add, and sends nothing
        let transport = StubTransport()
        let queue = durableQueue(transport)
        XCTAssertThrowsError(try queue.addDurably(SendDurableMessage(name: "x"))) { error in
            XCTAssertEqual((error as? JournalError)?.kind, .readOnly)
        }
        XCTAssertEqual(transport.started.count, 0)
    }

    func testAFullDiskMakesAddDurablyThrowAtOnceAndSendsNothing() throws {
        // Given a durable queue whose journal may not grow past 12 pages (a full disk)
        let transport = StubTransport { _ in .hold }
        var limits = Durability.Limits()
        limits.maximumPageCount = 12
        let queue = durableQueue(transport, limits: limits)
        // When requests with 2 KiB bodies are added until one fails
        var failure: JournalError?
        var accepted = 0
        for index in 0..<100 {
            do {
                try queue.addDurably(Endpoint(.post, "/big/\(index)", parameters: DurableDraft(text: String(repeating: "x", count: 2048)),
                                              as: DurableMessage.self), lane: "one-at-a-time")
                accepted += 1
            } catch {
                failure = error
                break
            }
        }
        // Then the failure says the disk is full, and only the accepted ones were journaled
        XCTAssertEqual(failure?.kind, .diskFull)
        XCTAssertEqual(try journalOnDisk().pending().count, accepted)
        // And the lane sent only its first one so far
        XCTAssertTrue(transport.waitForStarts(1))
        XCTAssertEqual(transport.started.map { $0.url?.path }, ["/big/0"])
        transport.releaseAll(with: .status(500))
    }

    func testWithoutDurabilityAddDurablyThrowsNotConfigured() {
        // Given a queue without durability
        let transport = StubTransport()
        let queue = RequestQueue(configuration: .default, delegate: nil, baseURL: URL(string: "https://api.example.com"),
                                 transport: transport)
        // When a request is added durably, then it is refused at once and nothing is sent
        XCTAssertThrowsError(try queue.addDurably(SendDurableMessage(name: "x"))) { error in
            XCTAssertEqual((error as? JournalError)?.kind, .notConfigured)
        }
        XCTAssertEqual(transport.started.count, 0)
    }
}

/// Tells the test that a request has ended (after its result was journaled).
final class FinishDelegate: RequestQueueDelegate {
    let finished: XCTestExpectation

    init(_ finished: XCTestExpectation) {
        self.finished = finished
    }

    func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics) {
        finished.fulfill()
    }
}
