import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends requests to the real server and writes each exchange as a fixture file, so a session
/// captured once can be replayed offline with ``FixtureTransport``.
///
/// Files are named after the method and path (`GET-users-1.json`, then `GET-users-1-2.json`…).
/// JSON bodies are stored inline; other bodies as text, or as a `.body` file beside the
/// fixture. `Date`, `Content-Length`, `Connection`, `Keep-Alive`, `Set-Cookie` and
/// `Transfer-Encoding` headers are left out.
///
/// Streams pass through as they arrive and are recorded when they end, with the body that arrived
/// (an event stream cancelled after a few events replays those events), up to
/// ``recordedStreamLimit`` bytes.
final class FixtureRecorder: Transport {
    /// The longest streamed body recorded; a longer one is not recorded, and says so on standard error.
    static let recordedStreamLimit = 16 << 20

    private let network: any Transport
    private let directory: URL
    private let names = Locked<Set<String>>([])
    private static let skippedHeaders: Set<String> = ["date", "content-length", "connection", "keep-alive",
                                                      "set-cookie", "transfer-encoding"]

    init(network: any Transport, directory: URL) {
        self.network = network
        self.directory = directory
    }

    func makeTask(for transportRequest: TransportRequest,
                  completion: @escaping @Sendable (Result<TransportResponse, RequestError>) -> Void) -> any TransportTask {
        let request = transportRequest.urlRequest
        return network.makeTask(for: transportRequest) { [self] result in
            // Files are written off a transport's thread (`TransportHandOver`), which other
            // transfers wait on; the queue then moves the result to its work queue itself.
            if TransportHandOver.isActive {
                return DispatchQueue.global().async { self.recorded(result, of: request, completion: completion) }
            }
            recorded(result, of: request, completion: completion)
        }
    }

    private func recorded(_ result: Result<TransportResponse, RequestError>, of request: URLRequest,
                          completion: @Sendable (Result<TransportResponse, RequestError>) -> Void) {
        do {
            if case .success(let response) = result {
                try record(request, response)
            }
        } catch {
            report("Courier: \(error)")
        }
        completion(result)
    }

    func makeStreamingTask(for transportRequest: TransportRequest, receiver: any TransportStreamReceiver) -> any TransportTask {
        let recording = RecordingReceiver(receiver: receiver) { [self] head, body in
            guard let body else {
                return report("Courier: a stream of \(transportRequest.urlRequest.url?.absoluteString ?? "?") was larger than "
                              + "\(Self.recordedStreamLimit) bytes and was not recorded")
            }
            do {
                try record(transportRequest.urlRequest, TransportResponse(head: head, body: body))
            } catch {
                report("Courier: \(error)")
            }
        }
        return network.makeStreamingTask(for: transportRequest, receiver: recording)
    }

    func invalidate() {
        network.invalidate()
    }

    private func report(_ message: String) {
        // A fixture that cannot be written must not pass unnoticed, nor break the app.
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    private func record(_ request: URLRequest, _ response: TransportResponse) throws {
        let match = FixtureMatch(request: request, body: nil)
        var object: [String: Any] = ["method": match.method.rawValue, "path": match.path, "status": response.head.status]
        if !match.query.isEmpty { object["query"] = match.query }
        var headers: [String: String] = [:]
        for (name, value) in response.head.fieldDictionary where !Self.skippedHeaders.contains(name.lowercased()) {
            headers[name] = value
        }
        let base = fileName(for: match)
        if let json = try? JSONSerialization.jsonObject(with: response.body, options: [.fragmentsAllowed]), !response.body.isEmpty {
            object["json"] = json
            headers = headers.filter { $0.key.lowercased() != "content-type" || !$0.value.contains("application/json") }
        } else if let text = String(data: response.body, encoding: .utf8) {
            if !text.isEmpty { object["body"] = text }
        } else {
            let bodyName = base + ".body"
            try write(response.body, to: directory.appendingPathComponent(bodyName))
            object["bodyFile"] = bodyName
        }
        if !headers.isEmpty { object["headers"] = headers }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        try write(data, to: directory.appendingPathComponent(base + ".json"))
    }

    /// A new file name for this request: METHOD-path, then -2, -3… for later ones.
    private func fileName(for match: FixtureMatch) -> String {
        let slug = match.path.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-")
        let stem = "\(match.method.rawValue)-\(slug.isEmpty ? "root" : slug)"
        return names.withLock { names in
            var name = stem, number = 1
            while names.contains(name) || FileManager.default.fileExists(atPath: directory.appendingPathComponent(name + ".json").path) {
                number += 1
                name = "\(stem)-\(number)"
            }
            names.insert(name)
            return name
        }
    }

    private func write(_ data: Data, to file: URL) throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try data.write(to: file, options: .atomic)
        } catch {
            throw FixtureError.cannotWrite(file.path, reason: error.localizedDescription)
        }
    }
}

/// Passes a stream on as it arrives and keeps a copy of its body, handed over once the stream
/// ends after its head (nil for a body over the recording limit).
private final class RecordingReceiver: TransportStreamReceiver {
    private struct Copy {
        var head: ResponseHead?
        var body: Data? = Data()
    }

    private let receiver: any TransportStreamReceiver
    private let copy = Locked(Copy())
    private let recorded: @Sendable (ResponseHead, Data?) -> Void

    init(receiver: any TransportStreamReceiver, recorded: @escaping @Sendable (ResponseHead, Data?) -> Void) {
        self.receiver = receiver
        self.recorded = recorded
    }

    func transportDidReceive(_ response: HTTPURLResponse) {
        copy.withLock { $0.head = ResponseHead(response) }
        receiver.transportDidReceive(response)
    }

    func transportDidReceive(_ head: ResponseHead) {
        copy.withLock { $0.head = head }
        receiver.transportDidReceive(head)
    }

    func transportDidReceive(_ chunk: Data) -> TransportDemand {
        copy.withLock { copy in
            guard let count = copy.body?.count else { return }
            if count + chunk.count > FixtureRecorder.recordedStreamLimit {
                copy.body = nil
            } else {
                copy.body!.append(chunk)
            }
        }
        return receiver.transportDidReceive(chunk)
    }

    func transportDidComplete(_ error: RequestError?) {
        let (head, body) = copy.withLock { ($0.head, $0.body) }
        if let head { recorded(head, body) }
        receiver.transportDidComplete(error)
    }
}
