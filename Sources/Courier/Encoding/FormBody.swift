import Foundation

/// A plain ``Serializable`` value sent as a URL-encoded form body: what ``URLRequestBuilder`` makes of
/// one in a request whose method carries a body. It lives with the other bodies, so it is internal.
struct FormBody: BodyData {
    let parameters: any Serializable
    var contentType: String { "application/x-www-form-urlencoded; charset=utf-8" }
    func encode() throws -> Data {
        Data(try encodeQuery(parameters, options: type(of: parameters).encodingOptions).utf8)
    }
}
