import Foundation

extension ServerSentEvent {
    /// Decodes the event's ``data`` as JSON, the payload format of most streaming APIs.
    ///
    /// Errors are ``RequestError``s, like every other failure to make a value from what a server
    /// sent, so one `catch` handles a bad event and a bad response alike; the description names
    /// the type and, for a `DecodingError`, the coding path that failed.
    ///
    /// ```swift
    /// let chunk: Chunk = try event.decode()
    /// ```
    /// - Parameters:
    ///   - type: The type to decode; inferred from the context when left out.
    ///   - decoder: The decoder to use. Default: a new `JSONDecoder` with default settings.
    /// - Throws: ``RequestError/serializationFailed(type:underlying:)``, whose underlying error is
    ///   the decoder's, or a `DecodingError` saying the event has no data when ``data`` is empty.
    public func decode<T: Decodable>(_ type: T.Type = T.self, using decoder: JSONDecoder = JSONDecoder()) throws(RequestError) -> T {
        do {
            if data.isEmpty {
                // The decoder's own message ("not valid JSON") would hide that there was nothing to read.
                throw DecodingError.dataCorrupted(.init(
                    codingPath: [], debugDescription: "The event has empty data, but \(T.self) needs some"))
            }
            return try decoder.decode(T.self, from: Data(data.utf8))
        } catch {
            throw .serializationFailed(type: String(reflecting: T.self), underlying: error)
        }
    }
}
