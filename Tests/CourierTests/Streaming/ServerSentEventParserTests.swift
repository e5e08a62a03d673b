import Foundation
import XCTest
@testable import Courier

/// The event-stream parser against the WHATWG HTML standard's "Parsing an event stream" and
/// "Interpreting an event stream" (the examples are the standard's own), fed in every way a
/// transport can cut a stream.
final class ServerSentEventParserTests: XCTestCase {
    private typealias Parser = ServerSentEventParser

    /// The events of a whole stream fed in one call.
    private func events(of text: String, lastEventID: String = "") throws(Parser.Failure) -> [ServerSentEvent] {
        var parser = Parser(lastEventID: lastEventID)
        return try parser.consume(Data(text.utf8))
    }

    /// The events of a stream fed in the given chunks, in one list.
    private func events(ofChunks chunks: [[UInt8]], parser: inout Parser) throws(Parser.Failure) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for chunk in chunks { events += try parser.consume(Data(chunk)) }
        return events
    }

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func message(_ data: String, id: String = "") -> ServerSentEvent {
        ServerSentEvent(data: data, lastEventID: id)
    }

    // MARK: The standard's examples

    func testTheIntroductionsStreamIsThreeMessagesTheSecondOfTwoLines() throws {
        // Given the stream of the standard's introduction
        let stream = "data: This is the first message.\n\ndata: This is the second message, it\ndata: has two lines.\n\n"
            + "data: This is the third message.\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then it makes three "message" events, the two data lines joined with a line feed
        XCTAssertEqual(events, [
            message("This is the first message."),
            message("This is the second message, it\nhas two lines."),
            message("This is the third message."),
        ])
    }

    func testTheIntroductionsAddAndRemoveEventsHaveTheirTypes() throws {
        // Given the introduction's stream with two event types
        let stream = "event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then each event has the type its own block named
        XCTAssertEqual(events, [
            ServerSentEvent(type: "add", data: "73857293"),
            ServerSentEvent(type: "remove", data: "2153"),
            ServerSentEvent(type: "add", data: "113411"),
        ])
    }

    func testTheStockTickerEventJoinsItsDataLines() throws {
        // Given the stock-ticker stream, followed by a blank line as the standard says
        let stream = "data: YHOO\ndata: +2\ndata: 10\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then one message carries "YHOO\n+2\n10"
        XCTAssertEqual(events, [message("YHOO\n+2\n10")])
    }

    func testTheFourBlocksExampleSetsThenClearsTheLastEventID() throws {
        // Given the standard's stream of a comment block and three events, the second clearing the ID
        let stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
        // When it is parsed
        var parser = Parser()
        let events = try parser.consume(Data(stream.utf8))
        // Then the comment fires nothing, the ID is "1" then "", and the third keeps one leading space
        XCTAssertEqual(events, [message("first event", id: "1"), message("second event"), message(" third event")])
        XCTAssertEqual(parser.lastEventID, "")
    }

    func testTheFourBlocksExampleNeedsItsLastBlankLine() throws {
        // Given the same stream ending right after the third event's data line
        let stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then the end of the stream does not dispatch the third event
        XCTAssertEqual(events, [message("first event", id: "1"), message("second event")])
    }

    func testTheTwoEventsExampleGivesAnEmptyStringAndALineFeed() throws {
        // Given the standard's stream of bare "data" fields, its last block without a blank line
        let stream = "data\n\ndata\ndata\n\ndata:"
        // When it is parsed
        let events = try events(of: stream)
        // Then the first event's data is empty, the second's one line feed, and the last block is discarded
        XCTAssertEqual(events, [message(""), message("\n")])
    }

    func testTheTwoIdenticalEventsExampleIgnoresTheSpaceAfterTheColon() throws {
        // Given "data:test" and "data: test"
        let stream = "data:test\n\ndata: test\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then both events carry "test"
        XCTAssertEqual(events, [message("test"), message("test")])
    }

    // MARK: Lines

    func testCRLFLFAndCRAreEachOneLineEnd() throws {
        // Given lines ended by CRLF, LF and a lone CR, and blank lines of each kind
        let stream = "data: a\r\ndata: b\ndata: c\rdata: d\r\n\r\ndata: e\r\rdata: f\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then each line end ends one line, and each blank line dispatches
        XCTAssertEqual(events, [message("a\nb\nc\nd"), message("e"), message("f")])
    }

    func testLFThenCRIsTwoLineEnds() throws {
        // Given "\n\r", which is not a line end pair (only CR LF is)
        let stream = "data: a\n\rdata: b\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then the CR ends a blank line of its own, which dispatches "a"
        XCTAssertEqual(events, [message("a"), message("b")])
    }

    func testACREndingOneChunkAndAnLFStartingTheNextAreOneLineEnd() throws {
        // Given a stream whose CRLFs are all cut between the CR and the LF, with an empty chunk in between
        var parser = Parser()
        // When it is fed chunk by chunk
        let afterFirstLine = try parser.consume(Data("data: a\r".utf8))
        let afterEmptyChunk = try parser.consume(Data())
        let afterSecondLine = try parser.consume(Data("\ndata: b\r".utf8))
        let afterBlankLine = try parser.consume(Data("\n\r".utf8))
        let afterLastLF = try parser.consume(Data("\n".utf8))
        // Then the blank line's CR dispatches at once, and no LF counts as a blank line of its own
        XCTAssertEqual(afterFirstLine, [])
        XCTAssertEqual(afterEmptyChunk, [])
        XCTAssertEqual(afterSecondLine, [])
        XCTAssertEqual(afterBlankLine, [message("a\nb")])
        XCTAssertEqual(afterLastLF, [])
    }

    func testACRAtTheEndOfAChunkDispatchesWithoutWaitingForTheNextByte() throws {
        // Given a parser that has read "data: a" and its line end
        var parser = Parser()
        _ = try parser.consume(Data("data: a\r\n".utf8))
        // When a blank line ended by a lone CR arrives at the end of a chunk
        let events = try parser.consume(Data("\r".utf8))
        // Then the event is returned by that very call
        XCTAssertEqual(events, [message("a")])
    }

    func testAnEventIsReturnedByTheCallThatCompletesIt() throws {
        // Given a parser
        var parser = Parser()
        // When an event's lines and its blank line come in separate calls
        let beforeBlankLine = try parser.consume(Data("data: a\n".utf8))
        let atBlankLine = try parser.consume(Data("\n".utf8))
        // Then the blank line's call returns it
        XCTAssertEqual(beforeBlankLine, [])
        XCTAssertEqual(atBlankLine, [message("a")])
    }

    func testAnIncompleteEventAtTheEndOfTheStreamIsNeverDispatched() throws {
        // Given streams that end inside an event: after a line end, and inside a line
        let endingAfterALine = try events(of: "data: a\n\ndata: b\n")
        let endingInALine = try events(of: "data: a\n\ndata: b")
        // Then only the event before is dispatched: the last one was never completed
        XCTAssertEqual(endingAfterALine, [message("a")])
        XCTAssertEqual(endingInALine, [message("a")])
    }

    // MARK: Fields

    func testCommentsAreIgnoredWhereverTheyAre() throws {
        // Given comments before, inside and instead of events, one of them looking like a field
        let stream = ":\n: keep-alive\ndata: a\n:data: b\ndata: c\n\n:only a comment\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then they add nothing, and a block of comments alone fires nothing
        XCTAssertEqual(events, [message("a\nc")])
    }

    func testExactlyOneLeadingSpaceIsRemovedFromAValue() throws {
        // Given values after no space, one space, two spaces, and a tab
        let stream = "data:a\n\ndata: b\n\ndata:  c\n\ndata:\td\n\ndata: \n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then only the first space goes
        XCTAssertEqual(events, [message("a"), message("b"), message(" c"), message("\td"), message("")])
    }

    func testColonsAfterTheFirstArePartOfTheValue() throws {
        // Given a value with colons, and a type with one
        let stream = "event: x:y\ndata: a: b:c\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then the line is cut at its first colon only
        XCTAssertEqual(events, [ServerSentEvent(type: "x:y", data: "a: b:c")])
    }

    func testALineWithoutAColonIsAFieldWithAnEmptyValue() throws {
        // Given "data", "event" and "id" lines without colons after a typed event with an ID
        var parser = Parser()
        let stream = "id: 3\nevent: typed\ndata\ndata\nevent\nid\n\n"
        // When it is parsed
        let events = try parser.consume(Data(stream.utf8))
        // Then each data line added an empty line, the type went back to "message", the ID to ""
        XCTAssertEqual(events, [message("\n")])
        XCTAssertEqual(parser.lastEventID, "")
    }

    func testFieldNamesAreCaseSensitiveAndUnknownFieldsAreIgnored() throws {
        // Given fields named almost like the standard's ones, then one real data field
        var parser = Parser()
        let stream = "Data: a\nDATA: b\nEvent: x\nID: 3\nRetry: 5\ndata : c\n data: d\nfoo: bar\ndata: e\n\n"
        // When it is parsed
        let events = try parser.consume(Data(stream.utf8))
        // Then only the exact "data" counts
        XCTAssertEqual(events, [message("e")])
        XCTAssertEqual(parser.lastEventID, "")
        XCTAssertNil(parser.reconnectionTime)
    }

    func testTheLastEventFieldOfAnEventNamesItsType() throws {
        // Given an event with two event fields, one with an empty event field, and one after a typed one
        let stream = "event: first\nevent: second\ndata: a\n\nevent: typed\nevent:\ndata: b\n\ndata: c\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then the last one wins, an empty type is "message", and types do not carry over
        XCTAssertEqual(events, [ServerSentEvent(type: "second", data: "a"), message("b"), message("c")])
    }

    func testABlankLineWithoutDataResetsTheTypeAndDispatchesNothing() throws {
        // Given a typed block without data, then an untyped event
        let stream = "event: lonely\n\ndata: x\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then the first block fires nothing and leaves no type behind
        XCTAssertEqual(events, [message("x")])
    }

    func testTheLastEventIDSticksUntilTheNextIDField() throws {
        // Given IDs set before and after data, kept, replaced, and cleared both ways
        let stream = "id: 1\ndata: a\n\ndata: b\n\ndata: c\nid: 2\n\nid\ndata: d\n\nid: 5\ndata: e\n\nid:\ndata: f\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then each event carries the ID buffer as it was at its blank line
        XCTAssertEqual(events, [
            message("a", id: "1"), message("b", id: "1"), message("c", id: "2"), message("d"),
            message("e", id: "5"), message("f"),
        ])
    }

    func testABlankLineWithoutDataStillCommitsTheLastEventID() throws {
        // Given an ID in a block without data
        var parser = Parser()
        // When its blank line arrives, then an event without an ID
        let first = try parser.consume(Data("id: 7\n\n".utf8))
        let idAfterFirst = parser.lastEventID
        let second = try parser.consume(Data("data: x\n\n".utf8))
        // Then nothing fires at first, but the ID is the stream's and the next event's
        XCTAssertEqual(first, [])
        XCTAssertEqual(idAfterFirst, "7")
        XCTAssertEqual(second, [message("x", id: "7")])
    }

    func testAnIDContainingNULIsIgnored() throws {
        // Given an ID, then IDs with U+0000 inside and alone
        var parser = Parser()
        let stream = "id: 1\n\nid: a\u{0}b\ndata: x\n\nid: \u{0}\ndata: y\n\n"
        // When it is parsed
        let events = try parser.consume(Data(stream.utf8))
        // Then those fields change nothing
        XCTAssertEqual(events, [message("x", id: "1"), message("y", id: "1")])
        XCTAssertEqual(parser.lastEventID, "1")
    }

    func testNULInDataAndTypesIsKept() throws {
        // Given U+0000 in a type and in data, where the standard allows any character
        let stream = "event: a\u{0}\ndata: b\u{0}c\n\n"
        // When it is parsed
        let events = try events(of: stream)
        // Then it stays
        XCTAssertEqual(events, [ServerSentEvent(type: "a\u{0}", data: "b\u{0}c")])
    }

    func testRetryTakesOnlyValuesOfASCIIDigits() throws {
        // Given a parser, and retry values one after the other
        var parser = Parser()
        func reconnectionTime(after line: String) throws -> Int? {
            XCTAssertEqual(try parser.consume(Data((line + "\n").utf8)), [])
            return parser.reconnectionTime
        }
        // When each line is read, Then the reconnection time is set or left as it was
        XCTAssertNil(parser.reconnectionTime)
        XCTAssertEqual(try reconnectionTime(after: "retry: 1500"), 1500)
        XCTAssertEqual(try reconnectionTime(after: "retry: 15x"), 1500)
        XCTAssertEqual(try reconnectionTime(after: "retry: -1"), 1500)
        XCTAssertEqual(try reconnectionTime(after: "retry: +2"), 1500)
        XCTAssertEqual(try reconnectionTime(after: "retry: 1.5"), 1500)
        XCTAssertEqual(try reconnectionTime(after: "retry: 0x10"), 1500)
        XCTAssertEqual(try reconnectionTime(after: "retry:"), 1500)
        XCTAssertEqual(try reconnectionTime(after: "retry"), 1500)
        XCTAssertEqual(try reconnectionTime(after: "retry:  100"), 1500)  // " 100" after the one space
        XCTAssertEqual(try reconnectionTime(after: "retry: 100 "), 1500)
        XCTAssertEqual(try reconnectionTime(after: "retry: \u{663}"), 1500)  // ARABIC-INDIC DIGIT THREE
        XCTAssertEqual(try reconnectionTime(after: "retry:0012"), 12)
        XCTAssertEqual(try reconnectionTime(after: "retry: 0"), 0)
        XCTAssertEqual(try reconnectionTime(after: "retry: 9223372036854775807"), Int.max)
        XCTAssertEqual(try reconnectionTime(after: "retry: 7"), 7)
        // Too large for Int: ignored, whatever its length
        XCTAssertEqual(try reconnectionTime(after: "retry: 9223372036854775808"), 7)
        XCTAssertEqual(try reconnectionTime(after: "retry: " + String(repeating: "9", count: 400)), 7)
    }

    func testRetryTakesEffectWithoutABlankLineAndFiresNothing() throws {
        // Given a retry field inside an event that never completes
        var parser = Parser()
        // When it is read
        let events = try parser.consume(Data("data: a\nretry: 250\n".utf8))
        // Then it already counts, and no event fired
        XCTAssertEqual(events, [])
        XCTAssertEqual(parser.reconnectionTime, 250)
    }

    // MARK: Decoding

    func testBytesThatAreNotUTF8BecomeReplacementCharacters() throws {
        // Given invalid and truncated UTF-8 in data, a type and an ID, and valid multi-byte characters
        let stream: [UInt8] = bytes("data: ") + [0xFF] + bytes("a") + [0xE2, 0x82] + bytes("\nid: ") + [0xC3]
            + bytes("\nevent: ") + [0xED, 0xA0, 0x80] + bytes("\ndata: é€😀\n\n")
        // When it is parsed
        var parser = Parser()
        let events = try parser.consume(Data(stream))
        // Then each maximal invalid sequence is one U+FFFD (three for an encoded surrogate), the rest is kept
        XCTAssertEqual(events, [ServerSentEvent(type: "\u{FFFD}\u{FFFD}\u{FFFD}", data: "\u{FFFD}a\u{FFFD}\né€😀",
                                                lastEventID: "\u{FFFD}")])
        XCTAssertEqual(parser.lastEventID, "\u{FFFD}")
    }

    func testInvalidUTF8InAFieldNameMakesItUnknown() throws {
        // Given "data" names with a stray byte before them, inside them and before the colon
        let stream: [UInt8] = [0xFF] + bytes("data: a\n") + bytes("da") + [0xC3] + bytes("ta: b\n") + bytes("data")
            + [0xE2] + bytes(": c\ndata: d\n\n")
        // When it is parsed
        var parser = Parser()
        let events = try parser.consume(Data(stream))
        // Then only the clean one counts
        XCTAssertEqual(events, [message("d")])
    }

    func testALeadingByteOrderMarkIsSkipped() throws {
        // Given a stream starting with a UTF-8 byte order mark
        let stream: [UInt8] = [0xEF, 0xBB, 0xBF] + bytes("data: a\n\n")
        // When it is parsed
        var parser = Parser()
        let events = try parser.consume(Data(stream))
        // Then its first field is read as "data"
        XCTAssertEqual(events, [message("a")])
    }

    func testALeadingByteOrderMarkIsSkippedWhenItArrivesInPieces() throws {
        // Given the byte order mark cut after its first and after its second byte
        let stream: [UInt8] = [0xEF, 0xBB, 0xBF] + bytes("data: a\n\n")
        for cuts in [[[0xEF], [0xBB], Array(stream[2...])], [[0xEF, 0xBB], Array(stream[2...])], [[0xEF], Array(stream[1...])],
                     [[0xEF, 0xBB, 0xBF], Array(stream[3...])]] as [[[UInt8]]] {
            // When it is fed in those chunks
            var parser = Parser()
            let events = try events(ofChunks: cuts, parser: &parser)
            // Then it is skipped all the same
            XCTAssertEqual(events, [message("a")], "chunks \(cuts)")
        }
    }

    func testOnlyOneByteOrderMarkAtTheVeryStartIsSkipped() throws {
        // Given two byte order marks at the start, and one at the start of a later line
        let twice: [UInt8] = [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + bytes("data: a\n\ndata: b\n\n")
        let later: [UInt8] = bytes("data: a\n\n") + [0xEF, 0xBB, 0xBF] + bytes("data: b\n\ndata: \u{FEFF}c\n\n")
        // When they are parsed
        var parserOfTwice = Parser(), parserOfLater = Parser()
        let eventsOfTwice = try parserOfTwice.consume(Data(twice))
        let eventsOfLater = try parserOfLater.consume(Data(later))
        // Then the second mark is U+FEFF, part of the field name "\u{FEFF}data", and a mark in a value stays
        XCTAssertEqual(eventsOfTwice, [message("b")])
        XCTAssertEqual(eventsOfLater, [message("a"), message("\u{FEFF}c")])
    }

    func testTheStartOfAByteOrderMarkThatIsNotOneIsText() throws {
        // Given streams starting with one or two bytes of a byte order mark, then "data: a"
        for prefix in [[0xEF], [0xEF, 0xBB]] as [[UInt8]] {
            let stream = prefix + bytes("data: a\n\ndata: b\n\n")
            for cut in 0...stream.count {
                // When they are parsed, whole or cut anywhere
                var parser = Parser()
                let events = try events(ofChunks: [Array(stream[..<cut]), Array(stream[cut...])], parser: &parser)
                // Then the bytes are a U+FFFD that makes the first field "\u{FFFD}data", which is unknown
                XCTAssertEqual(events, [message("b")], "prefix \(prefix), cut at \(cut)")
            }
        }
    }

    // MARK: Chunking

    /// A stream with every kind of line end, a byte order mark, multi-byte characters, comments,
    /// IDs, retry and an incomplete last event.
    private let sampleStream: [UInt8] = [0xEF, 0xBB, 0xBF] + Array((
        ": hello\r\nretry: 3000\r\nevent: delta\r\nid: 1\r\ndata: {\"text\":\"Grüße 😀\"}\r\n\r\n"
        + "data: a\rdata: b\r\rdata:  c\nid\n\nevent: done\nid: 2\ndata\n\n\r\n\n"
        + "event:\nid: 3\ndata: x\r\n\r\ndata: never").utf8)

    private let sampleEvents = [
        ServerSentEvent(type: "delta", data: "{\"text\":\"Grüße 😀\"}", lastEventID: "1"),
        ServerSentEvent(data: "a\nb", lastEventID: "1"),
        ServerSentEvent(data: " c"),
        ServerSentEvent(type: "done", data: "", lastEventID: "2"),
        ServerSentEvent(data: "x", lastEventID: "3"),
    ]

    func testTheSampleStreamInOnePiece() throws {
        // Given the sample stream
        var parser = Parser()
        // When it is fed in one piece
        let events = try parser.consume(Data(sampleStream))
        // Then it gives its events, and the state its last lines left
        XCTAssertEqual(events, sampleEvents)
        XCTAssertEqual(parser.lastEventID, "3")
        XCTAssertEqual(parser.reconnectionTime, 3000)
    }

    func testEveryCutOfTheSampleStreamGivesTheSameEvents() throws {
        for cut in 0...sampleStream.count {
            // Given the sample stream cut in two at one offset
            var parser = Parser()
            // When it is fed in those two chunks
            let events = try events(ofChunks: [Array(sampleStream[..<cut]), Array(sampleStream[cut...])], parser: &parser)
            // Then it gives the events and state of the one-piece parse
            XCTAssertEqual(events, sampleEvents, "cut at \(cut)")
            XCTAssertEqual(parser.lastEventID, "3", "cut at \(cut)")
            XCTAssertEqual(parser.reconnectionTime, 3000, "cut at \(cut)")
        }
    }

    func testEveryPairOfCutsOfTheSampleStreamGivesTheSameEvents() throws {
        for first in 0...sampleStream.count {
            for second in first...sampleStream.count {
                // Given the sample stream cut in three
                var parser = Parser()
                let chunks = [Array(sampleStream[..<first]), Array(sampleStream[first..<second]), Array(sampleStream[second...])]
                // When it is fed in those chunks
                let events = try events(ofChunks: chunks, parser: &parser)
                // Then it gives the events of the one-piece parse
                XCTAssertEqual(events, sampleEvents, "cuts at \(first) and \(second)")
            }
        }
    }

    func testTheSampleStreamByteByByte() throws {
        // Given the sample stream
        var parser = Parser()
        // When it is fed one byte at a time, through the raw-buffer entry point
        var events: [ServerSentEvent] = []
        for byte in sampleStream {
            events += try withUnsafeBytes(of: byte) { bytes throws(Parser.Failure) in try parser.consume(bytes) }
        }
        // Then it gives the events and state of the one-piece parse
        XCTAssertEqual(events, sampleEvents)
        XCTAssertEqual(parser.lastEventID, "3")
        XCTAssertEqual(parser.reconnectionTime, 3000)
    }

    // MARK: State

    func testTheLastEventIDChangesOnlyAtBlankLines() throws {
        // Given a parser that read an ID and a retry in an event the stream has not finished
        var parser = Parser()
        _ = try parser.consume(Data("id: 1\n\ndata: a\nid: 2\nretry: 300\n".utf8))
        let idBeforeBlankLine = parser.lastEventID
        // When the blank line arrives
        let events = try parser.consume(Data("\n".utf8))
        // Then the new ID is the stream's only from then on: resuming from "2" before would skip the event
        XCTAssertEqual(idBeforeBlankLine, "1")
        XCTAssertEqual(parser.reconnectionTime, 300)
        XCTAssertEqual(events, [message("a", id: "2")])
        XCTAssertEqual(parser.lastEventID, "2")
    }

    func testAReconnectionCarriesOnTheLastEventID() throws {
        // Given a parser for a new connection, started with the last one's ID
        var parser = Parser(lastEventID: "41")
        let idAtStart = parser.lastEventID
        // When events without and with an ID arrive
        let events = try parser.consume(Data("data: a\n\nid: 42\ndata: b\n\n".utf8))
        // Then the first carries the old ID, the second its own
        XCTAssertEqual(idAtStart, "41")
        XCTAssertEqual(events, [message("a", id: "41"), message("b", id: "42")])
        XCTAssertEqual(parser.lastEventID, "42")
        XCTAssertNil(parser.reconnectionTime)
    }

    // MARK: Bounds

    private let limitReason = "the server sent an event larger than the 16-byte limit (a line and the event's data so far exceed it); "
        + "raise maximumEventSize if its events are really this large, or reconnect to start a new stream"

    func testALineAsLongAsTheLimitIsAccepted() throws {
        // Given a 16-byte limit and a 16-byte data line
        var parser = Parser(maximumEventSize: 16)
        // When it is parsed
        let events = try parser.consume(Data("data: 0123456789\n\n".utf8))
        // Then the event is dispatched
        XCTAssertEqual(events, [message("0123456789")])
    }

    func testALineLongerThanTheLimitFails() {
        // Given a 16-byte limit and a 17-byte line, after an event that fits
        var parser = Parser(maximumEventSize: 16)
        // When it is parsed
        XCTAssertThrowsError(try parser.consume(Data("data: a\n\ndata: 0123456789A\n\n".utf8))) { error in
            // Then it fails, naming the limit and what to do
            XCTAssertEqual(error as? Parser.Failure, Parser.Failure(reason: limitReason))
        }
    }

    func testAnEndlessLineFailsOnceItPassesTheLimit() throws {
        // Given a 16-byte limit and a line that never ends, 5 bytes a chunk
        var parser = Parser(maximumEventSize: 16)
        for _ in 0..<3 { XCTAssertEqual(try parser.consume(Data("xxxxx".utf8)), []) }
        // When the chunk that makes it 17 bytes arrives
        XCTAssertThrowsError(try parser.consume(Data("xx".utf8))) { error in
            // Then it fails
            XCTAssertEqual(error as? Parser.Failure, Parser.Failure(reason: limitReason))
        }
    }

    func testDataLinesCountTogetherAgainstTheLimit() throws {
        // Given a 16-byte limit, and an event whose data so far is "abcd\nabcd\n" (10 bytes)
        var parser = Parser(maximumEventSize: 16)
        XCTAssertEqual(try parser.consume(Data("data: abcd\ndata: abcd\n".utf8)), [])
        // When a line grows to 6 bytes, then to 7
        XCTAssertEqual(try parser.consume(Data("data:a".utf8)), [])
        XCTAssertThrowsError(try parser.consume(Data("b".utf8))) { error in
            // Then it fails at 17 bytes in all, though every line is short
            XCTAssertEqual(error as? Parser.Failure, Parser.Failure(reason: limitReason))
        }
    }

    func testTheLimitAppliesToEachEventAlone() throws {
        // Given a 16-byte limit
        var parser = Parser(maximumEventSize: 16)
        // When many events each within it arrive
        let events = try parser.consume(Data(String(repeating: "data: 0123456789\n\n", count: 100).utf8))
        // Then all of them are dispatched
        XCTAssertEqual(events, Array(repeating: message("0123456789"), count: 100))
    }

    func testAfterAFailureEveryCallFails() {
        // Given a parser that failed on a long line
        var parser = Parser(maximumEventSize: 16)
        XCTAssertThrowsError(try parser.consume(Data(String(repeating: "x", count: 17).utf8)))
        // When more bytes come, even a complete small event
        XCTAssertThrowsError(try parser.consume(Data("\ndata: a\n\n".utf8))) { error in
            // Then it fails again the same way: the stream cannot go on mid-line
            XCTAssertEqual(error as? Parser.Failure, Parser.Failure(reason: limitReason))
        }
    }

    // MARK: JSON

    /// Not private: a private type's name is "(unknown context …)", not the one errors show for users' types.
    struct Chunk: Decodable, Equatable {
        var token: String
        var index: Int
    }

    func testDecodeReadsTheDataAsJSON() throws {
        // Given an event whose data is a JSON object
        let event = ServerSentEvent(data: #"{"token":"Hi","index":3}"#)
        // When it is decoded, the type named and inferred
        let named = try event.decode(Chunk.self)
        let inferred: Chunk = try event.decode()
        // Then it gives the value
        XCTAssertEqual(named, Chunk(token: "Hi", index: 3))
        XCTAssertEqual(inferred, Chunk(token: "Hi", index: 3))
    }

    func testDecodeUsesTheGivenDecoder() throws {
        // Given snake_case JSON and a decoder that converts it
        struct Usage: Decodable, Equatable { var totalTokens: Int }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        // When an event is decoded with it
        let usage = try ServerSentEvent(data: #"{"total_tokens":12}"#).decode(Usage.self, using: decoder)
        // Then the keys were converted
        XCTAssertEqual(usage, Usage(totalTokens: 12))
    }

    func testDecodeFailuresAreSerializationFailuresNamingTheType() {
        // Given events with a wrong type in the JSON, text that is not JSON, and no data
        let cases = [#"{"token":7,"index":3}"#, "not json", ""]
        for data in cases {
            // When each is decoded
            do {
                _ = try ServerSentEvent(data: data).decode(Chunk.self)
                XCTFail("\(data) decoded")
            } catch {
                // Then the error is a serialization failure naming the type, with the decoder's error
                guard case .serializationFailed(let type, let underlying) = error else {
                    return XCTFail("\(data): \(error)")
                }
                XCTAssertEqual(type, "CourierTests.ServerSentEventParserTests.Chunk")
                XCTAssertTrue(underlying is DecodingError, "\(data): \(underlying)")
            }
        }
    }

    func testDecodeFailuresSayWhatWentWrong() {
        // Given an event with a number where a string belongs, and one without data
        let mistyped = ServerSentEvent(data: #"{"token":7,"index":3}"#)
        let empty = ServerSentEvent(type: "ping", data: "")
        // When they are decoded, Then the descriptions name the key, or the missing data
        XCTAssertThrowsError(try mistyped.decode(Chunk.self)) { error in
            XCTAssertTrue("\(error)".hasPrefix("Cannot make CourierTests.ServerSentEventParserTests.Chunk from the response: "
                + "expected String at token: "), "\(error)")
        }
        XCTAssertThrowsError(try empty.decode(Chunk.self)) { error in
            XCTAssertEqual("\(error)", "Cannot make CourierTests.ServerSentEventParserTests.Chunk from the response: "
                + "invalid data at the top level: The event has empty data, but Chunk needs some.")
        }
    }
}
