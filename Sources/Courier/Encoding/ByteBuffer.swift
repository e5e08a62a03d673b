import Foundation

// Appending text straight into the output bytes, without intermediate Strings.

extension Array where Element == UInt8 {
    mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { append(contentsOf: $0) }
    }

    mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }

    mutating func appendDecimal(_ value: Int64) {
        if value < 0 {
            append(UInt8(ascii: "-"))
            appendDecimal(value.magnitude)
        } else {
            appendDecimal(UInt64(value))
        }
    }

    mutating func appendDecimal(_ value: UInt64) {
        if value < 10 {
            append(UInt8(truncatingIfNeeded: value) &+ 48)
            return
        }
        var digitCount = 1
        var rest = value
        while rest >= 10 { rest /= 10; digitCount += 1 }
        let start = count
        append(contentsOf: repeatElement(0, count: digitCount))
        withUnsafeMutableBufferPointer { buffer in
            var rest = value
            var index = start + digitCount - 1
            while true {
                let (quotient, digit) = rest.quotientAndRemainder(dividingBy: 10)
                buffer[index] = UInt8(truncatingIfNeeded: digit) &+ 48
                rest = quotient
                if rest == 0 { break }
                index -= 1
            }
        }
    }
}

/// The shortest decimal text that reads back to the same number: integral values without `.0`
/// (`3`, not `3.0`), others as Swift prints them (`0.1`, `1e+16`, `-2.5e-07`), all valid JSON numbers.
func shortestText(_ value: Double) -> String {
    if value.rounded(.towardZero) == value, value.magnitude < 1e15 {
        return value == 0 && value.sign == .minus ? "-0" : String(Int64(value))
    }
    return value.description
}

/// Like ``shortestText(_:)-(Double)`` but shortest for `Float` precision (`Float(0.1)` is `0.1`).
func shortestText(_ value: Float) -> String {
    if value.rounded(.towardZero) == value, value.magnitude < 1e7 {
        return value == 0 && value.sign == .minus ? "-0" : String(Int64(value))
    }
    return value.description
}
