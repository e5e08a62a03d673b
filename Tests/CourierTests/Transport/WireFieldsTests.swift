import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The header lines a transport that can repeat names sends: the request's own fields in its
/// order, unless something after it changed them in the URLRequest.
final class WireFieldsTests: XCTestCase {
    private func transportRequest(_ fields: HTTPFields, change: (inout URLRequest) -> Void = { _ in }) -> TransportRequest {
        var urlRequest = URLRequest(url: URL(string: "https://example.com/")!)
        urlRequest.setValue("session", forHTTPHeaderField: "X-Session")
        for field in fields { urlRequest.setValue(fields[field.name], forHTTPHeaderField: field.name) }
        change(&urlRequest)
        return TransportRequest(urlRequest: urlRequest, headerFields: fields)
    }

    private func lines(_ request: TransportRequest) -> [String] {
        request.wireFields.map(\.description)
    }

    func testTheRequestsFieldsGoInItsOrderWithRepeatedNamesApart() {
        // Given fields with a name given twice, apart
        let fields: HTTPFields = [HTTPField(name: "Accept-Language", value: "en"), HTTPField(name: "Accept", value: "application/json"),
                                  HTTPField(name: "Accept-Language", value: "fr;q=0.5")]

        // When they are made into lines
        let request = transportRequest(fields)

        // Then each is its own line, in the request's order, and the other fields follow by name
        XCTAssertEqual(lines(request), ["Accept-Language: en", "Accept: application/json", "Accept-Language: fr;q=0.5",
                                        "X-Session: session"])
    }

    func testAFieldADelegateChangedGoesAsOneLineWithItsNewValue() {
        // Given repeated fields that a delegate then replaced in the URLRequest
        let fields: HTTPFields = [HTTPField(name: "X-Tag", value: "a"), HTTPField(name: "X-Tag", value: "b")]
        let request = transportRequest(fields) { $0.setValue("changed", forHTTPHeaderField: "x-tag") }

        // Then the change wins, as one line where the request put the field
        XCTAssertEqual(lines(request), ["X-Tag: changed", "X-Session: session"])
    }

    func testAFieldRemovedSinceIsNotSent() {
        // Given fields of which one was removed (a redirect leaving the origin drops Authorization)
        let fields: HTTPFields = [HTTPField(name: "Authorization", value: "Bearer 1"), HTTPField(name: "Accept", value: "*/*")]
        let request = transportRequest(fields) { $0.setValue(nil, forHTTPHeaderField: "Authorization") }

        // Then it is not sent at all
        XCTAssertEqual(lines(request), ["Accept: */*", "X-Session: session"])
    }

    func testWithoutFieldsOfItsOwnTheURLRequestsAreSortedByName() {
        // Given a request of the transport API alone
        var urlRequest = URLRequest(url: URL(string: "https://example.com/")!)
        urlRequest.setValue("2", forHTTPHeaderField: "B")
        urlRequest.setValue("1", forHTTPHeaderField: "A")

        // Then its fields go sorted by name, as they always did
        XCTAssertEqual(lines(TransportRequest(urlRequest: urlRequest)), ["A: 1", "B: 2"])
    }
}
