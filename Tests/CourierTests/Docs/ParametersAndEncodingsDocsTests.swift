// Mirrors the article "Parameters and Encodings" (Courier.docc/ParametersAndEncodings.md).
// The expected strings are those of the encoding unit tests (QueryStringTests, JSONEncodingTests,
// ValueTypeTests, KeyStyleTests, ReflectionTests, EncodingErrorTests).
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class ParametersAndEncodingsDocsTests: XCTestCase {
    // Parameters and Encodings › Overview: the shared example types (verbatim)
    struct Address { let city: String; let zip: String? }
    struct User { let name: String; let address: Address }

    struct SearchResults: Response, Decodable { let count: Int }

    // Parameters and Encodings › Query strings (verbatim)
    struct SearchParameters: DefaultQueryString {
        let query: String
        let page: Int
        let tags: [String]
    }

    struct SearchRequest: Request {
        typealias ResponseType = SearchResults
        let parameters: SearchParameters
        var path: String { "/search" }
        var method: HTTPMethod { .get }
    }

    struct Pair: DefaultQueryString { let a: String; let b: String }
    struct Name: DefaultQueryString { let name: String }
    struct Flag: DefaultQueryString { let flag: Bool; let n: Int? }
    struct Nested: DefaultQueryString { let user: User }

    // Parameters and Encodings › Form bodies (verbatim)
    struct LogInParameters: URLEncodedBodyData {
        let username: String
        let password: String
    }

    struct SearchForm: URLEncodedBodyData {
        static let encodingOptions = ParameterEncodingOptions(spaceStyle: .plus)
        let q: String
        let p: String
    }

    // Parameters and Encodings › JSON bodies (verbatim)
    struct ProfileUpdate: JSONBodyData {
        let displayName: String
        let avatar: URL?
        let address: Address
    }

    struct NullableProfile: JSONBodyData {
        static let encodingOptions = ParameterEncodingOptions(nilStyle: .null)
        let displayName: String
        let avatar: URL?
    }

    // Parameters and Encodings › Multipart uploads (verbatim)
    struct Tagging: URLEncodedBodyData { let tags: [String] }

    struct UploadRequest: Request {
        typealias ResponseType = EmptyResponse
        let parameters: MultipartFormData
        var path: String { "/videos" }
        var method: HTTPMethod { .post }
        var timeout: TimeInterval? { 600 }
    }

    // Parameters and Encodings › Plain Serializable values follow the method (verbatim)
    struct DraftFilter: Serializable {
        let status: String
    }

    struct DeleteDraftsRequest: Request {
        typealias ResponseType = EmptyResponse
        let parameters: DraftFilter
        var path: String { "/drafts" }
        var method: HTTPMethod { .delete }
    }

    // Parameters and Encodings › Query parameters beside a body (verbatim)
    struct APIVersion: DefaultQueryString { let version: Int }
    struct NoteBody: JSONBodyData { let title: String }

    struct CreateNoteRequest: Request {
        typealias ResponseType = EmptyResponse
        let parameters: NoteBody
        var queryParameters: (any QueryString)? { APIVersion(version: 2) }
        var path: String { "/notes" }
        var method: HTTPMethod { .post }
    }

    // Parameters and Encodings › Encoding options (verbatim)
    struct Search: DefaultQueryString {
        static let encodingOptions = ParameterEncodingOptions(arrayStyle: .repeatedKey, boolStyle: .numeric)
        let tags: [String]
        let exact: Bool
    }

    // Parameters and Encodings › Renaming and leaving out properties (verbatim)
    struct Account: JSONBodyData, ParameterKeyMapping {
        let id: Int
        let displayName: String
        let passwordHash: String
        static var parameterKeys: [String: ParameterKey] { ["displayName": "Name", "passwordHash": .excluded] }
    }

    // Parameters and Encodings › Values that encode themselves (verbatim)
    enum Filter: ParameterConvertible {
        case all, tag(String)
        var parameterValue: any Sendable {
            switch self {
            case .all: "all"
            case .tag(let name): ["tag": name]
            }
        }
    }

    struct Celsius: ParameterConvertible {
        let degrees: Double
        var parameterValue: any Sendable { "\(Int(degrees))C" }
    }

    struct Conditions: JSONBodyData, DefaultQueryString {
        let filter: Filter
        let other: Filter
        let temperature: Celsius
    }

    // Parameters and Encodings › Errors name the property (verbatim)
    struct Scores: JSONBodyData { let values: [Double] }

    /// A request for any parameters, path and method (scaffolding).
    struct Send<ParametersType: Parameters>: Request {
        typealias ResponseType = EmptyResponse
        let parameters: ParametersType
        var path: String
        var method: HTTPMethod
    }

    private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    // Parameters and Encodings › Query strings: the request goes to the documented URL.
    func testQueryStringRequestURL() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/search", json: #"{"count": 0}"#)
        let queue = DocsSupport.queue(fixtures)
        _ = try await queue.send(SearchRequest(parameters: SearchParameters(query: "swift six", page: 2, tags: ["a", "b"])))
        XCTAssertEqual(fixtures.receivedRequests.first?.url?.absoluteString,
                       "https://api.example.com/v1/search?query=swift%20six&page=2&tags%5B%5D=a&tags%5B%5D=b")
    }

    // Parameters and Encodings › Query strings: the exact outputs.
    func testQueryStringExactOutputs() throws {
        XCTAssertEqual(try Pair(a: "x y", b: "&=?").encode(), "a=x%20y&b=%26%3D%3F")
        XCTAssertEqual(try Name(name: "中文").encode(), "name=%E4%B8%AD%E6%96%87")
        XCTAssertEqual(try Flag(flag: true, n: nil).encode(), "flag=true")
        XCTAssertEqual(try Nested(user: User(name: "Ada", address: Address(city: "Paris", zip: nil))).encode(),
                       "user%5Bname%5D=Ada&user%5Baddress%5D%5Bcity%5D=Paris")
    }

    // Parameters and Encodings › Form bodies: body and Content-Type on the wire.
    func testFormBodies() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.post, "/login")
        let queue = DocsSupport.queue(fixtures)
        _ = try await queue.send(Send(parameters: LogInParameters(username: "ada", password: "p@ss word"), path: "/login", method: .post))
        let sent = try XCTUnwrap(fixtures.receivedRequests.first)
        XCTAssertEqual(sent.httpBody.map(text), "username=ada&password=p%40ss%20word")
        XCTAssertEqual(sent.value(forHTTPHeaderField: "Content-Type"), "application/x-www-form-urlencoded; charset=utf-8")
        XCTAssertEqual(text(try SearchForm(q: "a b", p: "1+1").encode()), "q=a+b&p=1%2B1")
    }

    // Parameters and Encodings › JSON bodies.
    func testJSONBodies() async throws {
        let update = ProfileUpdate(displayName: "Ada", avatar: nil, address: Address(city: "Paris", zip: nil))
        XCTAssertEqual(text(try update.encode()), #"{"display_name":"Ada","address":{"city":"Paris"}}"#)
        XCTAssertEqual(update.contentType, "application/json")
        XCTAssertEqual(text(try NullableProfile(displayName: "Ada", avatar: nil).encode()), #"{"display_name":"Ada","avatar":null}"#)
        XCTAssertThrowsError(try Scores(values: [.nan]).encode())
    }

    // Parameters and Encodings › Multipart uploads: a small form from memory, a large one streamed
    // from a temporary file that is removed when the request ends.
    func testMultipartUploads() throws {
        let folder = try DocsSupport.temporaryFolder("multipart")
        defer { try? FileManager.default.removeItem(at: folder) }
        let videoURL = folder.appendingPathComponent("holiday.mov")
        try Data(repeating: 0x42, count: 1_500_000).write(to: videoURL)
        let thumbnail = Data("PNG".utf8)
        let fixtures = FixtureTransport()
        fixtures.add(Fixture(method: .post, path: "/videos", bodyContains: "Holiday", status: 201))
        let queue = DocsSupport.queue(fixtures)
        func temporaryBodies() throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)
                .filter { $0.hasPrefix("courier-multipart-") })
        }
        let before = try temporaryBodies()

        let form = MultipartFormData()
        form.append(fileURL: videoURL, withName: "video", fileName: "clip.mp4", mimeType: "video/mp4")
        form.append(data: thumbnail, withName: "thumb", fileName: "t.png")
        form.append(value: "Holiday", withName: "title")
        try form.append(parameters: Tagging(tags: ["sea", "sun"]), withName: "meta")

        let length = try form.contentLength
        XCTAssertGreaterThanOrEqual(length, MultipartFormData.streamingThreshold)
        XCTAssertTrue(form.contentType.hasPrefix("multipart/form-data; boundary=courier-"))
        XCTAssertEqual(try queue.curlCommand(for: UploadRequest(parameters: form)),
                       "curl -X POST 'https://api.example.com/v1/videos' -H 'Content-Type: \(form.contentType)' "
                       + "--data-binary '<\(length)-byte multipart body, streamed from a temporary file>'")

        let done = expectation(description: "uploaded")
        let id = queue.add(UploadRequest(parameters: form))
        queue.addObserver(for: id) { (result: Result<EmptyResponse, RequestError>) in
            if case .success = result { done.fulfill() }
        }
        wait(for: [done], timeout: 30)
        let sent = try XCTUnwrap(fixtures.receivedRequests.first)
        XCTAssertNil(sent.httpBody, "the large body streams from a file")
        // Compared as names: files of other uploads may come and go meanwhile; none of them is this one's.
        XCTAssertEqual(try temporaryBodies().subtracting(before), [], "the temporary body file is removed")

        let small = text(try {
            let form = MultipartFormData()
            form.append(data: thumbnail, withName: "thumb", fileName: "t.png")
            form.append(value: "Holiday", withName: "title")
            try form.append(parameters: Tagging(tags: ["sea", "sun"]), withName: "meta")
            return try form.encode()
        }())
        XCTAssertTrue(small.contains("name=\"thumb\"; filename=\"t.png\"\r\nContent-Type: image/png\r\n\r\nPNG\r\n"), small)
        XCTAssertTrue(small.contains("name=\"title\"\r\n\r\nHoliday\r\n"), small)
        XCTAssertTrue(small.contains("name=\"meta[tags][]\"\r\n\r\nsea\r\n"), small)
    }

    // Parameters and Encodings › Multipart uploads: a missing file names the part.
    func testMissingFileNamesThePart() async throws {
        let fixtures = FixtureTransport()
        let form = MultipartFormData()
        form.append(fileURL: URL(fileURLWithPath: "/nonexistent/courier-docs.mov"), withName: "video")
        do {
            _ = try await DocsSupport.queue(fixtures).send(UploadRequest(parameters: form))
            XCTFail("expected invalidParameters")
        } catch {
            guard case .invalidParameters(let keyPath, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(keyPath, "video")
        }
        XCTAssertTrue(fixtures.receivedRequests.isEmpty)
    }

    // Parameters and Encodings › Plain Serializable values follow the method.
    func testPlainSerializableFollowsTheMethod() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.delete, "/drafts")
        fixtures.stub(.post, "/drafts")
        let queue = DocsSupport.queue(fixtures)
        _ = try await queue.send(DeleteDraftsRequest(parameters: DraftFilter(status: "draft")))
        _ = try await queue.send(Send(parameters: DraftFilter(status: "draft"), path: "/drafts", method: .post))
        let (delete, post) = (fixtures.receivedRequests[0], fixtures.receivedRequests[1])
        XCTAssertEqual(delete.url?.absoluteString, "https://api.example.com/v1/drafts?status=draft")
        XCTAssertNil(delete.httpBody)
        XCTAssertEqual(post.url?.absoluteString, "https://api.example.com/v1/drafts")
        XCTAssertEqual(post.httpBody.map(text), "status=draft")
        XCTAssertEqual(post.value(forHTTPHeaderField: "Content-Type"), "application/x-www-form-urlencoded; charset=utf-8")
    }

    // Parameters and Encodings › Overview: a body on a GET is refused, not dropped.
    func testBodyOnGETIsRefused() async {
        let fixtures = FixtureTransport()
        do {
            _ = try await DocsSupport.queue(fixtures).send(Send(parameters: NoteBody(title: "x"), path: "/notes", method: .get))
            XCTFail("expected invalidParameters")
        } catch {
            guard case .invalidParameters = error else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(fixtures.receivedRequests.isEmpty)
    }

    // Parameters and Encodings › Query parameters beside a body.
    func testQueryParametersBesideABody() async throws {
        let fixtures = FixtureTransport()
        fixtures.add(Fixture(method: .post, path: "/notes", query: ["version": "2"], bodyJSON: #"{"title": "Groceries"}"#))
        _ = try await DocsSupport.queue(fixtures).send(CreateNoteRequest(parameters: NoteBody(title: "Groceries")))
        let sent = try XCTUnwrap(fixtures.receivedRequests.first)
        XCTAssertEqual(sent.url?.absoluteString, "https://api.example.com/v1/notes?version=2")
        XCTAssertEqual(sent.httpBody.map(text), #"{"title":"Groceries"}"#)
    }

    // Parameters and Encodings › Encoding options: the per-type sample and every table cell.
    func testEncodingOptions() throws {
        XCTAssertEqual(try Search(tags: ["a", "b"], exact: true).encode(), "tags=a&tags=b&exact=1")

        struct Keys<Options: DocsOptionsProvider>: DefaultQueryString {
            static var encodingOptions: ParameterEncodingOptions { Options.options }
            let displayName = 1, userID = 2, URLString = 3, myURLProperty = 4
        }
        XCTAssertEqual(try Keys<Default>().encode(), "display_name=1&user_id=2&url_string=3&my_url_property=4")
        XCTAssertEqual(try Keys<Kebab>().encode(), "display-name=1&user-id=2&url-string=3&my-url-property=4")
        XCTAssertEqual(try Keys<Lower>().encode(), "displayname=1&userid=2&urlstring=3&myurlproperty=4")
        XCTAssertEqual(try Keys<Unchanged>().encode(), "displayName=1&userID=2&URLString=3&myURLProperty=4")

        struct Tags<Options: DocsOptionsProvider>: DefaultQueryString {
            static var encodingOptions: ParameterEncodingOptions { Options.options }
            let tags: [String]
        }
        XCTAssertEqual(try Tags<Default>(tags: ["a", "b"]).encode(), "tags%5B%5D=a&tags%5B%5D=b")
        XCTAssertEqual(try Tags<Repeated>(tags: ["a", "b"]).encode(), "tags=a&tags=b")
        XCTAssertEqual(try Tags<Indexed>(tags: ["a", "b"]).encode(), "tags%5B0%5D=a&tags%5B1%5D=b")
        XCTAssertEqual(try Tags<Comma>(tags: ["a", "b"]).encode(), "tags=a,b")
        XCTAssertEqual(try Tags<Comma>(tags: ["a,b", "c"]).encode(), "tags=a%2Cb,c")

        struct Bools<Options: DocsOptionsProvider>: DefaultQueryString {
            static var encodingOptions: ParameterEncodingOptions { Options.options }
            let on = true, off = false
        }
        XCTAssertEqual(try Bools<Default>().encode(), "on=true&off=false")
        XCTAssertEqual(try Bools<Numeric>().encode(), "on=1&off=0")

        let date = Date(timeIntervalSince1970: 1_795_341_600)
        struct At<Options: DocsOptionsProvider>: JSONBodyData, DefaultQueryString {
            static var encodingOptions: ParameterEncodingOptions { Options.options }
            let at: Date
        }
        func json(_ value: some JSONBodyData) throws -> String { text(try value.encode()) }
        XCTAssertEqual(try json(At<Default>(at: date)), #"{"at":"2026-11-22T10:00:00Z"}"#)
        XCTAssertEqual(try json(At<Default>(at: date + 0.25)), #"{"at":"2026-11-22T10:00:00.250Z"}"#)
        XCTAssertEqual(try json(At<Seconds>(at: date)), #"{"at":1795341600}"#)
        XCTAssertEqual(try json(At<Seconds>(at: date + 0.5)), #"{"at":1795341600.5}"#)
        XCTAssertEqual(try json(At<Milliseconds>(at: date + 0.25)), #"{"at":1795341600250}"#)
        XCTAssertEqual(try At<Default>(at: date).encode() as String, "at=2026-11-22T10%3A00%3A00Z")

        struct Maybe<Options: DocsOptionsProvider>: JSONBodyData, DefaultQueryString {
            static var encodingOptions: ParameterEncodingOptions { Options.options }
            let a: String?
            let b = 1
        }
        XCTAssertEqual(try json(Maybe<Default>(a: nil)), #"{"b":1}"#)
        XCTAssertEqual(try json(Maybe<Null>(a: nil)), #"{"a":null,"b":1}"#)
        XCTAssertEqual(try Maybe<Null>(a: nil).encode() as String, "b=1")

        struct Spaces<Options: DocsOptionsProvider>: DefaultQueryString {
            static var encodingOptions: ParameterEncodingOptions { Options.options }
            let q: String
        }
        XCTAssertEqual(try Spaces<Default>(q: "x y").encode(), "q=x%20y")
        XCTAssertEqual(try Spaces<Plus>(q: "x y+").encode(), "q=x+y%2B")

        struct Extra: JSONBodyData { let displayName: String; let extra: [String: Int] }
        XCTAssertEqual(try json(Extra(displayName: "Ada", extra: ["someKey": 1])), #"{"display_name":"Ada","extra":{"someKey":1}}"#)
    }

    // Parameters and Encodings › Encoding options: other values.
    func testOtherValues() throws {
        enum Color: String { case darkBlue = "dark-blue" }
        enum Mode { case fast }
        struct Values: JSONBodyData {
            let url: URL, id: UUID, price: Decimal, blob: Data, color: Color
        }
        let values = Values(url: URL(string: "https://example.com/a?b=c")!, id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
                            price: Decimal(string: "12.345")!, blob: Data([0, 1, 2, 255]), color: .darkBlue)
        XCTAssertEqual(text(try values.encode()),
                       #"{"url":"https://example.com/a?b=c","id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","price":12.345,"blob":"AAEC/w==","color":"dark-blue"}"#)
        struct Bad: JSONBodyData { let mode: Mode }
        struct BadSet: JSONBodyData { let ids: Set<Int> }
        struct BadKeys: JSONBodyData { let lookup: [Int: String] }
        XCTAssertThrowsError(try Bad(mode: .fast).encode())
        XCTAssertThrowsError(try BadSet(ids: [1]).encode())
        XCTAssertThrowsError(try BadKeys(lookup: [1: "a"]).encode())
    }

    // Parameters and Encodings › Renaming and leaving out properties.
    func testKeyMapping() throws {
        XCTAssertEqual(text(try Account(id: 1, displayName: "Ada", passwordHash: "x").encode()), #"{"id":1,"Name":"Ada"}"#)
        struct Misnamed: JSONBodyData, ParameterKeyMapping {
            let name: String
            static var parameterKeys: [String: ParameterKey] { ["nmae": "n"] }
        }
        XCTAssertThrowsError(try Misnamed(name: "x").encode()) { error in
            guard case RequestError.invalidParameters(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("nmae"), reason)
        }
    }

    // Parameters and Encodings › Values that encode themselves.
    func testParameterConvertible() throws {
        let conditions = Conditions(filter: .all, other: .tag("swift"), temperature: Celsius(degrees: 21))
        XCTAssertEqual(text(try conditions.encode()), #"{"filter":"all","other":{"tag":"swift"},"temperature":"21C"}"#)
        XCTAssertEqual(try conditions.encode() as String, "filter=all&other%5Btag%5D=swift&temperature=21C")
    }

    // Parameters and Encodings › Errors name the property: through the queue, nothing is sent.
    func testErrorsNameThePropertyAndNothingIsSent() async throws {
        let fixtures = FixtureTransport()
        do {
            _ = try await DocsSupport.queue(fixtures).send(Send(parameters: Scores(values: [1, -.infinity]), path: "/scores", method: .post))
            XCTFail("expected invalidParameters")
        } catch {
            guard case .invalidParameters(let keyPath, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(keyPath, "values[1]")
            XCTAssertTrue(reason.contains("JSON"), reason)
        }
        XCTAssertTrue(fixtures.receivedRequests.isEmpty)

        final class Person { let name: String; var friends: [Person] = []; var pet: Pet?; init(name: String) { self.name = name } }
        final class Pet { var owner: Person? }
        struct Root: JSONBodyData, @unchecked Sendable { let user: Person }
        let user = Person(name: "Ada")
        user.friends = [Person(name: "a"), Person(name: "b"), Person(name: "c")]
        let pet = Pet()
        pet.owner = user
        user.friends[2].pet = pet
        XCTAssertThrowsError(try Root(user: user).encode()) { error in
            guard case RequestError.invalidParameters(let keyPath, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(keyPath, "user.friends[2].pet.owner")
        }
        pet.owner = nil

        struct Extras: JSONBodyData, @unchecked Sendable { let extras: [String: Any] }
        XCTAssertThrowsError(try Extras(extras: ["ok": 1, "bad": { () in }]).encode()) { error in
            guard case RequestError.invalidParameters(let keyPath, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(keyPath, #"extras["bad"]"#)
        }
    }
}

// Option sets for the generic table tests above.
protocol DocsOptionsProvider { static var options: ParameterEncodingOptions { get } }
private enum Default: DocsOptionsProvider { static let options = ParameterEncodingOptions.default }
private enum Kebab: DocsOptionsProvider { static let options = ParameterEncodingOptions(keyStyle: .kebabCase) }
private enum Lower: DocsOptionsProvider { static let options = ParameterEncodingOptions(keyStyle: .lowercase) }
private enum Unchanged: DocsOptionsProvider { static let options = ParameterEncodingOptions(keyStyle: .unchanged) }
private enum Repeated: DocsOptionsProvider { static let options = ParameterEncodingOptions(arrayStyle: .repeatedKey) }
private enum Indexed: DocsOptionsProvider { static let options = ParameterEncodingOptions(arrayStyle: .indexed) }
private enum Comma: DocsOptionsProvider { static let options = ParameterEncodingOptions(arrayStyle: .commaSeparated) }
private enum Numeric: DocsOptionsProvider { static let options = ParameterEncodingOptions(boolStyle: .numeric) }
private enum Seconds: DocsOptionsProvider { static let options = ParameterEncodingOptions(dateStyle: .secondsSince1970) }
private enum Milliseconds: DocsOptionsProvider { static let options = ParameterEncodingOptions(dateStyle: .millisecondsSince1970) }
private enum Null: DocsOptionsProvider { static let options = ParameterEncodingOptions(nilStyle: .null) }
private enum Plus: DocsOptionsProvider { static let options = ParameterEncodingOptions(spaceStyle: .plus) }
