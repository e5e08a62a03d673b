import Foundation

/// RFC 3986 unreserved characters (`A–Z a–z 0–9 - . _ ~`) are 1; every other byte is escaped.
/// A table keeps the per-byte test to one load.
private let unreservedTable: [Bool] = (0...255).map { byte in
    switch UInt8(byte) {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
        UInt8(ascii: "_"), UInt8(ascii: "~"):
        true
    default:
        false
    }
}

private let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

extension Array where Element == UInt8 {
    /// Appends `bytes` percent-encoded: unreserved bytes as they are, a space as `+` when
    /// `plusForSpace`, everything else (non-ASCII UTF-8 bytes included) as `%XX`.
    mutating func appendPercentEncoded(_ bytes: UnsafeBufferPointer<UInt8>, plusForSpace: Bool) {
        unreservedTable.withUnsafeBufferPointer { table in
            hexDigits.withUnsafeBufferPointer { hex in
                var runStart = 0
                for index in 0..<bytes.count {
                    let byte = bytes[index]
                    if table[Int(byte)] { continue }
                    if runStart < index {
                        append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                    }
                    runStart = index + 1
                    if byte == 0x20, plusForSpace {
                        append(UInt8(ascii: "+"))
                    } else {
                        append(UInt8(ascii: "%"))
                        append(hex[Int(byte >> 4)])
                        append(hex[Int(byte & 0x0F)])
                    }
                }
                if runStart < bytes.count {
                    append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
                }
            }
        }
    }

    mutating func appendPercentEncoded(_ text: String, plusForSpace: Bool) {
        var text = text
        text.withUTF8 { appendPercentEncoded($0, plusForSpace: plusForSpace) }
    }
}

/// `text` percent-encoded with spaces as `%20`.
func percentEncoded(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.appendPercentEncoded(text, plusForSpace: false)
    return bytes
}
