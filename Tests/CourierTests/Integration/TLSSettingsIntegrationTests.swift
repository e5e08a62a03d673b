#if os(Linux)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// ``TLSConfiguration`` through the curl transport against the nginx that Scripts/test.sh starts:
/// pinned keys (matching, not matching, rotation, another host's, a wrong host), a self-signed
/// server, mutual TLS (the server's answer and log show the subject it received), the minimum
/// version against a TLS 1.1-only server, and the negotiated versions in ``RequestMetrics``.
/// Through the curl transport whatever the run's transport: the URLSession transport refuses
/// these settings (`TLSSettingsRefusalTests`).
final class TLSSettingsIntegrationTests: XCTestCase {
    /// What the TLS servers answer.
    private struct Answer: Response, Decodable, Equatable {
        let `protocol`: String
        let tls: String
        let subject: String
    }

    private var directory: URL {
        get throws {
            guard let path = ProcessInfo.processInfo.environment["COURIER_TLS_DIR"], !path.isEmpty else {
                _ = try HTTPBin.tlsServer("COURIER_TLS_DIR")
                throw XCTSkip("COURIER_TLS_DIR is not set")
            }
            return URL(fileURLWithPath: path, isDirectory: true)
        }
    }

    /// A file of Scripts/make_test_certificates.py.
    private func file(_ name: String) throws -> URL {
        try directory.appendingPathComponent(name)
    }

    /// The pin of one of the test servers' keys (valid, expired, wrong-host, self-signed).
    private func pin(_ server: String) throws -> PublicKeyPin {
        try PublicKeyPin(base64SHA256: String(contentsOf: file("\(server).pin"), encoding: .utf8))
    }

    /// A pin no test server has.
    private let stalePin = try! PublicKeyPin(sha256: Data(repeating: 7, count: 32))

    /// A new curl queue trusting the private CA, with `tls`, and a delegate that keeps metrics.
    private func queue(_ tls: TLSConfiguration, metrics: MetricsWaiter? = nil) throws -> RequestQueue {
        let ca = URL(fileURLWithPath: try HTTPBin.tlsServer("COURIER_TLS_CA").path)
        return try HTTPBin.queue(delegate: metrics) { config in
            config.trustedCertificates = [ca]
            config.tls = tls
            config.transport = .curl
            config.cache = nil
        }
    }

    private func send(_ queue: RequestQueue, to variable: String, host: String = "127.0.0.1",
                      path: String = "/") async throws -> Result<Answer, RequestError> {
        var components = URLComponents(url: try HTTPBin.tlsServer(variable), resolvingAgainstBaseURL: false)!
        components.host = host
        components.path = path
        do {
            return .success(try await queue.send(PathRequest<Answer>(components.url!.absoluteString)))
        } catch {
            return .failure(error)
        }
    }

    private func port(_ variable: String) throws -> Int {
        // Looked up outside XCTUnwrap, whose autoclosure would turn the skip it throws into a failure.
        let url = try HTTPBin.tlsServer(variable)
        return try XCTUnwrap(url.port)
    }

    private func code(_ result: Result<Answer, RequestError>) -> URLError.Code? {
        if case .failure(.transportFailed(let error)) = result { return error.code }
        return nil
    }

    // MARK: - Pinned keys

    func testAMatchingPinIsAccepted() async throws {
        // Given the valid server's key pinned for 127.0.0.1
        var tls = TLSConfiguration()
        tls.hosts["127.0.0.1"] = HostTLS(trust: .pinnedKeys([try pin("valid")]))

        // When a request goes to it
        let result = try await send(try queue(tls), to: "COURIER_TLS_URL")

        // Then it succeeds
        XCTAssertEqual(try result.get().protocol, "HTTP/2.0")
    }

    func testAPinThatDoesNotMatchFailsNamingTheHostThePinsAndThePresentedKey() async throws {
        // Given another key pinned for 127.0.0.1
        var tls = TLSConfiguration()
        tls.hosts["127.0.0.1"] = HostTLS(trust: .pinnedKeys([stalePin]))

        // When a request goes to the valid server
        let result = try await send(try queue(tls), to: "COURIER_TLS_URL")

        // Then it fails during the handshake with a TLS failure naming the host, the expected pin
        // and the key the server presented
        guard case .failure(let error) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(code(result), .serverCertificateUntrusted)
        XCTAssertEqual(error.tlsFailure, TLSFailure(host: "127.0.0.1",
                                                    reason: .pinMismatch(expected: [stalePin], presented: try pin("valid"))))
        let text = error.description
        XCTAssertTrue(text.contains("127.0.0.1"), text)
        XCTAssertTrue(text.contains(stalePin.description), text)
        XCTAssertTrue(text.contains(try pin("valid").description), text)
    }

