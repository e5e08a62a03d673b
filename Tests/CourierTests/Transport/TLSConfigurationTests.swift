import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The TLS settings' values: pins, host names and their matching, validation, the failures'
/// sentences; the curl transport's per-transfer options and error mapping; and the URLSession
/// transport's refusals, which need no server (nothing is sent).
final class TLSConfigurationTests: XCTestCase {
    private let pinA = try! PublicKeyPin(sha256: Data(repeating: 1, count: 32))
    private let pinB = try! PublicKeyPin(sha256: Data(repeating: 2, count: 32))

    /// A PEM file in a fresh temporary folder.
    private func temporaryFile(_ name: String, _ text: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file
    }

    private let certificatePEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    private let keyPEM = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"

    // MARK: - Pins

    func testAPinIsWrittenAsCurlWritesIt() throws {
        // Given a digest of 32 bytes 0x01
        let base64 = Data(repeating: 1, count: 32).base64EncodedString()

        // When pins are made from the bytes, the base64 and curl's form
        let fromBytes = try PublicKeyPin(sha256: Data(repeating: 1, count: 32))
        let fromText = try PublicKeyPin(base64SHA256: base64)
        let fromCurl = try PublicKeyPin(base64SHA256: "sha256//" + base64)

        // Then they are equal and written with curl's prefix
        XCTAssertEqual(base64, "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=")
        XCTAssertEqual(fromBytes, fromText)
        XCTAssertEqual(fromText, fromCurl)
        XCTAssertEqual(fromBytes.description, "sha256//AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=")
        XCTAssertEqual(CurlTLSForTests.pinnedKeyOption([pinA, pinB]),
                       "sha256//AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=;sha256//AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=")
    }

    func testPinsThatAreNotASHA256DigestAreRefused() {
        // Given text that is not base64, base64 of 20 bytes, and 31 raw bytes
        // When pins are made of them
        // Then each throws a TLS failure saying why
        XCTAssertThrowsError(try PublicKeyPin(base64SHA256: "not base64!")) { error in
            XCTAssertEqual(error as? TLSFailure, TLSFailure(host: nil, reason: .invalidPin("not base64!", reason: "it is not base64")))
        }
        let sha1 = Data(repeating: 3, count: 20).base64EncodedString()
        XCTAssertThrowsError(try PublicKeyPin(base64SHA256: sha1)) { error in
            XCTAssertEqual(error as? TLSFailure, TLSFailure(host: nil, reason: .invalidPin(
                sha1, reason: "it decodes to 20 bytes, not a SHA-256 digest's 32")))
        }
        XCTAssertThrowsError(try PublicKeyPin(sha256: Data(count: 31))) { error in
            guard case .invalidPin(_, let reason)? = (error as? TLSFailure)?.reason else { return XCTFail("\(error)") }
            XCTAssertEqual(reason, "a SHA-256 digest has 32 bytes, not 31")
        }
    }

    // MARK: - Host names

    func testHostNamesAreNormalised() throws {
        // Given entries in various spellings
        // When they are normalised
        // Then case, trailing dots and IPv6 brackets go, and ports stay
        XCTAssertEqual(try TLSConfiguration.normalizedHost("API.Example.COM"), "api.example.com")
        XCTAssertEqual(try TLSConfiguration.normalizedHost("example.com."), "example.com")
        XCTAssertEqual(try TLSConfiguration.normalizedHost("example.com:8443"), "example.com:8443")
        XCTAssertEqual(try TLSConfiguration.normalizedHost("[::1]"), "::1")
        XCTAssertEqual(try TLSConfiguration.normalizedHost("[::1]:8443"), "::1:8443")
        XCTAssertEqual(try TLSConfiguration.normalizedHost("::1"), "::1")
        XCTAssertEqual(try TLSConfiguration.normalizedHost("127.0.0.1"), "127.0.0.1")
    }

    func testInvalidHostNamesAreRefusedSayingWhy() {
        // Given entries that name no single host
        let cases: [(String, String)] = [
            ("*.example.com", "wildcards are not supported: name each host exactly (\"api.example.com\")"),
            ("https://example.com", "a host name only, such as \"api.example.com\" or \"api.example.com:8443\", not a URL"),
            ("", "the name is empty"),
            ("example.com:0", "the port \"0\" is not a number from 1 to 65535"),
            ("example.com:https", "the port \"https\" is not a number from 1 to 65535"),
            ("[::1", "an IPv6 address without its closing \"]\""),
        ]
        for (name, reason) in cases {
            // When each is normalised
            // Then it throws naming the entry and the reason
            XCTAssertThrowsError(try TLSConfiguration.normalizedHost(name)) { error in
                XCTAssertEqual(error as? TLSFailure, TLSFailure(host: name, reason: .invalidHost(name, reason: reason)), name)
            }
        }
    }

