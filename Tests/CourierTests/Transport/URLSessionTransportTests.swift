import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

final class URLSessionTransportTests: XCTestCase {
    private func unknown(_ message: String) -> NSError {
        NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown, userInfo: [NSLocalizedDescriptionKey: message])
    }

    func testLibcurlMessagesBehindUnknownErrorsGetTheirRealCode() {
        // Messages seen from Linux's URLSession with a server killed mid-response
        XCTAssertEqual(libcurlFailure(unknown("Recv failure: Connection reset by peer")), .networkConnectionLost)
        XCTAssertEqual(libcurlFailure(unknown("transfer closed with 3 bytes remaining to read")), .networkConnectionLost)
        XCTAssertEqual(libcurlFailure(unknown("Failed to connect to 127.0.0.1 port 34713 after 2 ms: Couldn't connect to server")),
                       .cannotConnectToHost)
        XCTAssertEqual(libcurlFailure(unknown("Could not resolve host: nowhere.invalid")), .cannotFindHost)
        XCTAssertNil(libcurlFailure(unknown("something else")))
        XCTAssertNil(libcurlFailure(NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled,
                                            userInfo: [NSLocalizedDescriptionKey: "Recv failure"])))
    }
}
