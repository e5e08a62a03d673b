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

    /// A rejected response's body decoded as its request's ``Request/ErrorBody``; not part of the
    /// value, which is the bytes.
    var errorBody: (any Sendable)?
    /// The decoding of the request a rejected body answered, for ``RequestError/errorBody(as:)``
    /// to decode it with later; not part of the value either.
    var decoding: ResponseDecoding?

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

    /// The body as text in the charset that `contentType` names (`text/plain; charset=latin1`),
    /// UTF-8 when it names none; `nil` when the body is not valid text in it or the charset is
    /// not one of UTF-8, ISO-8859-1, Windows-1252, US-ASCII and UTF-16.
    func text(contentType: String?) -> String? {
        guard let charset = contentType.flatMap(Self.charset(of:)) else { return string }
        let encoding: String.Encoding
        switch charset {
        case "utf-8", "utf8": encoding = .utf8
        case "iso-8859-1", "latin1", "iso_8859-1", "l1": encoding = .isoLatin1
        case "windows-1252", "cp1252": encoding = .windowsCP1252
        case "us-ascii", "ascii": encoding = .ascii
        case "utf-16": encoding = .utf16
        case "utf-16le": encoding = .utf16LittleEndian
        case "utf-16be": encoding = .utf16BigEndian
        default: return nil
        }
        return String(data: data, encoding: encoding)
    }

    /// The lowercased `charset` parameter of a media type (RFC 9110 §8.3.2), quotes removed.
    static func charset(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else { continue }
            return pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
        }
        return nil
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

    public static func == (lhs: ResponseData, rhs: ResponseData) -> Bool {
        lhs.data == rhs.data
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(data)
    }
}