    func testHostsMatchExactlyAndAPortEntryWinsOverAHostEntry() throws {
        // Given entries for a host, the same host on one port, and another host
        var tls = TLSConfiguration()
        tls.hosts["Example.com"] = HostTLS(trust: .pinnedKeys([pinA]))
        tls.hosts["example.com:8443"] = HostTLS(trust: .pinnedKeys([pinB]))
        tls.hosts["[::1]"] = HostTLS(trust: .pinnedKeys([pinB]))
        let table = try tls.resolved()

        // When URLs' hosts and ports are looked up
        func pins(_ host: String, _ port: Int) -> [PublicKeyPin]? {
            TLSConfiguration.settings(in: table, host: host, port: port)?.trust.pins
        }

        // Then names match exactly (no subdomains), the port entry wins on its port, and IPv6 matches with or without brackets
        XCTAssertEqual(pins("example.com", 443), [pinA])
        XCTAssertEqual(pins("EXAMPLE.COM.", 443), [pinA])
        XCTAssertEqual(pins("example.com", 8443), [pinB])
        XCTAssertNil(pins("www.example.com", 443))
        XCTAssertNil(pins("example.co", 443))
        XCTAssertEqual(pins("[::1]", 443), [pinB])
        XCTAssertEqual(pins("::1", 443), [pinB])
    }

    func testTwoEntriesForTheSameHostAreRefused() {
        // Given two spellings of one host
        var tls = TLSConfiguration()
        tls.hosts["example.com"] = HostTLS(trust: .pinnedKeys([pinA]))
        tls.hosts["EXAMPLE.com."] = HostTLS(trust: .pinnedKeys([pinB]))

        // When the configuration is validated
        // Then it throws naming the second (in sorted order)
        XCTAssertThrowsError(try tls.validate()) { error in
            XCTAssertEqual(error as? TLSFailure, TLSFailure(host: "example.com", reason: .invalidHost(
                "example.com", reason: "another entry names the same host")))
        }
    }

    // MARK: - Validation

    func testValidationNamesTheFileThatCannotBeUsed() throws {
        // Given a certificate without a key, a key file holding a certificate, an empty pin list,
        // and a self-signed certificate that does not exist
        let certificate = try temporaryFile("client.pem", certificatePEM)
        let key = try temporaryFile("client.key", keyPEM)
        var noKey = TLSConfiguration()
        noKey.clientCertificate = ClientCertificate(certificate: certificate)
        var keyIsACertificate = TLSConfiguration()
        keyIsACertificate.hosts["api.example.com"] = HostTLS(clientCertificate: ClientCertificate(certificate: certificate,
                                                                                                  privateKey: certificate))
        var noPins = TLSConfiguration()
        noPins.hosts["api.example.com"] = HostTLS(trust: .pinnedKeys([]))
        var missing = TLSConfiguration()
        let nowhere = URL(fileURLWithPath: "/nonexistent/self-signed.pem")
        missing.hosts["localhost"] = HostTLS(trust: .selfSignedForTesting(certificate: nowhere))
        var fine = TLSConfiguration()
        fine.clientCertificate = ClientCertificate(certificate: certificate, privateKey: key, password: "secret")

        // When each is validated
        // Then each names its file, or its host, and why; a good one passes
        XCTAssertThrowsError(try noKey.validate()) { error in
            XCTAssertEqual(error as? TLSFailure, TLSFailure(host: nil, reason: .unusableFile(
                certificate, reason: "the client certificate's private key file holds no PEM \"PRIVATE KEY\"")))
        }
        XCTAssertThrowsError(try keyIsACertificate.validate()) { error in
            XCTAssertEqual(error as? TLSFailure, TLSFailure(host: "api.example.com", reason: .unusableFile(
                certificate, reason: "the client certificate's private key file holds no PEM \"PRIVATE KEY\"")))
        }
        XCTAssertThrowsError(try noPins.validate()) { error in
            XCTAssertEqual(error as? TLSFailure, TLSFailure(host: "api.example.com", reason: .invalidHost(
                "api.example.com", reason: "pinnedKeys needs at least one pin (two, for rotation)")))
        }
        XCTAssertThrowsError(try missing.validate()) { error in
            XCTAssertEqual(error as? TLSFailure, TLSFailure(host: "localhost", reason: .unusableFile(
                nowhere, reason: "the self-signed certificate file: it does not exist")))
            XCTAssertEqual("\(error)", "/nonexistent/self-signed.pem cannot be used for localhost: the self-signed certificate "
                + "file: it does not exist. Fix the path or the file; certificates and keys are read as PEM")
        }
        XCTAssertNoThrow(try fine.validate())
    }

