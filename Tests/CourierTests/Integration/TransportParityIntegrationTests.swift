import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// What URLSession gives users without asking, checked against real httpbin through whichever
/// transport the run uses (`Scripts/test.sh` runs these through both on Linux).
final class TransportParityIntegrationTests: XCTestCase {
    private struct Flags: Response, Decodable {
        let gzipped: Bool?
        let deflated: Bool?
        let brotli: Bool?
        let headers: [String: String]
    }

    private struct Cookies: Response, Decodable {
        let cookies: [String: String]
    }

    private struct Authenticated: Response, Decodable {
        let authenticated: Bool
        let user: String
    }

    func testCompressedResponsesArriveDecoded() async throws {
        // Given a queue that asks for nothing in particular
        let queue = try HTTPBin.queue()

        // When httpbin answers gzip, deflate and brotli
        let gzip = try await queue.send(PathRequest<Flags>("/gzip"))
        let deflate = try await queue.send(PathRequest<Flags>("/deflate"))
        let brotli = try await queue.send(PathRequest<Flags>("/brotli"))

        // Then each body was decoded before it was decoded as JSON, and the server was told
        // which encodings the client takes
        XCTAssertEqual(gzip.gzipped, true)
        XCTAssertEqual(deflate.deflated, true)
        XCTAssertEqual(brotli.brotli, true)
        let accepted = Set((gzip.headers["Accept-Encoding"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        XCTAssertTrue(accepted.isSuperset(of: ["gzip", "deflate"]), "Accept-Encoding: \(accepted)")
    }

    func testSessionHeadersAndADefaultUserAgentAreSent() async throws {
        // Given session headers, one of which the request overrides
        let queue = try HTTPBin.queue { config in
            config.sessionConfiguration.httpAdditionalHeaders = ["X-Session": "from-session", "X-Both": "from-session"]
        }

        // When a request with its own X-Both is sent
        let echo = try await queue.send(PathRequest<Echo>("/anything", headers: ["X-Both": "from-request"]))

        // Then the server got the session's header, the request's value where both set one,
        // and a User-Agent naming the process and libcurl, as URLSession does on Linux
        XCTAssertEqual(echo.headers["X-Session"], "from-session")
        XCTAssertEqual(echo.headers["X-Both"], "from-request")
        let agent = try XCTUnwrap(echo.headers["User-Agent"])
        XCTAssertTrue(agent.contains("curl/"), agent)
    }

    func testARequestsOwnUserAgentWins() async throws {
        let queue = try HTTPBin.queue()
        let echo = try await queue.send(PathRequest<Echo>("/anything", headers: ["User-Agent": "CourierTests/1.0"]))
        XCTAssertEqual(echo.headers["User-Agent"], "CourierTests/1.0")
    }

    func testCookiesAreStoredAndSentBackAcrossARedirect() async throws {
        // Given a cookie storage of the test's own
        let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "courier-tests-\(UUID())")
        let queue = try HTTPBin.queue { $0.sessionConfiguration.httpCookieStorage = storage }

        // When httpbin sets a cookie in a redirect to /cookies (which echoes the cookies it got)
        let echo = try await queue.send(PathRequest<Cookies>("/cookies/set?flavour=oat"))

        // Then the cookie was stored from the 302 and sent on the redirected request, and on the next one
        XCTAssertEqual(echo.cookies, ["flavour": "oat"])
        XCTAssertEqual(storage.cookies(for: try HTTPBin.url())?.map(\.name), ["flavour"])
        let again = try await queue.send(PathRequest<Cookies>("/cookies"))
        XCTAssertEqual(again.cookies, ["flavour": "oat"])
    }

    func testCookiesAreNeitherStoredNorSentWhenThePolicySaysNever() async throws {
        // Given a storage that holds a cookie, a policy that accepts none, and no cookie sending
        let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "courier-tests-\(UUID())")
        let queue = try HTTPBin.queue { config in
            config.sessionConfiguration.httpCookieStorage = storage
            config.sessionConfiguration.httpCookieAcceptPolicy = .never
            config.sessionConfiguration.httpShouldSetCookies = false
        }
        storage.setCookie(try XCTUnwrap(HTTPCookie(properties: [
            .name: "kept", .value: "1", .domain: try HTTPBin.url().host!, .path: "/",
        ])))

        // When httpbin sets another one and echoes what it got
        let echo = try await queue.send(PathRequest<Cookies>("/cookies/set?flavour=oat"))

        // Then nothing was sent and nothing new was stored
        XCTAssertEqual(echo.cookies, [:])
        XCTAssertEqual(storage.cookies?.map(\.name), ["kept"])
    }

    func testConfiguredCredentialsAnswerADigestChallengeThroughCurl() async throws {
        let queue = try HTTPBin.queue { $0.credentials = HTTPCredentials(user: "ada", password: "lovelace") }
        let request = PathRequest<Authenticated>("/digest-auth/auth/ada/lovelace")
        if HTTPBin.usesURLSession {
            // Linux's URLSession cannot answer Digest (documented on `credentials`): the 401 is the answer
            do {
                _ = try await queue.send(request)
                XCTFail("URLSession on Linux was expected to leave the Digest challenge unanswered")
            } catch {
                XCTAssertEqual(error.statusCode, 401)
            }
            return
        }
        let answer = try await queue.send(request)
        XCTAssertTrue(answer.authenticated)
        XCTAssertEqual(answer.user, "ada")
    }

    func testEveryMethodCarriesItsBody() async throws {
        // Given a text body sent with each method that takes one
        let queue = try HTTPBin.queue()
        for method: HTTPMethod in [.post, .put, .patch, .delete] {
            // When it is sent to /anything
            var request = BodyRequest<TextBody, Echo>(parameters: TextBody(text: "body of \(method)"), path: "/anything")
            request.method = method
            let echo = try await queue.send(request)

            // Then the server saw that method with that body and its length
            XCTAssertEqual(echo.method, method.rawValue)
            XCTAssertEqual(echo.data, "body of \(method)")
            XCTAssertEqual(echo.headers["Content-Length"], "\("body of \(method)".utf8.count)")
        }
    }

    func testAnEmptyPostSaysItsLengthIsZero() async throws {
        let queue = try HTTPBin.queue()
        let echo = try await queue.send(PathRequest<Echo>("/anything", method: .post))
        XCTAssertEqual(echo.method, "POST")
        XCTAssertEqual(echo.headers["Content-Length"], "0")
    }

    func testAHeadRequestGetsTheHeadOnly() async throws {
        let queue = try HTTPBin.queue()
        let response = try await queue.send(PathRequest<StatusAndBody>("/bytes/512", method: .head))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body.count, 0)
    }
}

/// The status and body as they arrived, of a response in 200–299 (others fail validation,
/// unlike Courier's RawResponse).
struct StatusAndBody: Response {
    let status: Int
    let body: Data
    init(body: ResponseData, head: ResponseHead) throws {
        status = head.status
        self.body = body.data
    }
}