    func testRotationWithAStalePinAndTheCurrentOneIsAccepted() async throws {
        // Given two pins for the host: a stale one first, then the server's key
        var tls = TLSConfiguration()
        tls.hosts["127.0.0.1"] = HostTLS(trust: .pinnedKeys([stalePin, try pin("valid")]))
        let queue = try queue(tls)

        // When two requests go to it (a new connection, then a reused one)
        let first = try await send(queue, to: "COURIER_TLS_URL", path: "/first")
        let second = try await send(queue, to: "COURIER_TLS_URL", path: "/second")

        // Then both succeed
        XCTAssertEqual(try first.get().protocol, "HTTP/2.0")
        XCTAssertEqual(try second.get().protocol, "HTTP/2.0")
    }

    func testAPinForAnotherHostDoesNotApply() async throws {
        // Given a pin that no server matches, for localhost only
        var tls = TLSConfiguration()
        tls.hosts["localhost"] = HostTLS(trust: .pinnedKeys([stalePin]))
        let queue = try queue(tls)

        // When the same server is asked as 127.0.0.1 and as localhost (its certificate names both)
        let byAddress = try await send(queue, to: "COURIER_TLS_URL", host: "127.0.0.1")
        let byName = try await send(queue, to: "COURIER_TLS_URL", host: "localhost")

        // Then the address is not pinned, and the name is
        XCTAssertEqual(try byAddress.get().protocol, "HTTP/2.0")
        XCTAssertEqual(byName.failureTLS?.host, "localhost")
        XCTAssertEqual(code(byName), .serverCertificateUntrusted)
    }

    func testAPinForOnePortDoesNotApplyToAnother() async throws {
        // Given a pin that no server matches, for the valid server's port only
        var tls = TLSConfiguration()
        tls.hosts["127.0.0.1:\(try port("COURIER_TLS_URL"))"] = HostTLS(trust: .pinnedKeys([stalePin]))
        let queue = try queue(tls)

        // When that server and the closing one (same host, another port) are asked
        let pinned = try await send(queue, to: "COURIER_TLS_URL")
        let other = try await send(queue, to: "COURIER_TLS_CLOSING_URL")

        // Then only the pinned port fails
        XCTAssertEqual(code(pinned), .serverCertificateUntrusted)
        XCTAssertEqual(try other.get().protocol, "HTTP/1.1")
    }

    func testAWrongHostIsStillRefusedWhenItsKeyIsPinned() async throws {
        // Given the wrong-host server's own key pinned for 127.0.0.1
        var tls = TLSConfiguration()
        tls.hosts["127.0.0.1"] = HostTLS(trust: .pinnedKeys([try pin("wrong-host")]))

        // When a request goes to it
        let result = try await send(try queue(tls), to: "COURIER_TLS_WRONG_HOST_URL")

        // Then the certificate's name is still checked, before the pin
        XCTAssertEqual(code(result), .serverCertificateUntrusted)
        XCTAssertNil(result.failureTLS, "a name mismatch, not a pin failure: \(result)")
    }

    // MARK: - Self-signed

    func testASelfSignedServerIsAcceptedOnlyWithItsCertificate() async throws {
        // Given one queue with the default evaluation, and one trusting the self-signed certificate for 127.0.0.1
        var tls = TLSConfiguration()
        tls.hosts["127.0.0.1:\(try port("COURIER_TLS_SELF_SIGNED_URL"))"] =
            HostTLS(trust: .selfSignedForTesting(certificate: try file("self-signed.pem")))
        let trusting = try queue(tls)

        // When both ask the self-signed server, and the second also asks the CA-signed valid server
        let refused = try await send(try queue(TLSConfiguration()), to: "COURIER_TLS_SELF_SIGNED_URL")
        let accepted = try await send(trusting, to: "COURIER_TLS_SELF_SIGNED_URL")
        let otherPort = try await send(trusting, to: "COURIER_TLS_URL")

        // Then only the trusting queue gets in, and only there: other ports keep their roots
        XCTAssertEqual(code(refused), .serverCertificateHasUnknownRoot)
        XCTAssertEqual(try accepted.get().protocol, "HTTP/2.0")
        XCTAssertEqual(try otherPort.get().protocol, "HTTP/2.0")
    }

    func testASelfSignedCertificateIsNotAcceptedForAServerThatPresentsAnother() async throws {
        // Given the self-signed certificate trusted for the valid server's port
        var tls = TLSConfiguration()
        tls.hosts["127.0.0.1:\(try port("COURIER_TLS_URL"))"] =
            HostTLS(trust: .selfSignedForTesting(certificate: try file("self-signed.pem")))

        // When a request goes there (a certificate of the private CA, which this host no longer trusts)
        let result = try await send(try queue(tls), to: "COURIER_TLS_URL")

        // Then it is refused: the self-signed certificate replaces the roots for that host
        XCTAssertEqual(code(result), .serverCertificateHasUnknownRoot)
    }

