import Foundation

// The library's one percent-encoder and one table of hexadecimal digits. Query strings and forms,
// URL paths written by hand, multipart names and JSON's `\u00XX` escapes all write hex through
// here, so they cannot drift apart.

/// Hexadecimal digits, uppercase as RFC 3986 §2.1 recommends for percent-encoding. A literal of
/// constants, so the compiler lays the table out statically instead of building it lazily.
private let hexDigits: [UInt8] = [
    UInt8(ascii: "0"), UInt8(ascii: "1"), UInt8(ascii: "2"), UInt8(ascii: "3"), UInt8(ascii: "4"), UInt8(ascii: "5"),
    UInt8(ascii: "6"), UInt8(ascii: "7"), UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "A"), UInt8(ascii: "B"),
    UInt8(ascii: "C"), UInt8(ascii: "D"), UInt8(ascii: "E"), UInt8(ascii: "F"),
]

/// The hexadecimal digit of the low four bits of `nibble`, uppercase.
func hexDigit(_ nibble: UInt8) -> UInt8 {
    hexDigits[Int(nibble & 0x0F)]
}

/// The hexadecimal digit of the low four bits of `nibble`, lowercase, as JSON escapes are written.
/// Setting bit 0x20 lowercases `A`–`F` and leaves `0`–`9` (0x30–0x39) as they are, so one table serves both.
func lowercaseHexDigit(_ nibble: UInt8) -> UInt8 {
    hexDigit(nibble) | 0x20
}

/// Whether `byte` is `0`–`9`, `a`–`f` or `A`–`F`.
func isHexDigit(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
    default: false
    }
}

/// A set of bytes, as a table of 256 flags: testing a byte in the percent-encoder's loop is one
/// load from a table the loop holds on to.
struct ByteSet: Sendable {
    fileprivate let table: [Bool]

    /// The ASCII bytes of `characters` (non-ASCII ones are ignored), and the non-ASCII bytes (UTF-8
    /// lead and continuation bytes) only if `includingNonASCII`.
    init(_ characters: String, includingNonASCII: Bool = false) {
        var table = [Bool](repeating: false, count: 256)
        for byte in characters.utf8 where byte < 128 { table[Int(byte)] = true }
        if includingNonASCII {
            for byte in 128..<256 { table[byte] = true }
        }
        self.table = table
    }

    /// Every byte except the ASCII bytes of `characters`.
    init(allExcept characters: String) {
        var table = [Bool](repeating: true, count: 256)
        for byte in characters.utf8 where byte < 128 { table[Int(byte)] = false }
        self.table = table
    }

    func contains(_ byte: UInt8) -> Bool {
        table[Int(byte)]
    }
}

/// How text is percent-encoded: the bytes that stand as they are; every other byte becomes `%XX`.
struct PercentEncoding: Sendable {
    /// The bytes written as they are.
    let allowed: ByteSet
    /// Whether a space is written `+` (HTML forms) rather than `%20`; a literal `+` is then escaped
    /// like any byte outside `allowed`.
    var spaceAsPlus = false
    /// Whether a `%` that starts an escape (`%` and two hex digits) is kept, so text a caller has
    /// escaped already is not escaped twice; any other `%` becomes `%25`.
    var keepsEscapes = false

    /// RFC 3986 unreserved characters, `A–Z a–z 0–9 - . _ ~`: query strings and forms, keys and values.
    static let unreserved = PercentEncoding(allowed: ByteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))
    /// ``unreserved`` with a space as `+`.
    static let unreservedSpaceAsPlus = PercentEncoding(allowed: unreserved.allowed, spaceAsPlus: true)
    /// A URL path written by hand: RFC 3986 `pchar` and `/` stand as they are, escapes are kept.
    static let urlPath = PercentEncoding(
        allowed: ByteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/"), keepsEscapes: true)
    /// A query written into a URL path by hand: ``urlPath``'s characters and `?`, escapes kept.
    static let urlQuery = PercentEncoding(
        allowed: ByteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?"), keepsEscapes: true)
    /// A multipart part's name or file name in its quoted header (WHATWG HTML): only `"`, CR and
    /// LF are escaped, so a name cannot end its quotes or forge a header; `%` and UTF-8 stand as they are.
    static let multipartName = PercentEncoding(allowed: ByteSet(allExcept: "\"\r\n"))

    /// ``unreserved``, with a space as `+` if `spaceAsPlus`.
    static func unreserved(spaceAsPlus: Bool) -> PercentEncoding {
        spaceAsPlus ? unreservedSpaceAsPlus : unreserved
    }
}

extension Array where Element == UInt8 {
    /// Appends `bytes` percent-encoded: runs of allowed bytes are copied at once, every other byte
    /// is escaped.
    mutating func appendPercentEncoded(_ bytes: UnsafeBufferPointer<UInt8>, _ encoding: PercentEncoding) {
        encoding.allowed.table.withUnsafeBufferPointer { allowed in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                if allowed[Int(byte)] { continue }
                if encoding.keepsEscapes, byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                   isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) {
                    continue
                }
                if runStart < index {
                    append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                }
                runStart = index + 1
                if byte == UInt8(ascii: " "), encoding.spaceAsPlus {
                    append(UInt8(ascii: "+"))
                } else {
                    append(UInt8(ascii: "%"))
                    append(hexDigit(byte >> 4))
                    append(hexDigit(byte))
                }
            }
            if runStart < bytes.count {
                append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
            }
        }
    }

    mutating func appendPercentEncoded(_ text: String, _ encoding: PercentEncoding) {
        var text = text
        text.withUTF8 { appendPercentEncoded($0, encoding) }
    }
}

/// `text` percent-encoded as `encoding` says.
func percentEncoded(_ text: String, _ encoding: PercentEncoding) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    bytes.appendPercentEncoded(text, encoding)
    return String(decoding: bytes, as: UTF8.self)
}
