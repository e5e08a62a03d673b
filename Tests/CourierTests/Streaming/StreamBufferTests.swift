import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The invariants of `StreamBuffer`, the part between a stream's transport and its consumer.
final class StreamBufferTests: XCTestCase {
    private func text(_ taken: StreamBuffer.Taken) -> String {
        switch taken {
        case .chunk(let data, let resume): "chunk \(String(decoding: data, as: UTF8.self))\(resume ? " resume" : "")"
        case .end(nil): "end"
        case .end(let error?): "end \(error)"
        case .wait: "wait"
        }
    }

    private func text(_ appended: StreamBuffer.Appended) -> String {
        switch appended {
        case .more: "more"
        case .pause: "pause"
        case .overflow(let error): "overflow \(error)"
        case .ended: "ended"
        }
    }

    func testChunksComeOutInOrderOnceThenTheEnd() {
        var buffer = StreamBuffer(bufferSize: 100, maximumBufferSize: 1000)
        XCTAssertEqual(text(buffer.append(Data("a".utf8))), "more")
        XCTAssertEqual(text(buffer.append(Data("bc".utf8))), "more")
        XCTAssertEqual(buffer.buffered, 3)
        buffer.finish(nil)
        XCTAssertEqual(text(buffer.take()), "chunk a")
        XCTAssertEqual(text(buffer.take()), "chunk bc")
        XCTAssertEqual(text(buffer.take()), "end")
        XCTAssertEqual(text(buffer.take()), "end")
        XCTAssertEqual(buffer.buffered, 0)
        XCTAssertEqual(buffer.received, 3)
    }

    func testPausesAtTheBufferSizeAndResumesAtHalf() {
        var buffer = StreamBuffer(bufferSize: 10, maximumBufferSize: 1000)
        XCTAssertEqual(text(buffer.append(Data("123".utf8))), "more")
        XCTAssertEqual(text(buffer.append(Data("4567".utf8))), "more")
        XCTAssertEqual(text(buffer.append(Data("890".utf8))), "pause")
        XCTAssertTrue(buffer.isPaused)
        // 7 left: still over half
        XCTAssertEqual(text(buffer.take()), "chunk 123")
        // 3 left: at most half, so the transfer may go on, once
        XCTAssertEqual(text(buffer.take()), "chunk 4567 resume")
        XCTAssertEqual(text(buffer.take()), "chunk 890")
        XCTAssertEqual(text(buffer.take()), "wait")
    }

    func testTooMuchWaitingOverflowsDropsTheWaitingBytesAndEnds() {
        var buffer = StreamBuffer(bufferSize: 4, maximumBufferSize: 8)
        _ = buffer.append(Data("1234".utf8))
        _ = buffer.append(Data("5678".utf8))
        XCTAssertEqual(text(buffer.append(Data("9".utf8))),
                       "overflow \(RequestError.streamLimitExceeded(.bufferSize(8)))")
        XCTAssertEqual(buffer.buffered, 0)
        XCTAssertEqual(text(buffer.take()), "end \(RequestError.streamLimitExceeded(.bufferSize(8)))")
        XCTAssertEqual(text(buffer.append(Data("x".utf8))), "ended")
    }

    func testCancelDropsWaitingChunksButOtherFailuresComeAfterThem() {
        var cancelled = StreamBuffer(bufferSize: 10, maximumBufferSize: 100)
        _ = cancelled.append(Data("a".utf8))
        cancelled.finish(.cancelled)
        XCTAssertEqual(text(cancelled.take()), "end \(RequestError.cancelled)")

        var failed = StreamBuffer(bufferSize: 10, maximumBufferSize: 100)
        _ = failed.append(Data("a".utf8))
        failed.finish(.timedOut)
        XCTAssertEqual(text(failed.take()), "chunk a")
        XCTAssertEqual(text(failed.take()), "end \(RequestError.timedOut)")
    }