    // MARK: - Client certificates

    func testAClientCertificateIsSentAndTheServerSawItsSubject() async throws {
        // Given the client certificate of the private CA, its key encrypted, for the queue
        var tls = TLSConfiguration()
        tls.clientCertificate = ClientCertificate(certificate: try file("client.pem"), privateKey: try file("client-encrypted.key"),
                                                  password: "courier")
        let marker = "/mtls-\(UUID().uuidString)"

        // When a request goes to the server that requires one
        let result = try await send(try queue(tls), to: "COURIER_TLS_MTLS_URL", path: marker)

        // Then it succeeds, and the server's answer and log name the certificate's subject
        XCTAssertEqual(try result.get(), Answer(protocol: "HTTP/2.0", tls: "TLSv1.2", subject: "CN=Courier test client"))
        // (nginx writes a request's log line when the request ends, which may be just after the client has the response)
        let logFile = try XCTUnwrap(ProcessInfo.processInfo.environment["COURIER_TLS_MTLS_LOG"])
        func log() -> String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }
        XCTAssertTrue(eventually { log().contains("\(marker) subject=CN=Courier test client verify=SUCCESS") }, log())
    }

    func testAPerHostClientCertificateIsUsedForThatHostOnly() async throws {
        // Given the client certificate (key in the clear) for the mTLS server's port only
        var tls = TLSConfiguration()
        tls.hosts["127.0.0.1:\(try port("COURIER_TLS_MTLS_URL"))"] =
            HostTLS(clientCertificate: ClientCertificate(certificate: try file("client.pem"), privateKey: try file("client.key")))
        let queue = try queue(tls)

        // When the mTLS server and the valid server are asked
        let mtls = try await send(queue, to: "COURIER_TLS_MTLS_URL")
        let plain = try await send(queue, to: "COURIER_TLS_URL")

        // Then the first got the certificate and the second none
        XCTAssertEqual(try mtls.get().subject, "CN=Courier test client")
        XCTAssertEqual(try plain.get().subject, "")
    }

    func testAServerThatRequiresAClientCertificateRefusesARequestWithoutOne() async throws {
        // Given no client certificate
        let queue = try queue(TLSConfiguration())

        // When a request goes to the server that requires one
        let result = try await send(queue, to: "COURIER_TLS_MTLS_URL")

        // Then the handshake fails with a TLS failure that says a client certificate is probably required
        XCTAssertEqual(code(result), .clientCertificateRequired, "\(result)")
        guard case .clientCertificateRequired(let alert)? = result.failureTLS?.reason else { return XCTFail("got \(result)") }
        XCTAssertEqual(alert, "sslv3 alert handshake failure")
        XCTAssertEqual(result.failureTLS?.host, "127.0.0.1")
    }

    func testAWrongKeyPasswordIsATypedErrorNamingTheKeyFile() async throws {
        // Given the encrypted key with a wrong password (the files themselves are fine)
        var tls = TLSConfiguration()
        let key = try file("client-encrypted.key")
        tls.clientCertificate = ClientCertificate(certificate: try file("client.pem"), privateKey: key, password: "wrong")

        // When a request goes to the mTLS server
        let result = try await send(try queue(tls), to: "COURIER_TLS_MTLS_URL")

        // Then it fails before the handshake, naming the key file
        guard case .unusableFile(let file, let reason)? = result.failureTLS?.reason else { return XCTFail("got \(result)") }
        XCTAssertEqual(file, key)
        XCTAssertTrue(reason.contains("client-encrypted.key"), reason)
        XCTAssertEqual(code(result), .secureConnectionFailed)
    }

    func testAMissingClientCertificateFileFailsEveryRequestNamingIt() async throws {
        // Given a client certificate file that does not exist
        var tls = TLSConfiguration()
        let missing = URL(fileURLWithPath: "/nonexistent/courier-client.pem")
        tls.clientCertificate = ClientCertificate(certificate: missing)

        // When a request goes to any server
        let result = try await send(try queue(tls), to: "COURIER_TLS_URL")

        // Then it fails at once, naming the file
        XCTAssertEqual(result.failureTLS, TLSFailure(host: nil, reason: .unusableFile(
            missing, reason: "the client certificate file: it does not exist")))
    }

    // MARK: - Versions

    func testAServerOfferingOnlyTLS11IsRefusedByTheDefaultMinimum() async throws {
        // Given the default minimum, TLS 1.2
        let queue = try queue(TLSConfiguration())

        // When a request goes to the TLS 1.1-only server
        let result = try await send(queue, to: "COURIER_TLS_V11_URL")

        // Then the handshake fails with a TLS failure naming the minimum
        XCTAssertEqual(result.failureTLS, TLSFailure(host: "127.0.0.1",
                                                     reason: .versionRefused(minimum: .v1_2, alert: "tlsv1 alert protocol version")))
        XCTAssertEqual(code(result), .secureConnectionFailed)
    }

    func testAMinimumOfTLS13RefusesATLS12Server() async throws {
        // Given a minimum of TLS 1.3, and the self-signed server (TLS 1.3) trusted
        var tls = TLSConfiguration()
        tls.minimumVersion = .v1_3
        tls.hosts["127.0.0.1:\(try port("COURIER_TLS_SELF_SIGNED_URL"))"] =
            HostTLS(trust: .selfSignedForTesting(certificate: try file("self-signed.pem")))
        let queue = try queue(tls)

        // When a request goes to the valid server (TLS 1.2 at most) and to the self-signed one
        let old = try await send(queue, to: "COURIER_TLS_URL")
        let current = try await send(queue, to: "COURIER_TLS_SELF_SIGNED_URL")

        // Then the TLS 1.2 server is refused and the TLS 1.3 one is not
        XCTAssertEqual(old.failureTLS, TLSFailure(host: "127.0.0.1",
                                                  reason: .versionRefused(minimum: .v1_3, alert: "tlsv1 alert protocol version")))
        XCTAssertEqual(try current.get().tls, "TLSv1.3")
    }

    // MARK: - Metrics

    func testMetricsNameTheNegotiatedHTTPAndTLSVersions() async throws {
        // Given a queue that keeps metrics and trusts the self-signed server (HTTP/2, TLS 1.3)
        var tls = TLSConfiguration()
        tls.hosts["127.0.0.1:\(try port("COURIER_TLS_SELF_SIGNED_URL"))"] =
            HostTLS(trust: .selfSignedForTesting(certificate: try file("self-signed.pem")))
        let metrics = MetricsWaiter()
        let queue = try queue(tls, metrics: metrics)

        // When it asks that server twice (the second on the same connection), the closing server
        // (HTTP/1.1, TLS 1.2) and httpbin over plain HTTP
        let http2 = try await metrics.metrics(of: queue, sending: "\(try HTTPBin.tlsServer("COURIER_TLS_SELF_SIGNED_URL"))/1")
        let reused = try await metrics.metrics(of: queue, sending: "\(try HTTPBin.tlsServer("COURIER_TLS_SELF_SIGNED_URL"))/2")
        let http11 = try await metrics.metrics(of: queue, sending: "\(try HTTPBin.tlsServer("COURIER_TLS_CLOSING_URL"))/")
        let plain = try await metrics.metrics(of: queue, sending: "\(try HTTPBin.url())/get")

        // Then each names what was negotiated, a reused connection too
        XCTAssertEqual(http2.httpVersion, .http2)
        XCTAssertEqual(http2.tlsVersion, .v1_3)
        XCTAssertEqual(reused.httpVersion, .http2)
        XCTAssertEqual(reused.tlsVersion, .v1_3)
        XCTAssertEqual(http11.httpVersion, .http1_1)
        XCTAssertEqual(http11.tlsVersion, .v1_2)
        XCTAssertEqual(plain.httpVersion, .http1_1)
        XCTAssertNil(plain.tlsVersion)
    }
}

