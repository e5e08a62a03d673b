#if os(Linux)

/// A response head as a server sent it: status, version, and header fields in order.
struct ParsedHead: Equatable, Sendable {
    var status: Int
    /// "HTTP/1.1", "HTTP/2"…
    var version: String
    /// As the server wrote them: names in its spelling, in its order, repeated names kept.
    var fields: [HTTPField]

    /// Every value of a field, its name compared case-insensitively (ASCII, as field names are), in order.
    func values(of name: String) -> [String] {
        fields.filter { HTTPSyntax.namesEqual($0.name, name) }.map(\.value)
    }

    /// The last value of the field `name`, if it has one: without an array.
    func lastValue(of name: String) -> String? {
        fields.last { HTTPSyntax.namesEqual($0.name, name) }?.value
    }
}

/// Builds the response head from the header lines libcurl hands over, one at a time: status
/// lines, fields, folded continuations and the empty line that ends a head. Informational heads
/// (1xx) are skipped, and so is a head that another one follows (libcurl answering a Basic or
/// Digest challenge); lines after the final head (trailers) are counted but not kept.
///
/// Bounds, so that a hostile server cannot make the client buffer without end: at most
/// ``maximumSize`` bytes of head lines in all (1xx heads and trailers included) and
/// ``maximumFieldCount`` fields in the final head. Anything malformed or over a bound is a
/// ``Failure`` naming what the server did wrong.
struct ResponseHeadParser {
    /// 256 KiB of head lines in all, four times what most servers accept in a request head.
    static let maximumSize = 256 * 1024
    /// 1,000 header fields.
    static let maximumFieldCount = 1_000

    enum Failure: Error, Equatable, Sendable {
        case malformedStatusLine(String)
        case malformedField(String)
        case headTooLarge(limit: Int)
        case tooManyFields(limit: Int)
        case missingStatusLine

        /// A sentence for the error a user sees.
        var reason: String {
            switch self {
            case .malformedStatusLine(let line): "the server sent a malformed status line: \(line.debugEscaped.truncatedForMessages)"
            case .malformedField(let line): "the server sent a malformed header line: \(line.debugEscaped.truncatedForMessages)"
            case .headTooLarge(let limit): "the server's response head is larger than \(limit) bytes"
            case .tooManyFields(let limit): "the server's response head has more than \(limit) header fields"
            case .missingStatusLine: "the server sent header lines without a status line"
            }
        }
    }

    private var status: Int?
    private var version = ""
    private var fields: [HTTPField] = []
    private var size = 0
    /// The final head, once its empty line arrived.
    private(set) var head: ParsedHead?

    /// Whether a whole head has been read (cheaper to ask than to copy `head`, once per line).
    var isComplete: Bool { head != nil }

    /// Takes one line, with its line ending.
    mutating func consume<Bytes: BidirectionalCollection<UInt8>>(_ line: Bytes) throws(Failure) {
        size += line.count
        guard size <= Self.maximumSize else { throw .headTooLarge(limit: Self.maximumSize) }
        if head != nil {
            // After a complete head, a status line is the next response of the same transfer
            // (libcurl answering an authentication challenge); anything else is a trailer.
            guard Self.isStatusLine(line) else { return }
            head = nil
        }
        // Worked on as bytes: one pass over each line, no Character or Unicode machinery (this
        // runs for every header line of every response, on the transport's one thread).
        var end = line.endIndex
        while end > line.startIndex {
            let before = line.index(before: end)
            guard line[before] == 0x0A || line[before] == 0x0D else { break }
            end = before
        }
        let text = line[..<end]
        if text.isEmpty {
            guard let status else { throw .missingStatusLine }
            if (100...199).contains(status) {
                // An informational head (100 Continue, 103 Early Hints): the real one follows.
                self.status = nil
                fields = []
            } else {
                head = ParsedHead(status: status, version: version, fields: fields)
            }
            return
        }
        if Self.isStatusLine(text) {
            try startHead(text)
            return
        }
        guard status != nil else { throw .missingStatusLine }
        if let first = text.first, first == 0x20 || first == 0x09 {
            // An obsolete folded continuation (RFC 9112 §5.2): joined to the previous field.
            guard !fields.isEmpty else { throw .malformedField(String(decoding: text, as: UTF8.self)) }
            fields[fields.count - 1].value += " " + Self.trimmed(text)
            return
        }
        guard let colon = text.firstIndex(of: 0x3A) else { throw .malformedField(String(decoding: text, as: UTF8.self)) }
        let name = text[..<colon]
        guard !name.isEmpty, name.allSatisfy(HTTPSyntax.isTokenByte) else {
            throw .malformedField(String(decoding: text, as: UTF8.self))
        }
        guard fields.count < Self.maximumFieldCount else { throw .tooManyFields(limit: Self.maximumFieldCount) }
        fields.append(HTTPField(name: String(decoding: name, as: UTF8.self),
                                value: Self.trimmed(text[text.index(after: colon)...])))
    }

    /// The bytes as text, without leading and trailing spaces and tabs.
    /// Whether `line` starts with "HTTP/"; its first byte decides for every header line.
    private static func isStatusLine<Bytes: BidirectionalCollection<UInt8>>(_ line: Bytes) -> Bool {
        line.first == UInt8(ascii: "H") && line.starts(with: "HTTP/".utf8)
    }

    private static func trimmed<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> String {
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start = bytes.index(after: start) }
        while end > start {
            let before = bytes.index(before: end)
            guard bytes[before] == 0x20 || bytes[before] == 0x09 else { break }
            end = before
        }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// "HTTP/1.1 200 OK", "HTTP/2 204": a version, a three-digit status, an optional reason.
    /// Checked as bytes: as Characters, a combining mark after "HTTP/" would join the slash and
    /// pass for part of the version.
    private mutating func startHead<Bytes: BidirectionalCollection<UInt8>>(_ line: Bytes) throws(Failure) {
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        var malformed: Failure { .malformedStatusLine(String(decoding: line, as: UTF8.self)) }
        guard let space = line.firstIndex(of: 0x20) else { throw malformed }
        let versionBytes = line[..<space]
        guard versionBytes.count > 5, versionBytes.dropFirst(5).allSatisfy({ isDigit($0) || $0 == UInt8(ascii: ".") }) else {
            throw malformed
        }
        let statusStart = line.index(after: space)
        let statusBytes = line[statusStart..<(line[statusStart...].firstIndex(of: 0x20) ?? line.endIndex)]
        guard statusBytes.count == 3, statusBytes.allSatisfy(isDigit) else { throw malformed }
        let code = statusBytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard code >= 100 else { throw malformed }
        status = code
        version = String(decoding: versionBytes, as: UTF8.self)
        // Room for a typical head's fields, which growing one at a time reallocated five times.
        fields = []
        fields.reserveCapacity(16)
    }
}
#endif
