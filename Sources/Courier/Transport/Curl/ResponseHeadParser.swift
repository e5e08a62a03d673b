#if os(Linux)
import Synchronization

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

    /// The fields of the last complete head of any transfer, and two more. Read and written
    /// without order: a stale or mixed value only sizes an array.
    private static let expectedFieldCount = Atomic<Int>(16)

    private var status: Int?
    private var version = ""
    private var fields: [HTTPField] = []
    private var size = 0
    /// The final head, once its empty line arrived.
    private(set) var head: ParsedHead?

    /// Whether a whole head has been read (cheaper to ask than to copy `head`, once per line).
    var isComplete: Bool { head != nil }

    /// Takes one line, with its line ending, from any collection of bytes (tests): copied once
    /// and read as ``consume(_:)-(UnsafeRawBufferPointer)``.
    mutating func consume(_ line: some Collection<UInt8>) throws(Failure) {
        let result: Result<Void, Failure> = Array(line).withUnsafeBytes { bytes in
            Result { () throws(Failure) in try consume(bytes) }
        }
        try result.get()
    }

    /// Takes one line, with its line ending, as libcurl hands it over.
    ///
    /// Worked on as bytes, by offset into the buffer: one pass over each line, no Character or
    /// Unicode machinery and no slices (this runs for every header line of every response, on the
    /// transport's one thread; a generic slice's `firstIndex(of:)` alone cost more than the rest).
    /// Safe as unchecked reads go: every offset read is below the count of the buffer it reads,
    /// by the loop or guard that reaches it, and nothing keeps the buffer past the call (the
    /// strings made from it are copies).
    mutating func consume(_ line: UnsafeRawBufferPointer) throws(Failure) {
        size += line.count
        guard size <= Self.maximumSize else { throw .headTooLarge(limit: Self.maximumSize) }
        if head != nil {
            // After a complete head, a status line is the next response of the same transfer
            // (libcurl answering an authentication challenge); anything else is a trailer.
            guard Self.isStatusLine(line) else { return }
            head = nil
        }
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        let text = UnsafeRawBufferPointer(rebasing: line[0..<end])
        if text.isEmpty {
            guard let status else { throw .missingStatusLine }
            if (100...199).contains(status) {
                // An informational head (100 Continue, 103 Early Hints): the real one follows.
                self.status = nil
                fields = []
            } else {
                head = ParsedHead(status: status, version: version, fields: fields)
                Self.expectedFieldCount.store(min(fields.count + 2, 64), ordering: .relaxed)
            }
            return
        }
        if Self.isStatusLine(text) {
            try startHead(text)
            return
        }
        guard status != nil else { throw .missingStatusLine }
        if text[0] == 0x20 || text[0] == 0x09 {
            // An obsolete folded continuation (RFC 9112 §5.2): joined to the previous field.
            guard !fields.isEmpty else { throw .malformedField(String(decoding: text, as: UTF8.self)) }
            fields[fields.count - 1].value += " " + Self.trimmed(text, from: 0)
            return
        }
        var colon = 0
        while colon < text.count, text[colon] != 0x3A {
            guard HTTPSyntax.isTokenByte(text[colon]) else { throw .malformedField(String(decoding: text, as: UTF8.self)) }
            colon += 1
        }
        guard colon > 0, colon < text.count else { throw .malformedField(String(decoding: text, as: UTF8.self)) }
        guard fields.count < Self.maximumFieldCount else { throw .tooManyFields(limit: Self.maximumFieldCount) }
        fields.append(HTTPField(name: String(decoding: UnsafeRawBufferPointer(rebasing: text[0..<colon]), as: UTF8.self),
                                value: Self.trimmed(text, from: colon + 1)))
    }

    /// Whether `line` starts with "HTTP/"; its first byte decides for every header line.
    private static func isStatusLine(_ line: UnsafeRawBufferPointer) -> Bool {
        line.count >= 5 && line[0] == UInt8(ascii: "H") && line[1] == UInt8(ascii: "T") && line[2] == UInt8(ascii: "T")
            && line[3] == UInt8(ascii: "P") && line[4] == UInt8(ascii: "/")
    }

    /// The bytes from `start` on as text, without leading and trailing spaces and tabs.
    private static func trimmed(_ bytes: UnsafeRawBufferPointer, from start: Int) -> String {
        var start = start, end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    /// "HTTP/1.1 200 OK", "HTTP/2 204": a version, a three-digit status, an optional reason.
    /// Checked as bytes: as Characters, a combining mark after "HTTP/" would join the slash and
    /// pass for part of the version.
    private mutating func startHead(_ line: UnsafeRawBufferPointer) throws(Failure) {
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        var malformed: Failure { .malformedStatusLine(String(decoding: line, as: UTF8.self)) }
        var space = 5
        while space < line.count, line[space] != 0x20 {
            guard isDigit(line[space]) || line[space] == UInt8(ascii: ".") else { throw malformed }
            space += 1
        }
        guard space > 5, space < line.count else { throw malformed }
        let statusStart = space + 1
        guard line.count >= statusStart + 3, line.count == statusStart + 3 || line[statusStart + 3] == 0x20 else { throw malformed }
        var code = 0
        for index in statusStart..<(statusStart + 3) {
            guard isDigit(line[index]) else { throw malformed }
            code = code * 10 + Int(line[index] - UInt8(ascii: "0"))
        }
        guard code >= 100 else { throw malformed }
        status = code
        version = String(decoding: UnsafeRawBufferPointer(rebasing: line[0..<space]), as: UTF8.self)
        // Room for the fields the last head had and two more: growing one at a time reallocated
        // five times, and a fixed 16 left half the room empty in every response the cache keeps.
        fields = []
        fields.reserveCapacity(Self.expectedFieldCount.load(ordering: .relaxed))
    }
}
#endif
