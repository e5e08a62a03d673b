#if os(Linux)
import XCTest
@testable import Courier

final class ResponseHeadParserTests: XCTestCase {
    /// Feeds lines as libcurl hands them over, each with its CRLF.
    private func parse(_ lines: [String]) throws(ResponseHeadParser.Failure) -> ParsedHead? {
        var parser = ResponseHeadParser()
        for line in lines { try parser.consume(Array((line + "\r\n").utf8)) }
        return parser.head
    }

    private func failure(_ lines: [String]) -> ResponseHeadParser.Failure? {
        do {
            _ = try parse(lines)
            return nil
        } catch {
            return error
        }
    }

    func testAStatusLineFieldsAndTheEmptyLineMakeAHead() throws {
        let head = try parse(["HTTP/1.1 201 Created", "Content-Type: application/json", "X-Id:  42 ", ""])
        XCTAssertEqual(head, ParsedHead(status: 201, version: "HTTP/1.1", fields: [
            .init(name: "Content-Type", value: "application/json"),
            .init(name: "X-Id", value: "42"),
        ]))
    }

    func testTheHeadIsCompleteOnlyAfterTheEmptyLine() throws {
        XCTAssertNil(try parse(["HTTP/1.1 200 OK", "A: b"]))
    }

    func testHTTP2StatusLinesHaveNoReason() throws {
        let head = try parse(["HTTP/2 204", "server: nginx", ""])
        XCTAssertEqual(head?.status, 204)
        XCTAssertEqual(head?.version, "HTTP/2")
    }

    func testInformationalHeadsAreSkipped() throws {
        let head = try parse(["HTTP/1.1 100 Continue", "", "HTTP/1.1 103 Early Hints", "Link: </a.css>", "",
                              "HTTP/1.1 200 OK", "B: c", ""])
        XCTAssertEqual(head, ParsedHead(status: 200, version: "HTTP/1.1", fields: [.init(name: "B", value: "c")]))
    }

    func testAHeadThatAnotherFollowsIsReplacedAndTrailersAreIgnored() throws {
        // libcurl answering a Basic challenge hands over the 401's head, then the real one
        let head = try parse(["HTTP/1.1 401 Unauthorized", "WWW-Authenticate: Basic", "", "HTTP/1.1 200 OK", "D: e", "",
                              "Trailer-Field: ignored"])
        XCTAssertEqual(head, ParsedHead(status: 200, version: "HTTP/1.1", fields: [.init(name: "D", value: "e")]))
    }

    func testFoldedLinesJoinThePreviousField() throws {
        let head = try parse(["HTTP/1.1 200 OK", "X-Long: first", " \tsecond", "\tthird", ""])
        XCTAssertEqual(head?.fields, [.init(name: "X-Long", value: "first second third")])
    }

    func testRepeatedFieldsStayApartInTheServersOrderAndSpelling() throws {
        let head = try XCTUnwrap(parse(["HTTP/1.1 200 OK", "Vary: Accept", "set-cookie: a=1", "vary: Origin",
                                        "Set-Cookie: b=2; Path=/", "ETag: \"1\"", ""]))
        XCTAssertEqual(head.fields.map(\.description), ["Vary: Accept", "set-cookie: a=1", "vary: Origin", "Set-Cookie: b=2; Path=/",
                                                        "ETag: \"1\""])
        XCTAssertEqual(head.values(of: "Set-Cookie"), ["a=1", "b=2; Path=/"])
        let response = CurlTransfer.head(of: head, url: URL(string: "https://example.com/")!)
        XCTAssertEqual(response.headerFields["vary"], "Accept, Origin", "joined for a lookup")
        XCTAssertEqual(response.headerFields.values(for: "Vary"), ["Accept", "Origin"])
        XCTAssertEqual(response.status, 200)
    }

    func testEmptyValuesAndColonsInValuesAreKept() throws {
        let head = try parse(["HTTP/1.1 200 OK", "X-Empty:", "Location: http://a/b?c=d:e", ""])
        XCTAssertEqual(head?.fields, [.init(name: "X-Empty", value: ""), .init(name: "Location", value: "http://a/b?c=d:e")])
    }

