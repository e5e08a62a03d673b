import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

#if os(Linux)
import CourierCurl

/// Which content codings the curl transport lets libcurl decode, which it passes through as sent,
/// and how it does so with libcurl before and from 8.5.0 (`ContentCoding`).
final class ContentCodingTests: XCTestCase {
    private let allFeatures = COURIER_CURL_VERSION_LIBZ | COURIER_CURL_VERSION_BROTLI | COURIER_CURL_VERSION_ZSTD
    /// libcurl 7.88.1, built with zlib, brotli and zstd, as on Debian 12.
    private var debian: CurlContentCodings { CurlContentCodings(features: allFeatures, versionNumber: 0x07_58_01) }
    /// The same codings with libcurl 8.14.1, which decides on decoding when it parses the header.
    private var current: CurlContentCodings { CurlContentCodings(features: allFeatures, versionNumber: 0x08_0E_01) }

    // MARK: - What libcurl decodes

    func testTheDecodableCodingsFollowLibcurlsFeatureBits() {
        // Given libcurl's feature bits, When the codings are derived, Then each library's are named with libcurl's aliases
        XCTAssertEqual(CurlContentCodings(features: 0, versionNumber: 0x07_58_01).decodable, ["identity", "none"])
        XCTAssertEqual(CurlContentCodings(features: COURIER_CURL_VERSION_LIBZ, versionNumber: 0x07_58_01).decodable,
                       ["identity", "none", "deflate", "gzip", "x-gzip"])
        XCTAssertEqual(debian.decodable, ["identity", "none", "deflate", "gzip", "x-gzip", "br", "zstd"])
    }

    func testOnlyLibcurlBefore850SwitchesDecodingOffMidTransfer() {
        // Given versions around 8.5.0, Then only those before it honour a switch from the header callback
        let versions: [(UInt32, Bool)] = [(0x07_44_00, true), (0x07_58_01, true), (0x08_04_00, true),
                                          (0x08_05_00, false), (0x08_0E_01, false), (0x08_17_00, false)]
        for (version, switches) in versions {
            XCTAssertEqual(CurlContentCodings(features: allFeatures, versionNumber: version).switchesMidTransfer, switches,
                           String(version, radix: 16))
        }
    }

    func testWhatBecomesOfABodyInEachCoding() {
        // Given Content-Encoding values as servers send them
        let cases: [([String], CurlContentCodings.Body)] = [
            ([], .asSent),
            (["identity"], .asSent),
            (["identity, none"], .asSent),
            (["gzip"], .decoded),
            (["GZip"], .decoded),
            (["x-gzip"], .decoded),
            (["gzip, br", "zstd"], .decoded),
            ([" , deflate ,\t"], .decoded),
            (["identity, gzip"], .decoded),
            (["x-courier"], .passedThrough(undecodable: "x-courier")),
            (["gzip, x-courier"], .passedThrough(undecodable: "x-courier")),
            (["x-courier, gzip"], .passedThrough(undecodable: "x-courier")),
            (["gzip", "X-Courier"], .passedThrough(undecodable: "X-Courier")),
            (["compress"], .passedThrough(undecodable: "compress")),
            (["identity, aes128gcm"], .passedThrough(undecodable: "aes128gcm")),
        ]
        // Then libcurl decodes only what it knows, and one unknown coding keeps the whole body as sent
        for (values, expected) in cases {
            XCTAssertEqual(debian.body(contentEncoding: values), expected, "\(values)")
        }
        // And a coding the library was built without is passed through like an unknown one
        let zlibOnly = CurlContentCodings(features: COURIER_CURL_VERSION_LIBZ, versionNumber: 0x07_58_01)
        XCTAssertEqual(zlibOnly.body(contentEncoding: ["br"]), .passedThrough(undecodable: "br"))
        XCTAssertEqual(zlibOnly.body(contentEncoding: ["gzip, zstd"]), .passedThrough(undecodable: "zstd"))
    }

