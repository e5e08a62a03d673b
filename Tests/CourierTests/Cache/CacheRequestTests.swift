import XCTest
@testable import Courier

/// The request fields the cache's rules ask about, found once per request for both the lookup
/// and the storing rules.
final class CacheRequestTests: XCTestCase {
    private func fields(_ headers: [String: String]) -> CacheRequest.Fields {
        CacheRequest(method: "GET", url: "https://example.com/a", headers: headers).fields
    }

    func testEachFieldTheRulesAskAboutIsFoundInAnyCase() {
        let cases: [(String, KeyPath<CacheRequest.Fields, Bool>)] = [
            ("range", \.hasRange), ("PRAGMA", \.hasPragma), ("if-match", \.hasOriginOnlyPreconditions),
            ("If-Range", \.hasOriginOnlyPreconditions), ("IF-UNMODIFIED-SINCE", \.hasOriginOnlyPreconditions),
            ("If-None-Match", \.isConditional), ("if-modified-since", \.isConditional),
            ("cache-control", \.hasCacheControl), ("Authorization", \.hasAuthorization),
        ]
        let all: [KeyPath<CacheRequest.Fields, Bool>] = [\.hasRange, \.hasPragma, \.hasOriginOnlyPreconditions,
                                                         \.isConditional, \.hasCacheControl, \.hasAuthorization]
        for (name, flag) in cases {
            // Given a request with only that field
            let found = fields([name: "x", "Accept": "application/json"])
            // Then exactly its flag is set
            for other in all { XCTAssertEqual(found[keyPath: other], other == flag, "\(name)") }
            XCTAssertEqual(found.hasPreconditions, flag == \.hasOriginOnlyPreconditions || flag == \.isConditional, name)
        }
    }

    func testNamesOfTheSameLengthAreNotTakenForThem() {
        // Given names as long as those the rules ask about, but other names
        let found = fields(["Rangy": "1", "Pragmo": "1", "If-Batch": "1", "Cache-Contro1": "1", "If-Modified-Sinc3": "1",
                            "If-Unmodified-Sinc3": "1", "": "1"])
        // Then none is found
        XCTAssertEqual(found, fields([:]))
    }
}