    func testAClientCertificateNeverShowsItsPassword() {
        // Given a client certificate with a password
        let certificate = ClientCertificate(certificate: URL(fileURLWithPath: "/etc/app/client.pem"),
                                            privateKey: URL(fileURLWithPath: "/etc/app/client.key"), password: "hunter2")

        // When it is described, and a rejection of it too
        let failure = TLSFailure(host: "api.example.com", reason: .clientCertificateRejected(
            certificate: certificate.certificate, alert: "bad certificate"))
        var dumped = ""
        dump(certificate, to: &dumped)

        // Then the files are named and the password is not, in descriptions and dumps
        XCTAssertEqual(certificate.description, "client certificate /etc/app/client.pem with key /etc/app/client.key (key password set)")
        XCTAssertFalse(failure.description.contains("hunter2"))
        XCTAssertFalse(dumped.contains("hunter2"), dumped)
        XCTAssertTrue(dumped.contains("(set)"), dumped)
        XCTAssertTrue(failure.description.hasPrefix("the server api.example.com refused the client certificate /etc/app/client.pem"))
    }

    func testAPinMismatchSaysWhatWasExpectedWhatCameAndWhatToDo() {
        // Given a pin failure with the presented key, and one without
        let known = TLSFailure(host: "api.example.com", reason: .pinMismatch(expected: [pinA, pinB], presented: pinB))
        let unknown = TLSFailure(host: "api.example.com", reason: .pinMismatch(expected: [pinA], presented: nil))

        // When they are described and made request errors
        let error = known.requestError(url: URL(string: "https://api.example.com/x"))

        // Then the sentence names the host, every pin and the presented key, and the error carries the failure
        XCTAssertEqual(known.description, "the server api.example.com presented the public key \(pinB), which matches none of "
            + "the pinned keys (\(pinA), \(pinB)); nothing was sent. If the server changed its key legitimately, add the new "
            + "key's pin (keep two pins, for rotation); otherwise someone may be intercepting the connection")
        XCTAssertTrue(unknown.description.contains("presented a public key (its pin was not reported)"))
        XCTAssertEqual(error.tlsFailure, known)
        guard case .transportFailed(let urlError) = error else { return XCTFail("got \(error)") }
        XCTAssertEqual(urlError.code, .serverCertificateUntrusted)
        XCTAssertNil(RequestError.timedOut.tlsFailure)
    }

    func testVersionsAreOrderedAndNamed() {
        // Given the TLS versions
        // When they are compared and read from OpenSSL's names
        // Then they are in protocol order and OpenSSL's names map to them
        XCTAssertLessThan(TLSVersion.v1_2, .v1_3)
        XCTAssertEqual(TLSVersion.allCases.sorted(), [.v1_0, .v1_1, .v1_2, .v1_3])
        XCTAssertEqual(TLSVersion(openSSLName: "TLSv1"), .v1_0)
        XCTAssertEqual(TLSVersion(openSSLName: "TLSv1.3"), .v1_3)
        XCTAssertNil(TLSVersion(openSSLName: "SSLv3"))
        XCTAssertEqual(TLSVersion.v1_3.description, "TLS 1.3")
        XCTAssertEqual(HTTPVersion.http2.description, "HTTP/2")
    }

    // MARK: - The URLSession transport

    /// The error a request through the URLSession transport fails with under `tls`.
    private func urlSessionFailure(_ tls: TLSConfiguration) async throws -> RequestError? {
        var config = RequestQueueConfiguration.default
        config.transport = .urlSession
        config.callbackQueue = TestQueues.callbacks
        config.tls = tls
        let queue = RequestQueue(configuration: config)
        do {
            _ = try await queue.send(PathRequest<Text>("https://127.0.0.1:\(HTTPBin.closedPort())/"))
            return nil
        } catch {
            return error
        }
    }

