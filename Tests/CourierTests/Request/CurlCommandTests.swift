import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

final class CurlCommandTests: XCTestCase {
    func testSecretsAreRedactedByDefault() {
        // Given a POST with credentials, a cookie, a custom secret and a body with a quote
        var request = URLRequest(url: URL(string: "https://api.example.com/login?x=1")!)
        request.httpMethod = "POST"
        request.setValue("Bearer t0k3n", forHTTPHeaderField: "Authorization")
        request.setValue("session=abc", forHTTPHeaderField: "Cookie")
        request.setValue("k3y", forHTTPHeaderField: "X-Api-Key")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"user":"o'brien"}"#.utf8)

        // Then the command redacts them, and quotes everything for the shell
        XCTAssertEqual(request.curlCommand(sensitiveHeaders: ["x-api-key"]),
                       #"curl -X POST 'https://api.example.com/login?x=1' -H 'Authorization: <redacted>' "#
                       + #"-H 'Content-Type: application/json' -H 'Cookie: <redacted>' -H 'X-Api-Key: <redacted>' "#
                       + #"--data-binary '{"user":"o'\''brien"}'"#)
        XCTAssertTrue(request.curlCommand(revealingSecrets: true).contains("-H 'Authorization: Bearer t0k3n'"))
    }

    func testGETWithoutBodyHasNoMethodFlag() {
        let request = URLRequest(url: URL(string: "http://127.0.0.1:8080/get")!)
        XCTAssertEqual(request.curlCommand(), "curl 'http://127.0.0.1:8080/get'")
    }

    func testQueueDescribesARequestWithoutSendingIt() throws {
        var configuration = RequestQueueConfiguration.default
        configuration.sensitiveHeaders = ["X-Api-Key"]
        let transport = StubTransport()
        let queue = RequestQueue(configuration: configuration, delegate: nil,
                                 baseURL: URL(string: "https://api.example.com"), transport: transport)
        let command = try queue.curlCommand(for: PathRequest<EmptyResponse>("/me", headers: ["X-Api-Key": "k", "Accept": "*/*"]))
        XCTAssertEqual(command, "curl 'https://api.example.com/me' -H 'Accept: */*' -H 'X-Api-Key: <redacted>'")
        XCTAssertTrue(transport.started.isEmpty)
    }
}
