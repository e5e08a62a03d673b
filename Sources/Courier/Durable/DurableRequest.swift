import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a queue knows of one durable request from its journal: its IDs, lane, attempts so far,
/// and the request to send, Idempotency-Key included.
struct DurableRecord: Sendable {
    /// The request's ID in the journal: the decimal of its ``RequestID``'s raw value.
    let journalID: String
    let idempotencyKey: String
    let lane: String?
    /// Attempts made before this process (in earlier runs), from the journal.
    let priorAttempts: Int
    let addedAt: Date
    /// When the next attempt may start (after a restart: the backoff an earlier run set).
    let nextAttemptAt: Date
    /// The request as every attempt starts from it.
    let prepared: PreparedRequest

    /// The header that carries the key (draft-ietf-httpapi-idempotency-key-header).
    static let idempotencyKeyField = "Idempotency-Key"

    /// The record of a journal entry; its request is sent with `timeout` per request.
    init(_ entry: JournalEntry, timeout: TimeInterval) {
        journalID = entry.requestID
        idempotencyKey = entry.idempotencyKey
        lane = entry.request.lane
        priorAttempts = entry.attempts
        addedAt = entry.addedAt
        nextAttemptAt = entry.nextAttemptAt
        prepared = Self.prepared(entry, timeout: timeout)
    }

    /// The request to send, from what the journal kept: method, URL, header fields (with the
    /// Idempotency-Key unless the app set one itself) and body (bytes, or the journal's copy of
    /// the body file, which stays until the journal purges the request).
    static func prepared(_ entry: JournalEntry, timeout: TimeInterval) -> PreparedRequest {
        let request = entry.request
        var urlRequest = URLRequest(url: request.url, timeoutInterval: timeout)
        if request.method != "GET" { urlRequest.httpMethod = request.method }
        var fields = request.headerFields
        if !fields.contains(idempotencyKeyField) { fields.append(entry.idempotencyKey, for: idempotencyKeyField) }
        var named = Set<String>()
        for field in fields where named.insert(field.name.lowercased()).inserted {
            urlRequest.setValue(fields[field.name], forHTTPHeaderField: field.name)
        }
        var prepared = PreparedRequest(urlRequest: urlRequest)
        prepared.headerFields = fields
        switch request.body {
        case .none: break
        case .bytes(let data): prepared.urlRequest.httpBody = data
        case .file(let file): prepared.bodyFile = file
        }
        return prepared
    }

    /// What the journal keeps of a request the builder made: every header field it will send
    /// (those the builder set itself, such as `Content-Type`, first), and its body as bytes or a
    /// file to copy.
    static func journalRequest(_ prepared: PreparedRequest, lane: String?, responseType: String,
                               path: String) throws(JournalError) -> JournalRequest {
        let urlRequest = prepared.urlRequest
        guard let url = urlRequest.url else {
            throw JournalError(.requestNotJournalable, path: path, detail: "the request has no URL")
        }
        guard urlRequest.httpBodyStream == nil else {
            throw JournalError(.requestNotJournalable, path: path,
                               detail: "its body is a stream, which cannot be read again after a restart")
        }
        var fields = HTTPFields()
        for (name, value) in (urlRequest.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key })
        where !prepared.headerFields.contains(name) {
            fields.append(value, for: name)
        }
        for field in prepared.headerFields { fields.append(field) }
        let body: JournalBody
        if let data = urlRequest.httpBody {
            body = .bytes(data)
        } else if let file = prepared.bodyFile {
            body = .file(file)
        } else {
            body = .none
        }
        return JournalRequest(lane: lane, method: urlRequest.httpMethod ?? "GET", url: url, headerFields: fields,
                              body: body, responseType: responseType)
    }
}

/// A durable request in the queue: the app's own request while this process has it (its own
/// validation, decoding and delegates), or, after a restart, the journal's with the response type
/// the app registered under the journaled name.
struct DurableBox: AnyRequestBox {
    let record: DurableRecord
    /// The request's own box, in the process that added it.
    let live: (any AnyRequestBox)?
    /// The registered type's maker after a restart; nil when the type is not registered.
    let maker: DurableResponseTypes.Maker?
    let responseTypeName: String

    var durable: DurableRecord? { record }
    var responseType: ObjectIdentifier {
        live?.responseType ?? maker?.type ?? ObjectIdentifier(UnregisteredResponseType.self)
    }
    var isRequestDelegate: Bool { live?.isRequestDelegate ?? false }
    var preparesSlowly: Bool { false }
    var cachePolicy: CachePolicy { live?.cachePolicy ?? .useProtocol }
    /// Never: each carries its own Idempotency-Key.
    var sharesIdenticalRequests: Bool { false }
    var redirectPolicy: RedirectPolicy? { live?.redirectPolicy }
    /// Durable requests always wait for the network.
    var whileOffline: OfflinePolicy? { .wait }

    /// The journal's request, whatever the builder would make now.
    func prepare(with builder: URLRequestBuilder) throws(RequestError) -> PreparedRequest {
        record.prepared
    }

    func willSend(_ urlRequest: inout URLRequest) { live?.willSend(&urlRequest) }
    func didSend(_ urlRequest: URLRequest) { live?.didSend(urlRequest) }
    func didFail(_ urlRequest: URLRequest?, error: RequestError) { live?.didFail(urlRequest, error: error) }

    func makeResponse(from response: TransportResponse, decoding: ResponseDecoding) -> AnyResult {
        if let live {
            let result = live.makeResponse(from: response, decoding: decoding)
            guard case .success(let value) = result, var made = value as? MadeValue else { return result }
            made.rawBody = response.body
            return .success(made)
        }
        return Self.make(response.head, body: response.body, maker: maker, typeName: responseTypeName, decoding: decoding)
    }

    /// A registered type made from a response (one received after a restart, or journaled
    /// before it), or why it cannot be.
    static func make(_ head: ResponseHead, body: Data, maker: DurableResponseTypes.Maker?, typeName: String,
                     decoding: ResponseDecoding) -> AnyResult {
        var data = ResponseData(body)
        data.decoding = decoding
        guard let maker else {
            return .failure(.responseTypeNotRegistered(typeName, response: head.httpURLResponse, body: data))
        }
        guard maker.accepts(head) else { return .failure(.validationFailed(head.httpURLResponse, body: data)) }
        do {
            return .success(MadeValue(value: try maker.make(data, head, decoding), head: head, rawBody: body))
        } catch let error as RequestError {
            return .failure(error)
        } catch {
            return .failure(.serializationFailed(type: typeName, underlying: error))
        }
    }
}

/// The response type of a durable request whose type is not registered: any observer may take
/// its result, which is always ``RequestError/responseTypeNotRegistered(_:response:body:)`` or
/// another failure.
enum UnregisteredResponseType {}
