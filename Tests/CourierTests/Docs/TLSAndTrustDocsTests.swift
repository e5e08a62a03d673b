// Mirrors the article "TLS: Pinning, Client Certificates and Versions" (Courier.docc/TLSAndTrust.md):
// its samples compile against the public API and make the settings the article says. What needs
// a server is in TLSSettingsIntegrationTests.
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class TLSAndTrustDocsTests: XCTestCase {
    // TLS › Pinning a server's public key.
    func testPinningSample() throws {
        var config = RequestQueueConfiguration.default
        config.tls.hosts["payments.example.com"] = HostTLS(trust: .pinnedKeys([
            try PublicKeyPin(base64SHA256: "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="),  // in use
            try PublicKeyPin(base64SHA256: "YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="),  // next
        ]))

        XCTAssertEqual(config.tls.hosts["payments.example.com"]?.trust.pins.map(\.description), [
            "sha256//r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=", "sha256//YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg=",
        ])
        XCTAssertNoThrow(try config.tls.validate())
    }

    // TLS › Pinning a server's public key: reading the failure.
    func testReadingAPinFailure() {
        let expected = [try! PublicKeyPin(sha256: Data(repeating: 1, count: 32))]
        let failure = TLSFailure(host: "payments.example.com", reason: .pinMismatch(expected: expected, presented: nil))
        let error = RequestError.transportFailed(URLError(.serverCertificateUntrusted, userInfo: [
            NSLocalizedDescriptionKey: failure.description,
        ]))
        var logged: [String] = []
        func log(_ text: String) { logged.append(text) }

        // A plain URLError carries no TLS failure: only the transport's own errors do.
        if case .pinMismatch(let expected, let presented)? = error.tlsFailure?.reason {
            log("expected one of \(expected), got \(presented?.description ?? "an unreported key")")
        }
        XCTAssertEqual(logged, [])
        XCTAssertTrue(failure.description.hasPrefix("the server payments.example.com presented a public key"))
    }

    // TLS › Which hosts an entry covers.
    func testWildcardsAreRefused() {
        var tls = TLSConfiguration()
        tls.hosts["*.example.com"] = HostTLS(trust: .pinnedKeys([try! PublicKeyPin(sha256: Data(count: 32))]))
        XCTAssertThrowsError(try tls.validate()) { error in
            guard case .invalidHost(let name, _)? = (error as? TLSFailure)?.reason else { return XCTFail("\(error)") }
            XCTAssertEqual(name, "*.example.com")
        }
    }

    // TLS › Mutual TLS and A self-signed test server.
    func testClientCertificateAndSelfSignedSamples() {
        var config = RequestQueueConfiguration.default
        config.tls.clientCertificate = ClientCertificate(
            certificate: URL(fileURLWithPath: "/etc/myapp/client.pem"),
            privateKey: URL(fileURLWithPath: "/etc/myapp/client.key"),
            password: ProcessInfo.processInfo.environment["CLIENT_KEY_PASSWORD"])
        config.tls.hosts["localhost:8443"] = HostTLS(trust: .selfSignedForTesting(
            certificate: URL(fileURLWithPath: "Tests/Resources/dev-server.pem")))

        // Neither file exists here: validation names the first one it checks.
        XCTAssertThrowsError(try config.tls.validate()) { error in
            XCTAssertEqual(error as? TLSFailure, TLSFailure(host: nil, reason: .unusableFile(
                URL(fileURLWithPath: "/etc/myapp/client.pem"), reason: "the client certificate file: it does not exist")))
        }
    }

    // TLS › TLS versions.
    func testVersionsSample() {
        final class Logger: RequestQueueDelegate {
            func log(_ text: String) {}
            func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics) {
                log("\(metrics.id): \(metrics.httpVersion?.description ?? "-") over \(metrics.tlsVersion?.description ?? "no TLS")")
            }
        }
        var config = RequestQueueConfiguration.default
        config.tls.minimumVersion = .v1_3
        XCTAssertEqual(config.tls.minimumVersion, .v1_3)
        XCTAssertEqual(TLSConfiguration().minimumVersion, .v1_2)
        _ = RequestQueue(configuration: config, delegate: Logger())
    }
}
