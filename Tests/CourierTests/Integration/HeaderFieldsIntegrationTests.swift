import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// Header fields in order with repeated names, both ways, against real servers: what a request
/// puts on the wire (Scripts/hostile_server.py echoes the head it received, line by line), and
/// what a response head keeps of the server's (httpbin, nginx), through the run's transport.
final class HeaderFieldsIntegrationTests: XCTestCase {
    private struct EchoHead: Request {
        typealias ResponseType = String
        let path: String
        var headerFields: HTTPFields
    }

    private struct Fetch: Request {
        typealias ResponseType = Data
        let path: String
    }

    private func hostileServer() throws -> URL { try HTTPBin.hostileServer() }

    func testARequestsFieldsReachTheServerInOrderWithRepeatedNames() async throws {
        // Given a request with a name given twice, apart, around another field
        var fields: HTTPFields = ["X-Courier-Tag": "first"]
        fields.append("application/json", for: "Accept")
        fields.append("second", for: "X-Courier-Tag")
        let queue = try HTTPBin.queue()

        // When it is sent to a server that echoes the head it received
        let head = try await queue.send(EchoHead(path: try hostileServer().absoluteString + "/echo-head", headerFields: fields))
        let lines = head.components(separatedBy: "\r\n").filter { $0.hasPrefix("X-Courier-Tag:") || $0.hasPrefix("Accept:") }

        // Then the curl transport sent each field as its own line, in the request's order; URLSession,
        // which keeps one value per name, sent the two values joined (RFC 9110 §5.3 makes them equal)
        if HTTPBin.usesURLSession {
            XCTAssertEqual(Set(lines), ["X-Courier-Tag: first, second", "Accept: application/json"], head)
        } else {
            XCTAssertEqual(lines, ["X-Courier-Tag: first", "Accept: application/json", "X-Courier-Tag: second"], head)
        }
    }

    func testAResponseHeadKeepsTheServersRepeatedFields() async throws {
        // Given httpbin answering with a field of one name twice
        let queue = try HTTPBin.queue()

        // When the reply is read
        let reply = try await queue.reply(to: Fetch(path: "/response-headers?X-Courier-Tag=a&X-Courier-Tag=b"))

        // Then the curl transport kept both lines apart; URLSession's head has them joined
        let expected = HTTPBin.usesURLSession ? ["a, b"] : ["a", "b"]
        XCTAssertEqual(reply.headerFields.values(for: "x-courier-tag"), expected, "\(reply.headerFields)")
        XCTAssertEqual(reply.headerFields["X-COURIER-TAG"], "a, b", "looked up in any case, joined")
    }

    func testAResponseHeadKeepsTheServersOrderAndSpelling() async throws {
        // Given nginx serving a static file (its head: Server, Date, Content-Type, Content-Length,
        // Last-Modified, Connection, ETag, Accept-Ranges, in that order)
        let (url, directory) = try HTTPBin.staticFiles()
        let name = "head-fields-\(UUID().uuidString).txt"
        try Data("hello".utf8).write(to: directory.appendingPathComponent(name))
        defer { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
        let queue = try HTTPBin.queue()

        // When it is fetched
        let reply = try await queue.reply(to: Fetch(path: url.appendingPathComponent(name).absoluteString))
        let names = reply.headerFields.map(\.name)

        // Then the curl transport's head has nginx's fields in nginx's order and spelling
        // ("ETag", which Foundation's HTTPURLResponse spells "Etag"); URLSession's is sorted by name
        XCTAssertEqual(reply.value, Data("hello".utf8))
        XCTAssertNotNil(reply.headerFields["etag"])
        if HTTPBin.usesURLSession {
            XCTAssertEqual(names, names.sorted(), "\(names)")
        } else {
            let served = names.filter { ["Content-Length", "Last-Modified", "ETag", "Accept-Ranges"].contains($0) }
            XCTAssertEqual(served, ["Content-Length", "Last-Modified", "ETag", "Accept-Ranges"], "\(names)")
            XCTAssertEqual(names.first, "Server", "\(names)")
        }
    }
}
