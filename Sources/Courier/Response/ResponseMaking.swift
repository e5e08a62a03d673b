import Foundation

// How a request's `ResponseType` is made from a response, by what the type is: a `Response`
// makes itself; any other `Decodable` is decoded from JSON, an `Optional` being `nil` for an
// empty body. The witness is chosen when a request type is compiled, so a `ResponseType` that is
// neither does not compile; the checks at run time settle the cases the compiler cannot see (a
// generic request whose `Decodable` response type is `String` at run time).

extension Request where ResponseType: Decodable {
    public func makeResponse(body: ResponseData, head: ResponseHead, decoding: ResponseDecoding) throws -> ResponseType {
        try ResponseMaking.make(ResponseType.self, body: body, head: head, decoding: decoding)
    }

    public func accepts(_ head: ResponseHead) -> Bool {
        ResponseMaking.accepts(ResponseType.self, head)
    }
}

extension Request where ResponseType: Response {
    public func makeResponse(body: ResponseData, head: ResponseHead, decoding: ResponseDecoding) throws -> ResponseType {
        try ResponseMaking.makeResponse(ResponseType.self, body: body, head: head, decoding: decoding)
    }

    public func accepts(_ head: ResponseHead) -> Bool {
        ResponseType.accepts(head)
    }
}

extension Request where ResponseType: Response & Decodable {
    public func makeResponse(body: ResponseData, head: ResponseHead, decoding: ResponseDecoding) throws -> ResponseType {
        try ResponseMaking.makeResponse(ResponseType.self, body: body, head: head, decoding: decoding)
    }

    public func accepts(_ head: ResponseHead) -> Bool {
        ResponseType.accepts(head)
    }
}

enum ResponseMaking {
    static func make<T: Decodable>(_ type: T.Type, body: ResponseData, head: ResponseHead, decoding: ResponseDecoding) throws -> T {
        if let custom = T.self as? any Response.Type {
            return try makeResponse(custom, body: body, head: head, decoding: decoding) as! T
        }
        if let optional = T.self as? any OptionalResponse.Type {
            return try optional.make(body: body, head: head, decoding: decoding) as! T
        }
        return try decoding.decode(T.self, from: body)
    }

    /// Calls the type's own initializer, with `decoding` as the one its default
    /// (`Response & Decodable`) initializer uses.
    static func makeResponse<T: Response>(_ type: T.Type, body: ResponseData, head: ResponseHead, decoding: ResponseDecoding) throws -> T {
        try ResponseDecoding.$current.withValue(decoding) {
            try T(body: body, head: head)
        }
    }

    static func accepts<T>(_ type: T.Type, _ head: ResponseHead) -> Bool {
        if let custom = T.self as? any Response.Type { return custom.accepts(head) }
        if let optional = T.self as? any OptionalResponse.Type { return optional.accepts(head) }
        return head.isSuccess
    }
}

/// An `Optional` response type: `nil` for an empty body or a JSON `null`, otherwise its wrapped
/// type made as any response type is.
private protocol OptionalResponse {
    static func make(body: ResponseData, head: ResponseHead, decoding: ResponseDecoding) throws -> Self
    static func accepts(_ head: ResponseHead) -> Bool
}

extension Optional: OptionalResponse where Wrapped: Decodable {
    fileprivate static func make(body: ResponseData, head: ResponseHead, decoding: ResponseDecoding) throws -> Self {
        if body.data.isEmpty { return nil }
        if let custom = Wrapped.self as? any Response.Type {
            let value = try ResponseMaking.makeResponse(custom, body: body, head: head, decoding: decoding)
            return .some(value as! Wrapped)
        }
        // Decoded as an optional, so that a JSON `null` is nil too.
        return try decoding.decode(Self.self, from: body)
    }

    fileprivate static func accepts(_ head: ResponseHead) -> Bool {
        ResponseMaking.accepts(Wrapped.self, head)
    }
}