    // MARK: - What happens at the end of a head

    private func easy() throws -> CurlEasy {
        guard case .success = CurlLibrary.availability, let easy = CurlEasy() else {
            throw XCTSkip("libcurl is not usable here: \(RequestTransport.curlUnavailableReason ?? "no easy handle")")
        }
        return easy
    }

    private func head(_ contentEncoding: String?, status: Int = 200) -> ParsedHead {
        var fields = [HTTPField(name: "Content-Length", value: "18")]
        if let contentEncoding { fields.append(HTTPField(name: "Content-Encoding", value: contentEncoding)) }
        return ParsedHead(status: status, version: "HTTP/1.1", fields: fields)
    }

    private func request(_ method: String = "GET", body: Data? = nil) -> URLRequest {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:1/coded")!)
        request.httpMethod = method
        request.httpBody = body
        return request
    }

    private func countable(_ step: ContentCoding.Step) -> Bool? {
        if case .proceed(let countable) = step { return countable }
        return nil
    }

    func testBefore850AnUnknownCodingTurnsDecodingOffForItsBodyAndAKnownOneTurnsItBackOn() throws {
        // Given libcurl 7.88 and a head in x-courier
        let easy = try easy()
        // When its head completes
        let unknown = ContentCoding.step(for: head("x-courier"), request: request(), easy: easy, codings: debian)
        // Then decoding is off for the body, which Content-Length counts
        XCTAssertEqual(countable(unknown), true)
        XCTAssertFalse(easy.decodesContent)
        // And a later response of the same transfer in gzip has it on again, decoded and uncounted
        let gzip = ContentCoding.step(for: head("gzip"), request: request(), easy: easy, codings: debian)
        XCTAssertEqual(countable(gzip), false)
        XCTAssertTrue(easy.decodesContent)
        // And a POST's answer is passed through the same way
        XCTAssertEqual(countable(ContentCoding.step(for: head("gzip, x-courier"), request: request("POST", body: Data("a".utf8)),
                                                    easy: easy, codings: debian)), true)
        XCTAssertFalse(easy.decodesContent)
    }

    func testKnownCodingsAndNoCodingLeaveDecodingAlone() throws {
        let easy = try easy()
        // Given heads without a coding, in identity, and in gzip, When each completes
        let none = ContentCoding.step(for: head(nil), request: request(), easy: easy, codings: current)
        let identity = ContentCoding.step(for: head("identity"), request: request(), easy: easy, codings: current)
        let gzip = ContentCoding.step(for: head("gzip"), request: request(), easy: easy, codings: current)
        // Then only the decoded body's length is unknown, and decoding stays on
        XCTAssertEqual([none, identity, gzip].map(countable), [true, true, false])
        XCTAssertTrue(easy.decodesContent)
    }

    func testFrom850AGETInAnUnknownCodingIsSentAgainWithDecodingOff() throws {
        // Given libcurl 8.14, which cannot switch mid-transfer, and a GET answered in x-courier
        let easy = try easy()
        // When its head completes
        let step = ContentCoding.step(for: head("x-courier"), request: request(), easy: easy, codings: current)
        // Then the transfer is to be sent again
        guard case .restartUndecoded = step else { return XCTFail("\(step)") }
        // And when it is, with decoding off from the start, its body and any other come as sent
        easy.setContentDecoding(false)
        XCTAssertEqual(countable(ContentCoding.step(for: head("x-courier"), request: request(), easy: easy, codings: current)), true)
        XCTAssertEqual(countable(ContentCoding.step(for: head("gzip"), request: request(), easy: easy, codings: current)), true)
        XCTAssertFalse(easy.decodesContent)
    }

