#if os(Linux)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

final class CurlErrorsTests: XCTestCase {
    private let url = URL(string: "https://api.example.com/v1/items")

    private func code(_ curlCode: Int32, _ message: String = "") -> URLError.Code {
        CurlErrors.urlErrorCode(for: curlCode, message: message, url: url)
    }

    func testEachResultGetsTheCodeAURLSessionUserExpects() {
        XCTAssertEqual(code(7), .cannotConnectToHost, "COULDNT_CONNECT (refused)")
        XCTAssertEqual(code(97), .cannotConnectToHost, "PROXY")
        XCTAssertEqual(code(5), .cannotConnectToHost, "COULDNT_RESOLVE_PROXY")
        XCTAssertEqual(code(6), .cannotFindHost, "COULDNT_RESOLVE_HOST (DNS)")
        XCTAssertEqual(code(28), .timedOut, "OPERATION_TIMEDOUT")
        for lost: Int32 in [55, 56, 18, 52, 16, 92] {
            XCTAssertEqual(code(lost), .networkConnectionLost, "reset, cut short or HTTP/2 stream lost: \(lost)")
        }
        XCTAssertEqual(code(8), .badServerResponse, "WEIRD_SERVER_REPLY")
        XCTAssertEqual(code(61), .badServerResponse, "BAD_CONTENT_ENCODING")
        XCTAssertEqual(code(1), .badServerResponse, "UNSUPPORTED_PROTOCOL for an https URL: an HTTP/0.9 reply")
        XCTAssertEqual(code(3), .badURL, "URL_MALFORMAT")
        XCTAssertEqual(code(35), .secureConnectionFailed, "SSL_CONNECT_ERROR")
        XCTAssertEqual(code(59), .secureConnectionFailed, "SSL_CIPHER")
        XCTAssertEqual(code(77), .secureConnectionFailed, "SSL_CACERT_BADFILE")
        XCTAssertEqual(code(58), .clientCertificateRejected, "SSL_CERTPROBLEM")
        XCTAssertEqual(code(26), .cannotOpenFile, "READ_ERROR (the body file)")
        XCTAssertEqual(code(65), .requestBodyStreamExhausted, "SEND_FAIL_REWIND")
        XCTAssertEqual(code(42), .cancelled, "ABORTED_BY_CALLBACK")
        XCTAssertEqual(code(27), .cannotLoadFromNetwork, "OUT_OF_MEMORY")
        XCTAssertEqual(code(9999), .unknown, "anything else")
    }

    func testUnsupportedProtocolForAnotherSchemeIsAnUnsupportedURL() {
        XCTAssertEqual(CurlErrors.urlErrorCode(for: 1, message: "", url: URL(string: "ftp://example.com/a")), .unsupportedURL)
    }

    func testCertificateFailuresAreToldApartByOpenSSLsMessage() {
        XCTAssertEqual(code(60, "SSL certificate problem: certificate has expired"), .serverCertificateHasBadDate)
        XCTAssertEqual(code(60, "SSL certificate problem: certificate is not yet valid"), .serverCertificateNotYetValid)
        XCTAssertEqual(code(60, "SSL certificate problem: unable to get local issuer certificate"), .serverCertificateHasUnknownRoot)
        XCTAssertEqual(code(60, "SSL certificate problem: self-signed certificate"), .serverCertificateHasUnknownRoot)
        XCTAssertEqual(code(60, "SSL: no alternative certificate subject name matches target host name '127.0.0.1'"),
                       .serverCertificateUntrusted)
    }

    func testTheErrorCarriesLibcurlsMessagesAndTheURL() throws {
        let error = CurlErrors.error(code: 7, message: "Failed to connect to 127.0.0.1 port 9: Connection refused", url: url)
        guard case .transportFailed(let urlError) = error else { return XCTFail("got \(error)") }
        XCTAssertEqual(urlError.code, .cannotConnectToHost)
        XCTAssertEqual(urlError.failingURL, url)
        XCTAssertEqual(urlError.userInfo[NSLocalizedDescriptionKey] as? String,
                       "libcurl error 7: Couldn't connect to server (Failed to connect to 127.0.0.1 port 9: Connection refused)")
    }

    func testATimeoutIsCouriersOwnTimedOut() {
        guard case .timedOut = CurlErrors.error(code: 28, message: nil, url: url) else { return XCTFail("expected .timedOut") }
    }
}
#endif
