import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import Courier

/// The pure part of resuming: which validator a response offers, which headers an attempt sends,
/// and what each answer means for the file.
final class DownloadResumePlanTests: XCTestCase {
    private let url = URL(string: "https://files.example.com/big.iso")!

    private func head(_ status: Int, _ headers: [String: String] = [:]) -> ResponseHead {
        ResponseHead(status: status, headerFields: HTTPFields(headers), url: url)
    }

    // MARK: - Content-Range

    func testContentRangeOfAPartAndOfA416() throws {
        let cases: [(String, ClosedRange<Int64>?, Int64?)] = [
            ("bytes 100-199/1000", 100...199, 1000), ("bytes 100-199/*", 100...199, nil),
            ("bytes */1000", nil, 1000), ("Bytes 0-0/1", 0...0, 1), (" bytes  4096-9999/10000 ", 4096...9999, 10000),
        ]
        for (text, range, length) in cases {
            let parsed = try XCTUnwrap(ContentRange(text), text)
            XCTAssertEqual(parsed.range, range, text)
            XCTAssertEqual(parsed.completeLength, length, text)
        }
    }

    func testMalformedContentRangesAreNone() {
        for text in ["", "bytes", "bytes */*", "items 0-1/2", "bytes 5-4/10", "bytes 0-10/10", "bytes -1-4/10",
                     "bytes 0-4", "bytes +0-4/10", "bytes 0-4/10/11", "bytes a-4/10"] {
            XCTAssertNil(ContentRange(text), text)
        }
    }

    // MARK: - Validators

    func testAStrongEntityTagIsTheValidatorExactlyAsSent() {
        let response = head(200, ["ETag": "\"5f3a-1c\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT",
                                  "Date": "Mon, 07 Nov 1994 08:49:37 GMT"])
        XCTAssertEqual(ResumeValidator.of(response), .entityTag("\"5f3a-1c\""))
    }

    func testAWeakEntityTagIsNeverUsedButAStrongDateIs() {
        // Given a weak ETag and a Last-Modified a day before the response's Date
        let response = head(200, ["ETag": "W/\"5f3a\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT",
                                  "Date": "Mon, 07 Nov 1994 08:49:37 GMT"])
        // Then the date is the validator (RFC 9110 §13.1.5: If-Range needs a strong one)
        XCTAssertEqual(ResumeValidator.of(response), .lastModified("Sun, 06 Nov 1994 08:49:37 GMT"))
    }

    func testALastModifiedDateIsStrongOnlyAMinuteBeforeTheResponse() {
        let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
        XCTAssertEqual(ResumeValidator.of(head(200, ["Last-Modified": modified, "Date": "Sun, 06 Nov 1994 08:50:37 GMT"])),
                       .lastModified(modified))
        XCTAssertNil(ResumeValidator.of(head(200, ["Last-Modified": modified, "Date": "Sun, 06 Nov 1994 08:50:36 GMT"])))
        XCTAssertNil(ResumeValidator.of(head(200, ["Last-Modified": modified])), "without a Date it is weak")
        XCTAssertNil(ResumeValidator.of(head(200, ["Last-Modified": "yesterday", "Date": "Sun, 06 Nov 1994 08:50:37 GMT"])))
    }

    func testNoValidatorWithoutOneOrForACodedBody() {
        XCTAssertNil(ResumeValidator.of(head(200)))
        XCTAssertNil(ResumeValidator.of(head(200, ["ETag": "W/\"1\""])))
        XCTAssertNil(ResumeValidator.of(head(200, ["ETag": "\"1\"", "Content-Encoding": "gzip"])))
        XCTAssertEqual(ResumeValidator.of(head(200, ["ETag": "\"1\"", "Content-Encoding": "identity"])), .entityTag("\"1\""))
    }

    func testAnUnquotedEntityTagIsSentBackAsIs() {
        // httpbin's /range sends `ETag: range1024`, without the quotes of the grammar
        XCTAssertEqual(ResumeValidator.of(head(200, ["ETag": "range1024"])), .entityTag("range1024"))
    }

    // MARK: - Plans and their headers

    func testAResumeAsksForTheRestIfTheVersionIsTheSame() {
        // Given 4096 bytes of partial data from version "v1"
        let plan = ResumePlan.plan(resumePoint: (4096, .entityTag("\"v1\"")), resumes: true, requestHasRange: false)
        var request = URLRequest(url: url)

        // When the plan is applied
        plan.apply(to: &request)

        // Then the request asks for the rest of version "v1", uncoded
        XCTAssertEqual(plan, .resume(offset: 4096, validator: .entityTag("\"v1\"")))
        XCTAssertEqual(request.allHTTPHeaderFields, ["Range": "bytes=4096-", "If-Range": "\"v1\"", "Accept-Encoding": "identity"])
    }

