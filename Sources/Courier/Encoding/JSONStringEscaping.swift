import Foundation

extension Array where Element == UInt8 {
    /// Appends `text` as a quoted JSON string (RFC 8259): `"` and `\` escaped, U+0000–U+001F as
    /// `\n`, `\t`, … or `\u00XX`, everything else, non-ASCII included, as its UTF-8 bytes.
    mutating func appendJSONString(_ text: String) {
        append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") { continue }
                if runStart < index {
                    append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                }
                runStart = index + 1
                appendJSONEscape(byte)
            }
            if runStart < bytes.count {
                append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
            }
        }
        append(UInt8(ascii: "\""))
    }

    private mutating func appendJSONEscape(_ byte: UInt8) {
        append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): append(UInt8(ascii: "\\"))
        case 0x0A: append(UInt8(ascii: "n"))
        case 0x0D: append(UInt8(ascii: "r"))
        case 0x09: append(UInt8(ascii: "t"))
        case 0x08: append(UInt8(ascii: "b"))
        case 0x0C: append(UInt8(ascii: "f"))
        default:
            appendASCII("u00")
            append(lowercaseHexDigit(byte >> 4))
            append(lowercaseHexDigit(byte))
        }
    }
}
