import Foundation
import XCTest
@testable import Courier

/// `Link` header fields read as RFC 8288 writes them.
final class WebLinkTests: XCTestCase {
    private let base = URL(string: "https://api.example.com/v1/posts?page=2")!

    private func head(_ lines: [String]) -> ResponseHead {
        ResponseHead(status: 200, headerFields: HTTPFields(lines.map { HTTPField(name: "Link", value: $0) }), url: base)
    }

    func testLinksInSeveralFieldsAndInOneFieldAreReadInOrderAndResolved() {
        // Given GitHub's style (several links in one field) and a second field
        let head = head([#"<https://api.example.com/v1/posts?page=3>; rel="next", </v1/posts?page=9>; rel="last""#,
                         #"<?page=1>; rel="first prev""#])

        // Then every link is there, in order, relative targets resolved against the response's URL
        XCTAssertEqual(head.links.map(\.target.absoluteString), ["https://api.example.com/v1/posts?page=3",
                                                                  "https://api.example.com/v1/posts?page=9",
                                                                  "https://api.example.com/v1/posts?page=1"])
        XCTAssertEqual(head.links.map(\.relations), [["next"], ["last"], ["first", "prev"]])
        XCTAssertEqual(head.link(rel: "prev")?.absoluteString, "https://api.example.com/v1/posts?page=1")
        XCTAssertEqual(head.link(rel: "NEXT")?.absoluteString, "https://api.example.com/v1/posts?page=3", "any case")
        XCTAssertNil(head.link(rel: "self"))
    }

    func testCommasInTargetsAndQuotedParametersDoNotSplitLinks() {
        // Given a target with a comma and a quoted title with a comma, a semicolon and an escaped quote
        let head = head([#"<https://example.com/a,b>; rel=next; title="One, two; \"three\"", <https://example.com/c>; REL="Last""#])

        // Then both links are read whole, names lowercased and values unquoted
        XCTAssertEqual(head.links, [
            WebLink(target: URL(string: "https://example.com/a,b")!, relations: ["next"],
                    parameters: ["rel": "next", "title": #"One, two; "three""#]),
            WebLink(target: URL(string: "https://example.com/c")!, relations: ["last"], parameters: ["rel": "Last"]),
        ])
    }

    func testMalformedLinksAreLeftOutAndTheOthersKept() {
        // Given a link without a target, one with an unterminated quote, and a good one
        let head = head([#"rel="next", <https://example.com/x>; title="open, <https://example.com/ok>; rel=ok"#,
                         "<https://example.com/fine>; rel=fine; rel=ignored"])

        // Then only the well-formed ones are read; a repeated parameter keeps its first value
        XCTAssertEqual(head.links.map(\.target.absoluteString), ["https://example.com/fine"])
        XCTAssertEqual(head.links.first?.relations, ["fine"])
    }

    func testSeparatorsAreFoundAsScalarsEvenAfterAPrependedMark() {
        // Given separators right after U+0600, which joins the character after it into one Character
        let head = head(["<https://example.com/a>; rel=\"next\u{600} prev\"\u{600}, <https://example.com/b>; rel=last"])

        // Then the space and the comma still separate, as the field's syntax says
        XCTAssertEqual(head.links.map(\.relations), [["next\u{600}", "prev"], ["last"]])
        XCTAssertEqual(head.link(rel: "prev")?.absoluteString, "https://example.com/a")
    }

    func testAResponseWithoutLinksHasNone() {
        XCTAssertEqual(ResponseHead(status: 200, url: base).links, [])
        XCTAssertNil(head(["", ","]).link(rel: "next"))
    }
}
