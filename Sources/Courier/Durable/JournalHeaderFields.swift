import Foundation

/// Header fields as the journal stores them: a JSON array of [name, value] pairs, in order.
enum JournalHeaderFields {
    static func encode(_ fields: HTTPFields) -> String {
        let pairs = fields.map { [$0.name, $0.value] }
        // Encoding an array of strings cannot fail.
        guard let data = try? JSONEncoder().encode(pairs) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Nil when the text is not such an array.
    static func decode(_ text: String) -> HTTPFields? {
        guard let pairs = try? JSONDecoder().decode([[String]].self, from: Data(text.utf8)),
              pairs.allSatisfy({ $0.count == 2 }) else { return nil }
        return HTTPFields(pairs.map { HTTPField(name: $0[0], value: $0[1]) })
    }
}
