import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// HTTPS against a local nginx whose certificates a private CA signed (started by Scripts/test.sh):
/// verification always on, extra roots by configuration, HTTP/2, and a clear `URLError` for each
/// certificate problem.
final class TLSIntegrationTests: XCTestCase {
    private var ca: URL {
        get throws { URL(fileURLWithPath: try HTTPBin.tlsServer("COURIER_TLS_CA").path) }
    }

    /// - Parameter transport: The transport to use; by default the run's.
    private func send(to variable: String, trusting: [URL], through transport: RequestTransport? = nil)
        async throws -> Result<TLSAnswer, RequestError> {
        let url = try HTTPBin.tlsServer(variable)
        let queue = try HTTPBin.queue { config in
            config.trustedCertificates = trusting
            if let transport { config.transport = transport }
        }
        do {
            return .success(try await queue.send(PathRequest<TLSAnswer>(url.absoluteString + "/")))
        } catch {
            return .failure(error)
        }
    }

    private func urlErrorCode(_ result: Result<TLSAnswer, RequestError>) -> URLError.Code? {
        if case .failure(.transportFailed(let error)) = result { return error.code }
        return nil
    }

    func testATrustedPrivateCAIsAcceptedAndHTTP2IsUsed() async throws {
        let result = try await send(to: "COURIER_TLS_URL", trusting: [try ca])
        if HTTPBin.usesURLSession {
            // URLSession takes no extra roots per session: the request says so instead of ignoring them
            guard case .failure(.transportFailed(let error)) = result else { return XCTFail("got \(result)") }
            XCTAssertEqual(error.code, .secureConnectionFailed)
            XCTAssertTrue("\(error.userInfo[NSLocalizedDescriptionKey] ?? "")".contains("RequestTransport.curl"))
            return
        }
        XCTAssertEqual(try result.get().protocol, "HTTP/2.0")
    }

    func testAnUnknownRootIsRefused() async throws {
        let result = try await send(to: "COURIER_TLS_URL", trusting: [])
        let code = urlErrorCode(result)
        if HTTPBin.usesURLSession {
            XCTAssertNotNil(code, "\(result)")
        } else {
            XCTAssertEqual(code, .serverCertificateHasUnknownRoot, "\(result)")
        }
    }

    // These two need trustedCertificates, which only the curl transport honours: they run
    // through curl whatever the run's transport.

    func testAnExpiredCertificateIsRefused() async throws {
        let result = try await send(to: "COURIER_TLS_EXPIRED_URL", trusting: [try ca], through: .curl)
        XCTAssertEqual(urlErrorCode(result), .serverCertificateHasBadDate, "\(result)")
    }

    func testACertificateForAnotherHostIsRefused() async throws {
        let result = try await send(to: "COURIER_TLS_WRONG_HOST_URL", trusting: [try ca], through: .curl)
        XCTAssertEqual(urlErrorCode(result), .serverCertificateUntrusted, "\(result)")
        guard case .failure(.transportFailed(let error)) = result else { return }
        XCTAssertTrue("\(error.userInfo[NSLocalizedDescriptionKey] ?? "")".contains("127.0.0.1"), "names the host it expected")
    }

    func testATrustedCertificateFileThatCannotBeReadFailsEveryRequestSayingSo() async throws {
        let missing = URL(fileURLWithPath: "/nonexistent/courier-ca.pem")
        let result = try await send(to: "COURIER_TLS_URL", trusting: [missing])
        guard case .failure(.transportFailed(let error)) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(error.code, .secureConnectionFailed)
        if !HTTPBin.usesURLSession {
            XCTAssertTrue("\(error.userInfo[NSLocalizedDescriptionKey] ?? "")".contains("/nonexistent/courier-ca.pem"))
        }
    }
}
