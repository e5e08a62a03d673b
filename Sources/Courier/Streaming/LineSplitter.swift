import Foundation

/// Cuts a byte stream into lines at `\n`, dropping a `\r` before it, with a bound on how long a
/// line may grow. Used by ``ResponseStream/lines``.
struct LineSplitter {
    enum Step: Equatable {
        case line(String)
        case tooLong(Int)
        case needMore
    }

    let maximumLength: Int
    private var bytes: [UInt8] = []
    /// Where the next line starts.
    private var start = 0
    /// Bytes from `start` up to here hold no line end.
    private var scanned = 0

    init(maximumLength: Int) {
        self.maximumLength = max(1, maximumLength)
    }

    mutating func append(_ chunk: Data) {
        if start > 0, start >= bytes.count / 2 {
            bytes.removeFirst(start)
            scanned -= start
            start = 0
        }
        bytes.append(contentsOf: chunk)
    }

    mutating func nextLine() -> Step {
        let end = bytes.count
        let newline: Int? = bytes.withUnsafeBufferPointer { buffer in
            var index = scanned
            while index < end {
                if buffer[index] == 0x0A { return index }
                index += 1
            }
            return nil
        }
        guard let newline else {
            scanned = end
            // The line end itself may be one byte further: a line of exactly the limit is allowed.
            return end - start > maximumLength ? .tooLong(maximumLength) : .needMore
        }
        var lineEnd = newline
        if lineEnd > start, bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
        guard lineEnd - start <= maximumLength else { return .tooLong(maximumLength) }
        let line = String(decoding: bytes[start..<lineEnd], as: UTF8.self)
        start = newline + 1
        scanned = start
        return .line(line)
    }

    /// The last line, without a line end, once the body has ended; nil when there is none.
    mutating func finish() -> String? {
        guard start < bytes.count else { return nil }
        let line = String(decoding: bytes[start...], as: UTF8.self)
        start = bytes.count
        scanned = start
        return line
    }
}