    func testMalformedStatusLinesAreNamed() {
        XCTAssertEqual(failure(["HTTP/1.1 20 OK"]), .malformedStatusLine("HTTP/1.1 20 OK"))
        XCTAssertEqual(failure(["HTTP/1.1 abc OK"]), .malformedStatusLine("HTTP/1.1 abc OK"))
        XCTAssertEqual(failure(["HTTP/ 200 OK"]), .malformedStatusLine("HTTP/ 200 OK"))
        XCTAssertEqual(failure(["HTTP/1.1 099 Low"]), .malformedStatusLine("HTTP/1.1 099 Low"))
        XCTAssertEqual(failure(["HTTP/1.1  200 OK"]), .malformedStatusLine("HTTP/1.1  200 OK"))
        XCTAssertEqual(failure(["HTTP/1.1"]), .malformedStatusLine("HTTP/1.1"))
        XCTAssertEqual(failure(["HTTP/1.1 "]), .malformedStatusLine("HTTP/1.1 "))
        XCTAssertEqual(failure(["HTTP/1.1 20"]), .malformedStatusLine("HTTP/1.1 20"))
        XCTAssertEqual(failure(["HTTP/1.1 2000 OK"]), .malformedStatusLine("HTTP/1.1 2000 OK"))
        XCTAssertEqual(failure(["HTTP/1.1a 200 OK"]), .malformedStatusLine("HTTP/1.1a 200 OK"))
        // Found by the fuzzer: a combining mark after the slash joins it into one Character
        XCTAssertEqual(failure(["HTTP/\u{308}1.1 200 OK"]), .malformedStatusLine("HTTP/\u{308}1.1 200 OK"))
    }

    func testFieldsWithoutAStatusLineOrAColonAreMalformed() {
        XCTAssertEqual(failure(["Content-Type: text/plain"]), .missingStatusLine)
        XCTAssertEqual(failure([""]), .missingStatusLine)
        XCTAssertEqual(failure(["HTTP/1.1 200 OK", "no colon here"]), .malformedField("no colon here"))
        XCTAssertEqual(failure(["HTTP/1.1 200 OK", "Bad Name: x"]), .malformedField("Bad Name: x"))
        XCTAssertEqual(failure(["HTTP/1.1 200 OK", ": no name"]), .malformedField(": no name"))
        XCTAssertEqual(failure(["HTTP/1.1 200 OK", "NoColon"]), .malformedField("NoColon"))
        XCTAssertEqual(failure(["HTTP/1.1 200 OK", " folded first"]), .malformedField(" folded first"))
    }

    func testTheHeadSizeIsBounded() {
        let line = "X-Big: " + String(repeating: "a", count: 1_000)
        let lines = ["HTTP/1.1 200 OK"] + Array(repeating: line, count: ResponseHeadParser.maximumSize / 1_000)
        XCTAssertEqual(failure(lines), .headTooLarge(limit: 256 * 1024))
    }

    func testTheFieldCountIsBounded() {
        let lines = ["HTTP/1.1 200 OK"] + (0...ResponseHeadParser.maximumFieldCount).map { "X-\($0): 1" }
        XCTAssertEqual(failure(lines), .tooManyFields(limit: 1_000))
        XCTAssertNotNil(try? parse(["HTTP/1.1 200 OK"] + (1...ResponseHeadParser.maximumFieldCount).map { "X-\($0): 1" } + [""]),
                        "exactly the maximum is accepted")
    }

    func testBareLineFeedsEndLinesToo() throws {
        var parser = ResponseHeadParser()
        for line in ["HTTP/1.1 200 OK\n", "A: b\n", "\n"] { try parser.consume(Array(line.utf8)) }
        XCTAssertEqual(parser.head?.fields, [.init(name: "A", value: "b")])
    }

    func testReasonsNameWhatTheServerDidWrong() {
        XCTAssertEqual(ResponseHeadParser.Failure.headTooLarge(limit: 262_144).reason,
                       "the server's response head is larger than 262144 bytes")
        // Control characters are shown escaped, so a message stays one readable line
        XCTAssertEqual(ResponseHeadParser.Failure.malformedStatusLine("HTTP/1.1 2\u{0}0").reason,
                       #"the server sent a malformed status line: HTTP/1.1 2\00"#)
    }
}
#endif