    func testAResumeByDateSendsTheDate() {
        var request = URLRequest(url: url)
        ResumePlan.resume(offset: 10, validator: .lastModified("Sun, 06 Nov 1994 08:49:37 GMT")).apply(to: &request)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Range"), "bytes=10-")
        XCTAssertEqual(request.value(forHTTPHeaderField: "If-Range"), "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    func testNothingToResumeAsksForTheWhole() {
        for plan in [ResumePlan.plan(resumePoint: nil, resumes: true, requestHasRange: false),
                     ResumePlan.plan(resumePoint: (4096, .entityTag("\"v1\"")), resumes: false, requestHasRange: false),
                     ResumePlan.plan(resumePoint: (0, .entityTag("\"v1\"")), resumes: true, requestHasRange: false)] {
            var request = URLRequest(url: url)
            plan.apply(to: &request)
            XCTAssertEqual(plan, .whole)
            XCTAssertEqual(request.allHTTPHeaderFields, ["Accept-Encoding": "identity"])
        }
    }

    func testARequestsOwnRangeAndEncodingAreLeftAlone() {
        // Given a request that asks for a range and an encoding of its own, with partial data around
        var request = URLRequest(url: url)
        request.setValue("bytes=0-99", forHTTPHeaderField: "Range")
        request.setValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        let plan = ResumePlan.plan(resumePoint: (4096, .entityTag("\"v1\"")), resumes: true, requestHasRange: true)

        // When the plan is applied
        plan.apply(to: &request)

        // Then the request is as it was
        XCTAssertEqual(plan, .requestedRange)
        XCTAssertEqual(request.allHTTPHeaderFields, ["Range": "bytes=0-99", "Accept-Encoding": "gzip"])
    }

    // MARK: - What each answer means

    private let resume = ResumePlan.resume(offset: 4096, validator: .entityTag("\"v1\""))

    func testAPartStartingAtTheOffsetIsAppended() {
        XCTAssertEqual(resume.action(for: head(206, ["Content-Range": "bytes 4096-9999/10000"])), .append(offset: 4096))
        XCTAssertEqual(resume.action(for: head(206, ["Content-Range": "bytes 4096-9999/*"])), .append(offset: 4096))
    }

    func testA200StartsOver() {
        // The server ignored the range, or the resource changed and If-Range sent it whole
        XCTAssertEqual(resume.action(for: head(200)), .writeFromStart)
        XCTAssertEqual(ResumePlan.whole.action(for: head(200)), .writeFromStart)
        XCTAssertEqual(ResumePlan.whole.action(for: head(204)), .writeFromStart)
    }

    func testAPartStartingElsewhereOrEndingEarlyIsUnusable() {
        XCTAssertEqual(resume.action(for: head(206, ["Content-Range": "bytes 0-9999/10000"])),
                       .unusable("bytes from 4096 on were asked for, but the server sent Content-Range: bytes 0-9999/10000"))
        XCTAssertEqual(resume.action(for: head(206, ["Content-Range": "bytes 4096-5000/10000"])),
                       .unusable("the rest of the resource from byte 4096 was asked for, but the server sent only "
                                 + "Content-Range: bytes 4096-5000/10000"))
        XCTAssertEqual(resume.action(for: head(206)),
                       .unusable("the server answered 206 without a usable Content-Range (Content-Range: none)"))
    }

    func testA416NamingThePartialDataLengthCompletesIt() {
        XCTAssertEqual(resume.action(for: head(416, ["Content-Range": "bytes */4096"])), .complete(size: 4096))
    }

    func testA416NamingAnotherLengthIsUnusable() {
        XCTAssertEqual(resume.action(for: head(416, ["Content-Range": "bytes */4000"])),
                       .unusable("the server refused the range from byte 4096 (416): the resource has 4000 bytes, "
                                 + "fewer than the partial data"))
        XCTAssertEqual(resume.action(for: head(416)),
                       .unusable("the server refused the range from byte 4096 (416) without saying the resource's length"))
    }

    func testA416WithoutAResumeAndOtherStatusesAreRejected() {
        XCTAssertEqual(ResumePlan.whole.action(for: head(416, ["Content-Range": "bytes */0"])), .reject)
        for status in [304, 302, 404, 412, 500] {
            XCTAssertEqual(resume.action(for: head(status)), .reject, "\(status)")
        }
    }

    func testAnUnaskedPartIsUsableOnlyIfItIsTheWhole() {
        XCTAssertEqual(ResumePlan.whole.action(for: head(206, ["Content-Range": "bytes 0-9/10"])), .writeFromStart)
        XCTAssertEqual(ResumePlan.whole.action(for: head(206, ["Content-Range": "bytes 0-4/10"])),
                       .unusable("the server sent part of the resource (Content-Range: bytes 0-4/10) though the whole was asked for"))
    }

    func testARequestedRangeTakesWhateverPartComes() {
        XCTAssertEqual(ResumePlan.requestedRange.action(for: head(206, ["Content-Range": "bytes 100-199/1000"])), .writeFromStart)
        XCTAssertEqual(ResumePlan.requestedRange.action(for: head(200)), .writeFromStart)
    }
}
