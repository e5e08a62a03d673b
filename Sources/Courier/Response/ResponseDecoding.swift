import Foundation

/// How JSON response bodies are decoded into `Decodable` response types.
///
/// Set it for the whole queue, and override it for a request that needs another:
/// ```swift
/// var config = RequestQueueConfiguration.default
/// config.decoding = ResponseDecoding(decoder: myDecoder)
///
/// struct LegacyRequest: Request {
///     typealias ResponseType = [Item]
///     var path: String { "/v1/items" }
///     var decoding: ResponseDecoding? { ResponseDecoding(decoder: legacyDecoder) }
/// }
/// ```
public struct ResponseDecoding: Sendable {
    /// A plain `JSONDecoder`: keys as the types declare them, dates as numbers of seconds
    /// since 2001 (`Date`'s own `Decodable` form). The queue's default.
    public static let `default` = ResponseDecoding(decoder: JSONDecoder())

    private let decoder: JSONDecoder

    /// The decoding of the request whose response is being made, for the default initializer of
    /// `Response & Decodable` types, which has no other way to learn it.
    @TaskLocal static var current: ResponseDecoding?

    /// Decodes with `decoder`, configured as you like. The decoder is shared by every response
    /// decoded this way, possibly on several threads at once, so do not change it afterwards.
    public init(decoder: JSONDecoder) {
        self.decoder = decoder
    }

    /// Decodes `body` as JSON. An empty body fails with a message that says so.
    public func decode<T: Decodable>(_ type: T.Type, from body: ResponseData) throws -> T {
        if body.data.isEmpty {
            throw DecodingError.dataCorrupted(.init(
                codingPath: [], debugDescription: "The response has an empty body, but \(T.self) needs one"))
        }
        return try decoder.decode(T.self, from: body.data)
    }
}
