import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// How a request becomes a URLRequest: URL resolution, escaping, body routing, headers.
final class URLRequestBuilderTests: XCTestCase {
    private let builder = URLRequestBuilder(baseURL: URL(string: "https://api.example.com/v1/"), defaultTimeout: 30)

    private func url(_ path: String, query: String? = nil, base: String? = "https://api.example.com/v1/") throws -> String {
        let builder = URLRequestBuilder(baseURL: base.flatMap(URL.init(string:)), defaultTimeout: 30)
        return try builder.resolve(path, query: query).absoluteString
    }

    func testRelativePathsAreAppendedToTheBasePath() throws {
        XCTAssertEqual(try url("/login"), "https://api.example.com/v1/login")
        XCTAssertEqual(try url("login"), "https://api.example.com/v1/login")
        XCTAssertEqual(try url("/login", base: "https://api.example.com/v1"), "https://api.example.com/v1/login")
        XCTAssertEqual(try url("/login", base: "https://api.example.com"), "https://api.example.com/login")
        XCTAssertEqual(try url("", base: "https://api.example.com/v1"), "https://api.example.com/v1")
        XCTAssertEqual(try url("/users/", base: "http://127.0.0.1:8080"), "http://127.0.0.1:8080/users/")
    }

    func testAbsoluteURLOverridesTheBase() throws {
        XCTAssertEqual(try url("https://other.example.com/x?y=1"), "https://other.example.com/x?y=1")
        XCTAssertEqual(try url("http://127.0.0.1:9/a", base: nil), "http://127.0.0.1:9/a")
    }

    func testQueriesFromBasePathAndParametersAreJoined() throws {
        XCTAssertEqual(try url("/search?version=2", query: "q=swift"), "https://api.example.com/v1/search?version=2&q=swift")
        XCTAssertEqual(try url("/search", query: "q=swift", base: "https://api.example.com/v1?key=k"),
                       "https://api.example.com/v1/search?key=k&q=swift")
        XCTAssertEqual(try url("/search", query: ""), "https://api.example.com/v1/search")
    }

    func testUnsafeCharactersInPathsAreEscaped() throws {
        XCTAssertEqual(try url("/files/my report.pdf"), "https://api.example.com/v1/files/my%20report.pdf")
        XCTAssertEqual(try url("/tags/中文"), "https://api.example.com/v1/tags/%E4%B8%AD%E6%96%87")
        XCTAssertEqual(try url("/a#b"), "https://api.example.com/v1/a%23b")
        XCTAssertEqual(try url("/100%"), "https://api.example.com/v1/100%25")
        XCTAssertEqual(try url("/already%20escaped"), "https://api.example.com/v1/already%20escaped")
        XCTAssertEqual(try url("/q?note=a b"), "https://api.example.com/v1/q?note=a%20b")
    }

    func testEscapesAlreadyInAPathAreKeptAsWritten() throws {
        // Given paths and queries written with escapes of either case, a % that starts no escape, and an absolute URL
        // When resolved
        // Then only complete %XX escapes are kept; every other byte outside the allowed set is escaped with uppercase hex
        XCTAssertEqual(try url("/a%2fb%2F/c"), "https://api.example.com/v1/a%2fb%2F/c")
        XCTAssertEqual(try url("/x%4"), "https://api.example.com/v1/x%254")
        XCTAssertEqual(try url("/x%zz%4g"), "https://api.example.com/v1/x%25zz%254g")
        XCTAssertEqual(try url("/q?a=%e2%82%ac&b=c d&c=?/[]"), "https://api.example.com/v1/q?a=%e2%82%ac&b=c%20d&c=?/%5B%5D")
        XCTAssertEqual(try url("https://other.example.com/é [x]?q=\u{7F}"), "https://other.example.com/%C3%A9%20%5Bx%5D?q=%7F")
    }

    func testDotSegmentsCannotLeaveTheBasePath() {
        // Plain paths, and paths with a query or characters to escape (resolved another way)
        for path in ["../admin", "/v2/../../admin", "./x", "/a/./b", "/x/..?q=1", "/a b/../c", "..", "/x/."] {
            XCTAssertThrowsError(try url(path), path) { error in
                guard case RequestError.invalidURL(let text, let reason) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(text, path)
                XCTAssertTrue(reason.contains("\"..\" segments"), reason)
            }
        }
        // Dots inside names are fine, and absolute URLs are used as they are
        XCTAssertEqual(try url("/files/a..b/.hidden"), "https://api.example.com/v1/files/a..b/.hidden")
        XCTAssertEqual(try url("/files/.../x?q=.."), "https://api.example.com/v1/files/.../x?q=..")
        XCTAssertEqual(try url("/files/.\u{301}/x"), "https://api.example.com/v1/files/.%CC%81/x")
        XCTAssertEqual(try url("https://other.example.com/a/../b"), "https://other.example.com/a/../b")
    }