    func testFrom850APOSTInAnUnknownCodingFailsNamingItAndResponsesWithoutABodyGoOn() throws {
        let easy = try easy()
        // Given libcurl 8.14 and a POST answered in x-courier
        let step = ContentCoding.step(for: head("gzip, x-courier"), request: request("POST", body: Data("a".utf8)),
                                      easy: easy, codings: current)
        // Then it fails, saying which coding and why it is not sent again
        guard case .fail(.transportFailed(let error)) = step else { return XCTFail("\(step)") }
        XCTAssertEqual(error.code, .cannotDecodeContentData)
        let description = error.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
        XCTAssertTrue(description.hasPrefix("the server sent the POST response in the content coding \"x-courier\""), description)
        // And a HEAD, a 204 and a 304 have no body for libcurl to fail on: they go on
        let bodiless = [ContentCoding.step(for: head("x-courier"), request: request("HEAD"), easy: easy, codings: current),
                        ContentCoding.step(for: head("x-courier", status: 204), request: request(), easy: easy, codings: current),
                        ContentCoding.step(for: head("x-courier", status: 304), request: request(), easy: easy, codings: current)]
        XCTAssertEqual(bodiless.map(countable), [true, true, true])
        XCTAssertTrue(easy.decodesContent)
    }

    func testTheLoadedLibcurlsCodingsAreItsOwn() throws {
        // Given the libcurl this process loaded
        _ = try easy()
        let loaded = CurlContentCodings.loaded
        print("libcurl \(CurlLibrary.versionText): decodes \(loaded.decodable.sorted()), "
              + "switches mid-transfer: \(loaded.switchesMidTransfer)")
        // Then it decodes at least gzip (every libcurl FoundationNetworking runs on has zlib)
        XCTAssertTrue(loaded.decodable.isSuperset(of: ["identity", "none", "gzip", "deflate", "x-gzip"]))
        XCTAssertEqual(loaded.switchesMidTransfer, courier_curl_version_number() < 0x08_05_00)
    }
}
#endif

/// The error Linux's URLSession's failure on an unknown content coding becomes.
final class URLSessionUndecodableContentTests: XCTestCase {
    private let libcurlError = NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown, userInfo: [
        NSLocalizedDescriptionKey: "Unrecognized content encoding type. libcurl understands deflate, gzip, br, zstd content encodings.",
    ])
    private let url = URL(string: "http://127.0.0.1:1/coded")!

    func testItNamesTheCodingWhenTheHeadIsKnownAndSaysToUseTheCurlTransport() throws {
        // Given the head of the response URLSession failed on
        let head = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Encoding": "x-courier"])
        // When the failure is translated
        let error = try XCTUnwrap(undecodableContent(libcurlError, url: url, response: head))
        // Then it is cannotDecodeContentData, naming the coding and the way out
        XCTAssertEqual(error.code, .cannotDecodeContentData)
        XCTAssertEqual(error.userInfo[NSLocalizedDescriptionKey] as? String,
                       "the server sent the body in the content coding \"x-courier\", which URLSession on Linux cannot decode "
                       + "and does not deliver undecoded (libcurl: Unrecognized content encoding type. libcurl understands "
                       + "deflate, gzip, br, zstd content encodings.); send the request through the curl transport "
                       + "(RequestTransport.curl), which delivers such a body as sent, with its Content-Encoding")
        XCTAssertEqual(error.userInfo[NSURLErrorFailingURLErrorKey] as? URL, url)
    }

    func testWithoutTheHeadItSaysACodingAndOtherUnknownErrorsAreNotTouched() throws {
        let error = try XCTUnwrap(URLSessionTransport.urlError(libcurlError, url: url))
        XCTAssertEqual(error.code, .cannotDecodeContentData)
        XCTAssertTrue((error.userInfo[NSLocalizedDescriptionKey] as? String ?? "").hasPrefix("the server sent the body in a content coding,"))
        let other = NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown, userInfo: [NSLocalizedDescriptionKey: "something else"])
        XCTAssertNil(undecodableContent(other, url: url))
    }
}
