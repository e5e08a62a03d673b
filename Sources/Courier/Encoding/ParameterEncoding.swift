import Foundation

// Internal entry points for the URL builder and the body encoders. Each throws
// `RequestError.invalidParameters(keyPath:reason:)` for a value that cannot be encoded.

/// The percent-encoded query string of `value`, without a leading `?`, using `Value.encodingOptions`.
func encodeQuery<Value: Serializable>(_ value: Value) throws -> String {
    try encodeQuery(value, options: Value.encodingOptions)
}

/// The percent-encoded query string of any struct, class or `[String: Value]` dictionary.
func encodeQuery(_ value: Any, options: ParameterEncodingOptions) throws -> String {
    String(decoding: try encodeForm(value, options: options), as: UTF8.self)
}

/// The `application/x-www-form-urlencoded` body of `value`, using `Value.encodingOptions`.
func encodeFormBody<Value: Serializable>(_ value: Value) throws -> Data {
    Data(try encodeForm(value, options: Value.encodingOptions))
}

/// The JSON body of `value`, using `Value.encodingOptions`.
func encodeJSONBody<Value: Serializable>(_ value: Value) throws -> Data {
    try encodeJSON(value, options: Value.encodingOptions)
}

/// The JSON of any encodable value.
func encodeJSON(_ value: Any, options: ParameterEncodingOptions) throws -> Data {
    var encoder = ReflectionEncoder(writer: JSONWriter(options: options), options: options)
    do {
        try encoder.encode(value)
    } catch {
        throw error.requestError()
    }
    return Data(encoder.writer.bytes)
}

/// `value` as multipart form fields (`user[name]`, `user[tags][]`, …), names and values unescaped.
/// `name` prefixes every field name, and every error key path.
func encodeFormFields(_ value: Any, withName name: String?, options: ParameterEncodingOptions) throws -> [(name: String, value: String)] {
    var encoder = ReflectionEncoder(writer: FormWriter(options: options, output: .fields, namePrefix: name), options: options)
    do {
        try encoder.encode(value)
    } catch {
        throw error.requestError(prefix: name)
    }
    return encoder.writer.fields.map { (String(decoding: $0.name, as: UTF8.self), String(decoding: $0.value, as: UTF8.self)) }
}

private func encodeForm(_ value: Any, options: ParameterEncodingOptions) throws -> [UInt8] {
    var encoder = ReflectionEncoder(writer: FormWriter(options: options, output: .percentEncoded), options: options)
    do {
        try encoder.encode(value)
    } catch {
        throw error.requestError()
    }
    return encoder.writer.bytes
}
