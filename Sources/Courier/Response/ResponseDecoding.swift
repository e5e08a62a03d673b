import Foundation

/// How JSON response bodies are decoded into `Decodable` response types.
///
/// Say how your API writes keys and dates, for the whole queue, and override it for a request
/// that differs:
/// ```swift
/// var config = RequestQueueConfiguration.default
/// config.decoding = ResponseDecoding(keyStyle: .snakeCase, dateStyle: .iso8601)
/// // {"user_name": "ada", "joined_at": "2026-11-25T10:00:00Z"} decodes into
/// // struct User: Decodable { let userName: String; let joinedAt: Date }
///
/// struct LegacyRequest: Request {
///     typealias ResponseType = [Item]
///     var path: String { "/v1/items" }
///     var decoding: ResponseDecoding? { ResponseDecoding(decoder: legacyDecoder) }
/// }
/// ```
/// Key and date styles are the encoder's own (``ParameterEncodingOptions``), so one setting
/// reads back what Courier writes: `ResponseDecoding(mirroring: .default)` decodes the snake_case
/// keys and ISO 8601 dates that parameters are encoded with by default.
public struct ResponseDecoding: Sendable {
    /// A plain `JSONDecoder`: keys as the types declare them, dates as `Date` decodes itself (a
    /// number of seconds since 2001). The queue's default, and as fast as `JSONDecoder` alone.
    public static let `default` = ResponseDecoding(decoder: JSONDecoder())

    private let decoder: JSONDecoder
    /// Whether Swift names are mapped through the key style in the decoder's userInfo.
    private let mapsKeys: Bool

    /// The decoding of the request whose response is being made, for the default initializer of
    /// `Response & Decodable` types, which has no other way to learn it.
    @TaskLocal static var current: ResponseDecoding?

    /// Decodes keys and dates as an API writes them.
    ///
    /// - Parameters:
    ///   - keyStyle: How the API writes the names of properties: with ``ParameterEncodingOptions/KeyStyle/snakeCase``
    ///     the property `userID` is read from `user_id`, exactly the key the encoder writes for it.
    ///     A key the API writes as declared (`userID`) is read too. Keys of dictionaries are data
    ///     and are never changed. Default: ``ParameterEncodingOptions/KeyStyle/unchanged``.
    ///   - dateStyle: How the API writes dates: ``ParameterEncodingOptions/DateStyle/iso8601``
    ///     (`2026-11-25T10:00:00Z`, with or without a fraction of a second, `Z` or an offset),
    ///     seconds or milliseconds since 1970. Default: `nil`, `Date`'s own form (seconds since
    ///     2001), as `JSONDecoder` reads it.
    public init(keyStyle: ParameterEncodingOptions.KeyStyle = .unchanged, dateStyle: ParameterEncodingOptions.DateStyle? = nil) {
        let decoder = JSONDecoder()
        switch dateStyle {
        case nil: break
        case .iso8601?: decoder.dateDecodingStrategy = .custom(Self.decodeISO8601)
        case .secondsSince1970?: decoder.dateDecodingStrategy = .secondsSince1970
        case .millisecondsSince1970?: decoder.dateDecodingStrategy = .millisecondsSince1970
        }
        if keyStyle != .unchanged { decoder.userInfo[KeyMappingDecoder.styleKey] = keyStyle }
        self.decoder = decoder
        mapsKeys = keyStyle != .unchanged
    }

    /// Decodes what parameters encoded with `options` look like: their key style and date style.
    public init(mirroring options: ParameterEncodingOptions) {
        self.init(keyStyle: options.keyStyle, dateStyle: options.dateStyle)
    }

    /// Decodes with `decoder`, configured as you like (its key strategy, dates, data, floats). The
    /// decoder is shared by every response decoded this way, possibly on several threads at once,
    /// so do not change it afterwards.
    public init(decoder: JSONDecoder) {
        self.decoder = decoder
        mapsKeys = false
    }

    /// Decodes `body` as JSON. An empty body fails with a message that says so.
    public func decode<T: Decodable>(_ type: T.Type, from body: ResponseData) throws -> T {
        if body.data.isEmpty {
            throw DecodingError.dataCorrupted(.init(
                codingPath: [], debugDescription: "The response has an empty body, but \(T.self) needs one"))
        }
        guard mapsKeys else { return try decoder.decode(T.self, from: body.data) }
        return try KeyMappingDecoder.decode(T.self, from: body.data, with: decoder)
    }

    /// ISO 8601 with or without a fraction of a second, in UTC or with an offset.
    private static func decodeISO8601(_ decoder: any Decoder) throws -> Date {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
        throw DecodingError.dataCorruptedError(in: container, debugDescription:
            "expected an ISO 8601 date such as 2026-11-25T10:00:00Z, found \"\(text.debugEscaped.truncatedForMessages)\"")
    }
}
