import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// How the queue follows redirects: headers across origins, methods and bodies, limits.
final class RedirectTests: XCTestCase {
    private func response(_ status: Int, location: String?, from url: String = "https://a.example.com/start") -> ResponseHead {
        ResponseHead(status: status, headerFields: location.map { ["Location": $0] } ?? [], url: URL(string: url)!)
    }

    private func request(_ method: String = "GET", body: String? = nil) -> URLRequest {
        var request = URLRequest(url: URL(string: "https://a.example.com/start")!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        for (name, value) in ["Authorization": "Bearer t", "Cookie": "c=1", "Proxy-Authorization": "p",
                              "X-Api-Key": "k", "X-Other": "o", "Content-Type": "application/json"] {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return request
    }

    func testCrossOriginRedirectDropsSensitiveHeaders() throws {
        for target in ["https://b.example.com/x", "http://a.example.com/x", "https://a.example.com:8443/x"] {
            let next = try XCTUnwrap(Redirects.request(following: response(302, location: target), from: request(),
                                                       sensitiveHeaders: ["x-api-key"]))
            XCTAssertEqual(next.url?.absoluteString, target)
            XCTAssertEqual(Set(next.allHTTPHeaderFields?.keys.map { $0 } ?? []), ["X-Other", "Content-Type"], target)
        }
    }

    func testSameOriginRedirectKeepsHeaders() throws {
        let next = try XCTUnwrap(Redirects.request(following: response(301, location: "/elsewhere?q=1"), from: request(),
                                                   sensitiveHeaders: ["x-api-key"]))
        XCTAssertEqual(next.url?.absoluteString, "https://a.example.com/elsewhere?q=1")
        XCTAssertEqual(next.value(forHTTPHeaderField: "Authorization"), "Bearer t")
        XCTAssertEqual(next.value(forHTTPHeaderField: "Cookie"), "c=1")
        XCTAssertEqual(next.value(forHTTPHeaderField: "X-Api-Key"), "k")
        XCTAssertTrue(Redirects.isSameOrigin(URL(string: "https://A.example.com:443/x")!, URL(string: "https://a.example.com/y")!))
    }

    func testMethodAndBodyPerStatus() throws {
        // 307 and 308 repeat method and body
        for status in [307, 308] {
            let next = try XCTUnwrap(Redirects.request(following: response(status, location: "/b"), from: request("POST", body: "{}"), sensitiveHeaders: []))
            XCTAssertEqual(next.httpMethod, "POST")
            XCTAssertEqual(next.httpBody, Data("{}".utf8))
            XCTAssertEqual(next.value(forHTTPHeaderField: "Content-Type"), "application/json")
        }
        // 303, and 301/302 after a POST, become a GET without a body
        for status in [301, 302, 303] {
            let next = try XCTUnwrap(Redirects.request(following: response(status, location: "/b"), from: request("POST", body: "{}"), sensitiveHeaders: []))
            XCTAssertEqual(next.httpMethod, "GET", "\(status)")
            XCTAssertNil(next.httpBody)
            XCTAssertNil(next.value(forHTTPHeaderField: "Content-Type"))
            XCTAssertTrue(Redirects.dropsBody(status: status, method: "POST"))
        }
        // a PUT answered 302 keeps its method and body
        let put = try XCTUnwrap(Redirects.request(following: response(302, location: "/b"), from: request("PUT", body: "x"), sensitiveHeaders: []))
        XCTAssertEqual(put.httpMethod, "PUT")
        XCTAssertEqual(put.httpBody, Data("x".utf8))
    }

    func testNonRedirectsAreNotFollowed() {
        XCTAssertNil(Redirects.request(following: response(302, location: nil), from: request(), sensitiveHeaders: []))
        XCTAssertNil(Redirects.request(following: response(304, location: "/b"), from: request(), sensitiveHeaders: []))
        XCTAssertNil(Redirects.request(following: response(302, location: "file:///etc/passwd"), from: request(), sensitiveHeaders: []))
    }

    // MARK: - Through the queue

    func testQueueFollowsAChainAndStopsAtTheLimit() throws {
        // Given a server that redirects /r/N to /r/N-1 and answers /r/0
        let transport = StubTransport { request in
            let step = Int(request.url!.lastPathComponent)!
            return step == 0 ? .json(#"{"message":"arrived"}"#) : .status(302, headers: ["Location": "/v1/r/\(step - 1)"])
        }
        var configuration = RequestQueueConfiguration.default
        configuration.callbackQueue = TestQueues.callbacks
        configuration.redirectPolicy = .follow(maximum: 3)
        let queue = RequestQueue(configuration: configuration, delegate: nil, baseURL: URL(string: "https://api.example.com/v1"),
                                 transport: transport)

        // When requests need 3 and 4 redirects
        let three = try XCTUnwrap(result(of: queue.add(PathRequest<Greeting>("/r/3")), on: queue, as: Greeting.self))
        let four = try XCTUnwrap(result(of: queue.add(PathRequest<Greeting>("/r/4")), on: queue, as: Greeting.self))

        // Then the first arrives and the second fails, naming the count
        XCTAssertEqual(try three.get(), Greeting(message: "arrived"))
        guard case .failure(.tooManyRedirects(4)) = four else { return XCTFail("got \(four)") }
    }

    func testRefusedRedirectIsTheResponse() throws {
        let transport = StubTransport { _ in .status(302, headers: ["Location": "https://elsewhere.example.com/"]) }
        let queue = makeQueue(transport: transport, delegate: RefusingDelegate())
        let result = try XCTUnwrap(result(of: queue.add(PathRequest<Greeting>("/go")), on: queue, as: Greeting.self))
        guard case .failure(.validationFailed(let response, _)) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(response.statusCode, 302)
        XCTAssertEqual(transport.started.count, 1)
    }
}

private final class RefusingDelegate: RequestQueueDelegate {
    func requestQueue(_ queue: RequestQueue, shouldRedirect request: URLRequest, to newRequest: URLRequest,
                      response: HTTPURLResponse) -> URLRequest? { nil }
}