    func testRelativePathWithoutBaseIsAnError() {
        XCTAssertThrowsError(try url("/login", base: nil)) { error in
            guard case RequestError.invalidURL(let text, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(text, "/login")
            XCTAssertTrue(reason.contains("baseURL"), reason)
        }
    }

    func testMethodTimeoutAndHeadersAreSet() throws {
        let request = PathRequest<EmptyResponse>("/x", method: .delete, headers: ["X-B": "2", "X-A": "1"], timeout: 5)
        let prepared = try builder.prepare(request)
        XCTAssertEqual(prepared.urlRequest.httpMethod, "DELETE")
        XCTAssertEqual(prepared.urlRequest.timeoutInterval, 5)
        XCTAssertEqual(prepared.urlRequest.value(forHTTPHeaderField: "X-A"), "1")
        XCTAssertEqual(prepared.urlRequest.value(forHTTPHeaderField: "X-B"), "2")
        XCTAssertEqual(try builder.prepare(PathRequest<EmptyResponse>("/x")).urlRequest.timeoutInterval, 30)
    }

    func testRepeatedFieldsAreJoinedInTheURLRequestAndKeptApartBeside() throws {
        // Given a request with a name given twice, apart, and a dictionary-style one
        struct Languages: Request {
            typealias ResponseType = EmptyResponse
            var path: String { "/x" }
            var headerFields: HTTPFields {
                [HTTPField(name: "Accept-Language", value: "en"), HTTPField(name: "Accept", value: "*/*"),
                 HTTPField(name: "accept-language", value: "fr;q=0.5")]
            }
        }

        // When it is prepared
        let prepared = try builder.prepare(Languages())

        // Then the URLRequest holds the name once, its values joined; the fields in order go beside
        XCTAssertEqual(prepared.urlRequest.value(forHTTPHeaderField: "Accept-Language"), "en, fr;q=0.5")
        XCTAssertEqual(prepared.headerFields.map(\.description), ["Accept-Language: en", "Accept: */*", "accept-language: fr;q=0.5"])
        XCTAssertEqual(try builder.prepare(PathRequest<EmptyResponse>("/x", headers: ["B": "2", "A": "1"])).headerFields.map(\.name),
                       ["A", "B"], "a dictionary's fields are sorted by name")
    }

    func testABadValueInAnyRepeatedFieldIsRefused() {
        // Given a request whose second line of a name smuggles a line break
        struct Smuggler: Request {
            typealias ResponseType = EmptyResponse
            var path: String { "/x" }
            var headerFields: HTTPFields { [HTTPField(name: "X-Tag", value: "a"), HTTPField(name: "X-Tag", value: "b\r\nHost: evil")] }
        }

        // Then it is refused before anything is sent, naming the field
        XCTAssertThrowsError(try builder.prepare(Smuggler())) { error in
            guard case RequestError.invalidHeader(let name, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(name, "X-Tag")
        }
    }

    func testBodyGoesInTheBodyWithItsContentType() throws {
        let prepared = try builder.prepare(BodyRequest<TextBody, EmptyResponse>(parameters: TextBody(text: "hi"), path: "/notes"))
        XCTAssertEqual(prepared.urlRequest.httpBody, Data("hi".utf8))
        XCTAssertEqual(prepared.urlRequest.value(forHTTPHeaderField: "Content-Type"), "text/plain; charset=utf-8")
        XCTAssertNil(prepared.bodyFile)
    }

    func testQueryParametersGoInTheURL() throws {
        let prepared = try builder.prepare(BodyRequest<RawQuery, EmptyResponse>(parameters: RawQuery(query: "a=1"), path: "/s", method: .get))
        XCTAssertEqual(prepared.urlRequest.url?.absoluteString, "https://api.example.com/v1/s?a=1")
        XCTAssertNil(prepared.urlRequest.httpBody)
    }

    func testBodyOnGETIsRefusedNotDropped() {
        for method in [HTTPMethod.get, .head] {
            XCTAssertThrowsError(try builder.prepare(BodyRequest<TextBody, EmptyResponse>(parameters: TextBody(text: "x"), path: "/s", method: method))) { error in
                guard case RequestError.invalidParameters(_, let reason) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(reason.contains("\(method) request cannot carry a body"), reason)
            }
        }
    }

    func testEncoderErrorsBecomeInvalidParameters() {
        struct Broken: BodyData {
            struct Oops: Error {}
            var contentType: String { "text/plain" }
            func encode() throws -> Data { throw Oops() }
        }
        XCTAssertThrowsError(try builder.prepare(BodyRequest<Broken, EmptyResponse>(parameters: Broken(), path: "/s"))) { error in
            guard case RequestError.invalidParameters(let keyPath, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(keyPath, "")
            XCTAssertTrue(reason.contains("Broken failed to encode"), reason)
        }
    }

    func testHeadersThatCouldInjectAreRefused() {
        let cases: [(String, String, String)] = [
            ("X-Evil", "a\r\nX-Injected: 1", "carriage return"),
            ("X-Evil", "a\nb", "line feed"),
            ("X-Evil", "a\u{0}b", "NUL"),
            ("Bad Name", "v", "header name"),
            ("", "v", "header name"),
        ]
        for (name, value, expected) in cases {
            XCTAssertThrowsError(try builder.prepare(PathRequest<EmptyResponse>("/x", headers: [name: value]))) { error in
                guard case RequestError.invalidHeader(let badName, let reason) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(badName, name)
                XCTAssertTrue(reason.contains(expected), "\(reason) should mention \(expected)")
                XCTAssertFalse(error.localizedDescription.contains("\r"))
            }
        }
    }
}
