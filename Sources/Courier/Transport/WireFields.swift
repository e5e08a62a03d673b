import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TransportRequest {
    /// The request's header fields as lines on the wire: the request's own fields in the order it
    /// gave them, each line of a repeated name apart, then the other fields of `urlRequest` (the
    /// session's, the queue's, the delegates') sorted by name.
    ///
    /// `urlRequest` stays the one truth: a name's separate lines are sent only while its value
    /// there is still their join, as the queue set it. A delegate or an authenticator that changed
    /// or removed the field, or a redirect that dropped it, wins: the changed value goes as one
    /// line, and a removed field not at all.
    var wireFields: [HTTPField] {
        let current = urlRequest.allHTTPHeaderFields ?? [:]
        guard !headerFields.isEmpty else {
            return current.sorted { $0.key < $1.key }.map { HTTPField(name: $0.key, value: $0.value) }
        }
        var lines: [HTTPField] = []
        lines.reserveCapacity(current.count + headerFields.count)
        // Lowercased names already placed, and whether their lines go apart.
        var placed: [String: Bool] = [:]
        for field in headerFields {
            let key = field.name.lowercased()
            if let apart = placed[key] {
                if apart { lines.append(field) }
                continue
            }
            guard let value = urlRequest.value(forHTTPHeaderField: field.name) else {
                placed[key] = false
                continue
            }
            let apart = headerFields[field.name] == value
            placed[key] = apart
            lines.append(apart ? field : HTTPField(name: field.name, value: value))
        }
        for (name, value) in current.sorted(by: { $0.key < $1.key }) where placed[name.lowercased()] == nil {
            lines.append(HTTPField(name: name, value: value))
        }
        return lines
    }
}