    func testTheURLSessionTransportRefusesEachSettingItCannotHonour() async throws {
        // Given one setting each: a minimum of TLS 1.3, a client certificate, a pin, a self-signed certificate
        var minimum = TLSConfiguration()
        minimum.minimumVersion = .v1_3
        var client = TLSConfiguration()
        client.clientCertificate = ClientCertificate(certificate: URL(fileURLWithPath: "/etc/app/client.pem"))
        var pinned = TLSConfiguration()
        pinned.hosts["api.example.com"] = HostTLS(trust: .pinnedKeys([pinA]))
        var selfSigned = TLSConfiguration()
        selfSigned.hosts["localhost"] = HostTLS(trust: .selfSignedForTesting(certificate: URL(fileURLWithPath: "/tmp/s.pem")))

        // When a request is sent through the URLSession transport under each
        let failures = [
            try await urlSessionFailure(minimum), try await urlSessionFailure(client),
            try await urlSessionFailure(pinned), try await urlSessionFailure(selfSigned),
        ]

        // Then each fails at once naming the setting (and, on Linux, pointing to the curl transport)
        XCTAssertEqual(failures.map { $0?.tlsFailure }, [
            TLSFailure(host: nil, reason: .unsupportedByTransport(setting: "tls.minimumVersion (TLS 1.3)")),
            TLSFailure(host: nil, reason: .unsupportedByTransport(setting: "tls.clientCertificate (mutual TLS)")),
            TLSFailure(host: "api.example.com", reason: .unsupportedByTransport(
                setting: "tls.hosts[\"api.example.com\"] (pinned keys \(pinA))")),
            TLSFailure(host: "localhost", reason: .unsupportedByTransport(
                setting: "tls.hosts[\"localhost\"] (self-signed certificate /tmp/s.pem (tests only))")),
        ])
        #if os(Linux)
        for failure in failures {
            XCTAssertTrue("\(failure.map { "\($0)" } ?? "")".contains("RequestTransport.curl"))
        }
        #endif
        guard case .transportFailed(let error)? = failures[1] else { return XCTFail("got \(String(describing: failures[1]))") }
        XCTAssertEqual(error.code, .secureConnectionFailed)
    }

    func testTheURLSessionTransportSendsUnderTheDefaultSettings() async throws {
        // Given the default TLS settings
        // When a request goes to a closed port through the URLSession transport
        let failure = try await urlSessionFailure(TLSConfiguration())

        // Then it was sent (and refused by the network), not refused for its TLS settings
        XCTAssertNil(failure?.tlsFailure)
        guard case .transportFailed(let error)? = failure else { return XCTFail("got \(String(describing: failure))") }
        XCTAssertEqual(error.code, .cannotConnectToHost)
    }
}

#if os(Linux)
/// The curl transport's side of the values, where it can be tested without a server.
enum CurlTLSForTests {
    static func pinnedKeyOption(_ pins: [PublicKeyPin]) -> String? {
        CurlTLS.Transfer(pins: pins).pinnedKeyOption
    }
}

extension TLSConfigurationTests {
    func testTheCurlTransportMapsOpenSSLMessagesToTLSFailures() throws {
        // Given a queue-wide client certificate for one host's settings, and the defaults
        let certificate = try temporaryFile("client.pem", certificatePEM + keyPEM)
        var withCertificate = TLSConfiguration()
        withCertificate.hosts["api.example.com"] = HostTLS(clientCertificate: ClientCertificate(certificate: certificate))
        let configured = try CurlTLS(withCertificate)
        let defaults = CurlTLS()
        let url = try XCTUnwrap(URL(string: "https://api.example.com/x"))

        // When libcurl's failures are mapped
        let required = defaults.failure(code: 35, message: "OpenSSL/3.0.19: error:0A000410:SSL routines::sslv3 alert handshake failure",
                                        url: url, presentedKey: nil)
        let rejected = configured.failure(code: 56, message: "OpenSSL SSL_read: error:0A000418:SSL routines::tlsv1 alert unknown ca, errno 0",
                                          url: url, presentedKey: nil)
        let version = defaults.failure(code: 35, message: "OpenSSL/3.0.19: error:0A00042E:SSL routines::tlsv1 alert protocol version",
                                       url: url, presentedKey: nil)
        let reset = defaults.failure(code: 56, message: "Recv failure: Connection reset by peer", url: url, presentedKey: nil)
        let plain = defaults.failure(code: 35, message: "x SSL routines::tlsv1 alert protocol version",
                                     url: try XCTUnwrap(URL(string: "http://api.example.com/")), presentedKey: nil)

        // Then handshake alerts become TLS failures naming the host; anything else stays libcurl's error
        XCTAssertEqual(required?.tlsFailure, TLSFailure(host: "api.example.com", reason: .clientCertificateRequired(
            alert: "sslv3 alert handshake failure")))
        XCTAssertEqual(rejected?.tlsFailure, TLSFailure(host: "api.example.com", reason: .clientCertificateRejected(
            certificate: certificate, alert: "tlsv1 alert unknown ca")))
        XCTAssertEqual(version?.tlsFailure, TLSFailure(host: "api.example.com", reason: .versionRefused(
            minimum: .v1_2, alert: "tlsv1 alert protocol version")))
        XCTAssertNil(reset)
        XCTAssertNil(plain)
    }
}
#endif
