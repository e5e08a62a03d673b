import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A URL request ready to send, with the file its body streams from, if any.
struct PreparedRequest: Sendable {
    var urlRequest: URLRequest
    /// The file the body streams from; `nil` when the body (if any) is in `urlRequest.httpBody`.
    var bodyFile: URL?
    /// Whether `bodyFile` is Courier's own temporary file, removed once the request ends.
    var bodyFileIsTemporary = false
    /// The request's own header fields in order, repeated names apart
    /// (``TransportRequest/headerFields``); `urlRequest` has them joined.
    var headerFields: HTTPFields = []

    /// The body's size in bytes (0 without a body).
    var bodySize: Int64 {
        if let body = urlRequest.httpBody { return Int64(body.count) }
        guard let bodyFile, let size = try? FileManager.default.attributesOfItem(atPath: bodyFile.path)[.size] as? Int else {
            return 0
        }
        return Int64(size)
    }

    /// Removes the temporary body file, if there is one.
    func removeTemporaryFiles() {
        if let bodyFile, bodyFileIsTemporary {
            try? FileManager.default.removeItem(at: bodyFile)
        }
    }
}
