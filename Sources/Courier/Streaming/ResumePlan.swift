import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a download asks the server for, and what each answer means for its file: the pure part
/// of resuming (RFC 9110 §14.2 `Range`, §13.1.5 `If-Range`, §15.3.7 `206`, §15.5.17 `416`).
///
/// Invariants, checked by `DownloadResumePlanTests`:
/// - a range is asked for only with a strong validator in `If-Range`, so the server sends the
///   rest of the same version or the whole of the current one, never the rest of another;
/// - bytes are appended only when the server's part starts exactly where the partial data ends
///   and runs to the end of the resource;
/// - a `200` always starts the file over (the server ignored the range, or the resource changed);
/// - a `416` completes the download only when it says the resource is exactly as long as the
///   partial data.
enum ResumePlan: Hashable, Sendable {
    /// Ask for the whole body.
    case whole
    /// Ask for the bytes from `offset` on, if the resource is still the version `validator` names.
    case resume(offset: Int64, validator: ResumeValidator)
    /// The request asks for a range of its own: whatever comes is the file, and it is not resumed.
    case requestedRange

    /// What a response head means for the file.
    enum Action: Hashable, Sendable {
        /// Write the body from the start of the file, dropping any partial data.
        case writeFromStart
        /// Append the body to the partial data, which holds `offset` bytes.
        case append(offset: Int64)
        /// The partial data is already the whole resource (a `416` naming its very length):
        /// the download completes without a body.
        case complete(size: Int64)
        /// Not a body for the file: the queue handles the response as any other (it fails with
        /// ``RequestError/validationFailed(_:body:)``).
        case reject
        /// A part that does not continue the partial data: the request fails with this reason,
        /// and the partial data is dropped, so that the next download starts over.
        case unusable(String)
    }

    /// The plan for an attempt: continue the partial data if there is some to continue and
    /// resuming is wanted, unless the request asks for a range itself.
    static func plan(resumePoint: (offset: Int64, validator: ResumeValidator)?, resumes: Bool,
                     requestHasRange: Bool) -> ResumePlan {
        if requestHasRange { return .requestedRange }
        guard resumes, let resumePoint, resumePoint.offset > 0 else { return .whole }
        return .resume(offset: resumePoint.offset, validator: resumePoint.validator)
    }

    /// Adds the plan's headers: `Range` and `If-Range` to resume; and always `Accept-Encoding:
    /// identity` unless the request chose an encoding, so that offsets in the file are offsets in
    /// what the server sends.
    func apply(to urlRequest: inout URLRequest) {
        if urlRequest.value(forHTTPHeaderField: "Accept-Encoding") == nil {
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        if case .resume(let offset, let validator) = self {
            urlRequest.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            urlRequest.setValue(validator.headerValue, forHTTPHeaderField: "If-Range")
        }
    }

    /// What `head` means for the file under this plan.
    func action(for head: ResponseHead) -> Action {
        let status = head.status
        let contentRange = head.headerFields["Content-Range"].flatMap(ContentRange.init)
        switch (status, self) {
        case (206, .requestedRange):
            return .writeFromStart
        case (206, .whole):
            // Not asked for; usable only if it is the whole resource anyway.
            guard let contentRange, let range = contentRange.range, let length = contentRange.completeLength,
                  range.lowerBound == 0, range.upperBound == length - 1 else {
                return .unusable("the server sent part of the resource (\(Self.describe(head))) though the whole was asked for")
            }
            return .writeFromStart
        case (206, .resume(let offset, _)):
            guard let contentRange, let range = contentRange.range else {
                return .unusable("the server answered 206 without a usable Content-Range (\(Self.describe(head)))")
            }
            guard range.lowerBound == offset else {
                return .unusable("bytes from \(offset) on were asked for, but the server sent \(Self.describe(head))")
            }
            if let length = contentRange.completeLength, range.upperBound != length - 1 {
                return .unusable("the rest of the resource from byte \(offset) was asked for, but the server sent only "
                                 + Self.describe(head))
            }
            return .append(offset: offset)
        case (416, .resume(let offset, _)):
            guard let contentRange, contentRange.range == nil, let length = contentRange.completeLength else {
                return .unusable("the server refused the range from byte \(offset) (416) without saying the resource's length")
            }
            guard length == offset else {
                return .unusable("the server refused the range from byte \(offset) (416): the resource has \(length) bytes, "
                                 + "fewer than the partial data")
            }
            return .complete(size: offset)
        case (200..<300, _):
            return .writeFromStart
        default:
            return .reject
        }
    }

    private static func describe(_ head: ResponseHead) -> String {
        "Content-Range: " + (head.headerFields["Content-Range"] ?? "none")
    }
}