/// Hands over a request's metrics once its queue's delegate has them.
final class MetricsWaiter: RequestQueueDelegate {
    private let waiting = Locked<[RequestID: CheckedContinuation<RequestMetrics, Never>]>([:])
    private let arrived = Locked<[RequestID: RequestMetrics]>([:])

    func requestQueue(_ queue: RequestQueue, didFinishWith metrics: RequestMetrics) {
        let continuation = waiting.withLock { waiting -> CheckedContinuation<RequestMetrics, Never>? in
            if let continuation = waiting.removeValue(forKey: metrics.id) { return continuation }
            arrived.withLock { $0[metrics.id] = metrics }
            return nil
        }
        continuation?.resume(returning: metrics)
    }

    /// Sends a GET for raw data to `url` and returns its metrics (the result is not looked at).
    func metrics(of queue: RequestQueue, sending url: String) async throws -> RequestMetrics {
        let id = queue.add(PathRequest<Text>(url))
        return await withCheckedContinuation { continuation in
            let ready = waiting.withLock { waiting -> RequestMetrics? in
                if let metrics = arrived.withLock({ $0.removeValue(forKey: id) }) { return metrics }
                waiting[id] = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

private extension Result where Failure == RequestError {
    var failureTLS: TLSFailure? {
        if case .failure(let error) = self { return error.tlsFailure }
        return nil
    }
}
#endif