    func testTheFirstEndStands() {
        var buffer = StreamBuffer(bufferSize: 10, maximumBufferSize: 100)
        XCTAssertTrue(buffer.finish(.timedOut))
        XCTAssertFalse(buffer.finish(nil))
        XCTAssertFalse(buffer.finish(.cancelled))
        XCTAssertEqual(text(buffer.take()), "end \(RequestError.timedOut)")
    }

    func testNoResumeAfterTheEnd() {
        var buffer = StreamBuffer(bufferSize: 2, maximumBufferSize: 100)
        _ = buffer.append(Data("ab".utf8))
        _ = buffer.append(Data("cd".utf8))
        buffer.finish(nil)
        XCTAssertEqual(text(buffer.take()), "chunk ab")
        XCTAssertEqual(text(buffer.take()), "chunk cd")
        XCTAssertEqual(text(buffer.take()), "end")
    }

    func testManyChunksKeepTheirOrderAcrossCompaction() {
        var buffer = StreamBuffer(bufferSize: 1 << 30, maximumBufferSize: 1 << 30)
        for index in 0..<3000 { _ = buffer.append(Data("\(index),".utf8)) }
        var out = ""
        for _ in 0..<1500 {
            if case .chunk(let data, _) = buffer.take() { out += String(decoding: data, as: UTF8.self) }
        }
        for index in 3000..<3500 { _ = buffer.append(Data("\(index),".utf8)) }
        buffer.finish(nil)
        while case .chunk(let data, _) = buffer.take() { out += String(decoding: data, as: UTF8.self) }
        XCTAssertEqual(out, (0..<3500).map { "\($0)," }.joined())
        XCTAssertEqual(buffer.buffered, 0)
    }
}

/// The invariants of `StreamGate`: a streamed attempt's way from head to sink.
final class StreamGateTests: XCTestCase {
    private let head = ResponseHead(status: 200, url: URL(string: "https://example.com")!)

    private func describe(_ end: StreamGate.EndStep?) -> String {
        switch end {
        case nil: "none"
        case .waitForDecision?: "wait"
        case .failed(let error)?: "failed \(error)"
        case .response(let head, let body)?: "response \(head.status) \(String(decoding: body, as: UTF8.self))"
        case .streamEnded(nil)?: "stream ended"
        case .streamEnded(let error?)?: "stream ended \(error)"
        case .released?: "released"
        }
    }

    func testChunksWhileDecidingAreHeldThenForwardedInOrderOnCommit() {
        var gate = StreamGate(bufferedBodyLimit: 100)
        XCTAssertTrue(gate.receiveHead(head))
        XCTAssertEqual(gate.receiveChunk(Data("a".utf8)), .hold)
        XCTAssertEqual(gate.receiveChunk(Data("b".utf8)), .hold)
        let (forward, end) = gate.decide(.commit)
        XCTAssertEqual(forward, [Data("a".utf8), Data("b".utf8)])
        XCTAssertEqual(describe(end), "none")
        XCTAssertEqual(gate.receiveChunk(Data("c".utf8)), .forward)
        XCTAssertEqual(describe(gate.receiveEnd(nil)), "stream ended")
        XCTAssertEqual(describe(gate.receiveEnd(nil)), "released")
    }

    func testAnEndWhileDecidingWaitsForTheDecision() {
        var commit = StreamGate(bufferedBodyLimit: 100)
        _ = commit.receiveHead(head)
        _ = commit.receiveChunk(Data("a".utf8))
        XCTAssertEqual(describe(commit.receiveEnd(nil)), "wait")
        let (forward, end) = commit.decide(.commit)
        XCTAssertEqual(forward, [Data("a".utf8)])
        XCTAssertEqual(describe(end), "stream ended")

        var buffer = StreamGate(bufferedBodyLimit: 100)
        _ = buffer.receiveHead(head)
        _ = buffer.receiveChunk(Data("moved".utf8))
        XCTAssertEqual(describe(buffer.receiveEnd(nil)), "wait")
        XCTAssertEqual(describe(buffer.decide(.buffer).end), "response 200 moved")

        var abandon = StreamGate(bufferedBodyLimit: 100)
        _ = abandon.receiveHead(head)
        XCTAssertEqual(describe(abandon.receiveEnd(.cancelled)), "wait")
        XCTAssertEqual(describe(abandon.decide(.abandon).end), "released")
    }

