import Foundation

/// The raw body of a response, with views for the common formats.
///
/// ```swift
/// let text = data.string               // String?, nil when the body is not UTF-8
/// let object = try data.jsonObject     // [String: Any]
/// let user = try data.decode(User.self)
/// ```
public struct ResponseData: Sendable, Hashable, CustomStringConvertible {
    /// The body's bytes; empty when the response has no body.
    public let data: Data

    /// Wraps a body.
    public init(_ data: Data) {
        self.data = data
    }

    /// The body as UTF-8 text, or `nil` when it is not valid UTF-8.
    public var string: String? {
        String(data: data, encoding: .utf8)
    }

    /// The body parsed as a JSON object. Throws when it is not JSON or not an object.
    public var jsonObject: [String: Any] {
        get throws {
            let value = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            guard let object = value as? [String: Any] else {
                throw DecodingError.typeMismatch([String: Any].self, .init(
                    codingPath: [], debugDescription: "The body is JSON but not an object: \(snippet ?? "")"))
            }
            return object
        }
    }

    /// The body parsed as a JSON array of objects. Throws when it is not JSON or not such an array.
    public var jsonArray: [[String: Any]] {
        get throws {
            let value = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            guard let array = value as? [[String: Any]] else {
                throw DecodingError.typeMismatch([[String: Any]].self, .init(
                    codingPath: [], debugDescription: "The body is JSON but not an array of objects: \(snippet ?? "")"))
            }
            return array
        }
    }

    /// Decodes the body as JSON.
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - decoder: The decoder to use. Default: a new `JSONDecoder` with default settings.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        if data.isEmpty {
            throw DecodingError.dataCorrupted(.init(
                codingPath: [], debugDescription: "The response has an empty body, but \(T.self) needs one"))
        }
        return try decoder.decode(T.self, from: data)
    }

    /// The start of the body as text, for error messages and logs (at most 200 characters).
    var snippet: String? {
        guard !data.isEmpty else { return nil }
        let text = String(decoding: data.prefix(200), as: UTF8.self)
        return data.count > 200 ? text.debugEscaped + "…" : text.debugEscaped
    }

    public var description: String {
        "ResponseData(\(data.count) bytes)"
    }
}
