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
final class FixtureRecorder: Transport {
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
            if case .success(let response) = result {
                do {
                    try record(request, response)
                } catch {
                    // A fixture that cannot be written must not pass unnoticed, nor break the app.
                    FileHandle.standardError.write(Data("Courier: \(error)\n".utf8))
                }
            }
            completion(result)
        }
    }

    func invalidate() {
        network.invalidate()
    }

    private func record(_ request: URLRequest, _ response: TransportResponse) throws {
        let match = FixtureMatch(request: request, body: nil)
        var object: [String: Any] = ["method": match.method.rawValue, "path": match.path, "status": response.response.statusCode]
        if !match.query.isEmpty { object["query"] = match.query }
        var headers: [String: String] = [:]
        for (name, value) in response.response.allHeaderFields {
            guard let name = name as? String, let value = value as? String,
                  !Self.skippedHeaders.contains(name.lowercased()) else { continue }
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