    func testABufferedBodyKeepsAtMostItsLimit() {
        var gate = StreamGate(bufferedBodyLimit: 5)
        _ = gate.receiveHead(head)
        _ = gate.receiveChunk(Data("abc".utf8))
        _ = gate.decide(.buffer)
        XCTAssertEqual(gate.receiveChunk(Data("defgh".utf8)), .buffered)
        XCTAssertEqual(describe(gate.receiveEnd(nil)), "response 200 abcde")
    }

    func testAFailureBeforeOrWhileBufferingIsTheQueuesToRetry() {
        var beforeHead = StreamGate(bufferedBodyLimit: 5)
        XCTAssertEqual(describe(beforeHead.receiveEnd(.timedOut)), "failed \(RequestError.timedOut)")

        var buffering = StreamGate(bufferedBodyLimit: 5)
        _ = buffering.receiveHead(head)
        _ = buffering.decide(.buffer)
        XCTAssertEqual(describe(buffering.receiveEnd(.cancelled)), "failed \(RequestError.cancelled)")
    }

    func testOnlyTheFirstHeadIsDecidedAndLateChunksAreDropped() {
        var gate = StreamGate(bufferedBodyLimit: 5)
        XCTAssertEqual(gate.receiveChunk(Data("early".utf8)), .drop)
        XCTAssertTrue(gate.receiveHead(head))
        XCTAssertFalse(gate.receiveHead(head))
        _ = gate.decide(.abandon)
        XCTAssertEqual(gate.receiveChunk(Data("late".utf8)), .drop)
        XCTAssertEqual(describe(gate.decide(.commit).end), "none")
        XCTAssertEqual(gate.phase, .ended)
    }
}

/// `LineSplitter`: lines at `\n` and `\r\n`, bounded.
final class LineSplitterTests: XCTestCase {
    private func lines(_ chunks: [String], limit: Int = 100) -> [String] {
        var splitter = LineSplitter(maximumLength: limit)
        var out: [String] = []
        for chunk in chunks {
            splitter.append(Data(chunk.utf8))
            loop: while true {
                switch splitter.nextLine() {
                case .line(let line): out.append(line)
                case .tooLong(let limit): out.append("<too long: \(limit)>"); return out
                case .needMore: break loop
                }
            }
        }
        if let last = splitter.finish() { out.append(last) }
        return out
    }

    func testSplitsAtLFAndCRLFKeepingEmptyLinesAndALoneCR() {
        XCTAssertEqual(lines(["a\nb\r\n\nc\rd\n"]), ["a", "b", "", "c\rd"])
    }

    func testEveryCutGivesTheSameLines() {
        let text = "alpha\r\nbeta\n\ngamma\r\n€uro\nlast"
        let expected = ["alpha", "beta", "", "gamma", "€uro", "last"]
        let bytes = Array(text.utf8)
        for cut in 0...bytes.count {
            var splitter = LineSplitter(maximumLength: 100)
            var out: [String] = []
            for part in [bytes[..<cut], bytes[cut...]] {
                splitter.append(Data(part))
                while case .line(let line) = splitter.nextLine() { out.append(line) }
            }
            if let last = splitter.finish() { out.append(last) }
            XCTAssertEqual(out, expected, "cut at \(cut)")
        }
    }

    func testALineOfTheLimitPassesAndOneByteMoreDoesNot() {
        XCTAssertEqual(lines(["abcd\r\n"], limit: 4), ["abcd"])
        XCTAssertEqual(lines(["abcde\n"], limit: 4), ["<too long: 4>"])
        XCTAssertEqual(lines(["ab", "cde"], limit: 4), ["<too long: 4>"])
    }

    func testNoFinalLineAfterATrailingLineEnd() {
        XCTAssertEqual(lines(["a\n"]), ["a"])
        XCTAssertEqual(lines([""]), [])
    }
}
