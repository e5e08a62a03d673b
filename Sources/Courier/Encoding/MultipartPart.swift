import Foundation

/// One part of a ``MultipartFormData``: its boundary line and headers, already rendered, and its content.
struct MultipartPart: Sendable {
    enum Content: Sendable {
        case data(Data)
        case file(URL)
    }

    /// The field name, for error key paths.
    let name: String
    /// `--boundary`, CRLF, the headers, and the empty line that ends them.
    let head: Data
    let content: Content

    init(name: String, fileName: String?, contentType: String?, content: Content, boundary: String) {
        self.name = name
        self.content = content
        var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escaped(name))\""
        if let fileName {
            head += "; filename=\"\(Self.escaped(fileName))\""
        }
        head += "\r\n"
        if let contentType {
            // A type is not quoted, so line breaks are removed rather than escaped.
            head += "Content-Type: \(contentType.filter { $0 != "\r" && $0 != "\n" && $0 != "\r\n" })\r\n"
        }
        head += "\r\n"
        self.head = Data(head.utf8)
    }

    /// A name or file name as the WHATWG HTML spec writes it in a header: `"` as `%22`, CR as `%0D`, LF as `%0A`.
    static func escaped(_ text: String) -> String {
        percentEncoded(text, .multipartName)
    }
}
