import Foundation
import Synchronization

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

/// Bytes written once, by `write`, into storage made for at most `capacity` of them, and only read
/// after: one allocation of the size counted beforehand, each piece copied as one block (appended
/// piece by piece, a small record costs several times as much). Writing past `capacity` stops the
/// program: the caller counted short.
///
/// A `ManagedBuffer` (``ByteBlock``) rather than an `[UInt8]`: an array of uninitialized capacity
/// is made by the standard library's unspecialised path (about 480 instructions, most of them
/// finding the storage's type at run time), this by one `swift_allocObject`. The bytes may also be
/// a range of a larger block that others share (``init(in:at:writingAtMost:_:)``): the memory
/// cache packs its responses into blocks it owns (``PackedBlocks``).
///
/// Safe because: each range of a block is written once, through a ``ByteWriter`` that checks every
/// write against the range reserved for it, by the one value it was reserved for, before that
/// value is shared (a block's other ranges are other bytes); `count` is how many were written, and
/// every read below checks its range against it; the block and pointers into it never leave this
/// type. `Sendable` (which a `ManagedBuffer` is not, being mutable) because no byte a value can
/// read changes once it is made.
struct ByteStorage: @unchecked Sendable {
    private let block: ByteBlock
    private let start: Int
    /// How many bytes were written.
    let count: Int

    init(writingAtMost capacity: Int, _ write: (inout ByteWriter) -> Void) {
        self.init(in: ByteBlock.make(size: capacity, account: nil), at: 0, writingAtMost: capacity, write)
    }

    /// Bytes written into `block` from `start`, at most `capacity` of them: a range that was
    /// reserved for this storage alone (``PackedBlocks/reserve(_:)``), which keeps the block alive.
    init(in block: ByteBlock, at start: Int, writingAtMost capacity: Int, _ write: (inout ByteWriter) -> Void) {
        precondition(start >= 0 && capacity >= 0 && capacity <= block.size - start, "a range past the block's end")
        self.block = block
        self.start = start
        count = block.withUnsafeMutablePointerToElements { elements in
            var writer = ByteWriter(UnsafeMutableBufferPointer(start: elements + start, count: capacity))
            write(&writer)
            return writer.count
        }
    }

    /// The byte at `index`.
    subscript(index: Int) -> UInt8 {
        precondition(index >= 0 && index < count, "byte \(index) read past the \(count) written")
        return block.withUnsafeMutablePointerToElements { $0[start + index] }
    }

    /// The bytes in `range` as UTF-8 text (invalid sequences replaced, as `String(decoding:as:)` does).
    func string(_ range: Range<Int>) -> String {
        withBytes(range) { String(decoding: $0, as: UTF8.self) }
    }

    /// The bytes in `range`, copied.
    func data(_ range: Range<Int>) -> Data {
        withBytes(range) { Data(buffer: $0) }
    }

    /// Whether the bytes in `range` are `text`'s UTF-8.
    func equals(_ range: Range<Int>, _ text: String) -> Bool {
        var text = text
        return withBytes(range) { bytes in text.withUTF8 { $0.elementsEqual(bytes) } }
    }

    private func withBytes<Result>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        precondition(range.lowerBound >= 0 && range.upperBound <= count,
                     "bytes \(range) read past the \(count) written")
        return block.withUnsafeMutablePointerToElements { elements in
            body(UnsafeBufferPointer(start: elements + start + range.lowerBound, count: range.count))
        }
    }
}

/// Memory for ``ByteStorage``: its size and, for a block the memory cache packs responses into, the
/// account of the blocks its store holds (``PackedBlocks``), which it leaves when it is freed (when
/// the last storage in it goes).
final class ByteBlock: ManagedBuffer<ByteBlock.Header, UInt8> {
    struct Header {
        /// The bytes it has room for.
        let size: Int
        let account: BlockAccount?
    }

    static func make(size: Int, account: BlockAccount?) -> ByteBlock {
        account?.add(size)
        // `create` makes an instance of the class it is called on.
        return unsafeDowncast(create(minimumCapacity: size) { _ in Header(size: size, account: account) }, to: ByteBlock.self)
    }

    /// The bytes it has room for. (Read through its address: the header property is a class's
    /// stored `var`, whose reads are checked for exclusive access at run time.)
    var size: Int {
        withUnsafeMutablePointerToHeader { $0.pointee.size }
    }

    deinit {
        withUnsafeMutablePointerToHeader { header in header.pointee.account?.remove(header.pointee.size) }
    }
}

/// The bytes of the blocks a memory store holds, kept up to date as blocks are made and freed (on
/// whichever thread lets go of a block last).
final class BlockAccount: Sendable {
    private let held = Atomic<Int>(0)

    /// The bytes held.
    var bytes: Int { held.load(ordering: .relaxed) }

    func add(_ size: Int) {
        held.add(size, ordering: .relaxed)
    }

    func remove(_ size: Int) {
        held.subtract(size, ordering: .relaxed)
    }
}

/// Writes into the uninitialized storage of bytes being made (``ByteStorage/init(writingAtMost:_:)``).
///
/// Safe because: `count` only grows by what was written, each write first checks that it fits in
/// `buffer` (a precondition, never a write past the end), the writer cannot outlive the closure
/// that lends it the buffer (it cannot be copied, and is lent `inout`), and the storage's count is
/// set to `count`, so no byte is counted that was not initialized.
struct ByteWriter: ~Copyable {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    fileprivate init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    mutating func write(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ write($0) }) == nil { write(Array(text.utf8)) }
    }

    mutating func write(_ data: Data) {
        if data.withContiguousStorageIfAvailable({ write($0) }) == nil { write(Array(data)) }
    }

    /// A length or count as LEB128: 7 bits a byte, low bits first, the high bit set on every byte
    /// but the last (one byte under 128; any `Int` fits).
    mutating func writeLEB128(_ value: Int) {
        var rest = UInt(bitPattern: value)
        while true {
            precondition(count < buffer.count, "bytes written past the capacity counted for them")
            let more = rest >= 0x80
            buffer[count] = UInt8(truncatingIfNeeded: rest) & 0x7F | (more ? 0x80 : 0)
            count += 1
            rest >>= 7
            if !more { return }
        }
    }

    /// Two texts as their lengths (``writeLEB128(_:)``) and then their UTF-8, as a field's name
    /// and value are packed; two short ones (the usual field) with one check.
    ///
    /// Both texts' bytes are in hand before anything is written: a text read after a write
    /// through the buffer was retained and released around it (the write could have changed the
    /// text, for all the optimiser knew), which cost a packing as much as copying the bytes. For
    /// the same reason it is inlined, and the copying path for texts without contiguous UTF-8 (a
    /// lazily bridged `NSString` on Apple platforms) is not.
    @inline(__always)
    mutating func writeLengthsAndBytes(_ first: String, _ second: String) {
        let written = first.utf8.withContiguousStorageIfAvailable { first in
            second.utf8.withContiguousStorageIfAvailable { second in
                writeLengthsAndBytes(first, second)
                return true
            } ?? false
        } ?? false
        if !written { writeLengthsAndBytes(Array(first.utf8), Array(second.utf8)) }
    }

    @inline(never)
    private mutating func writeLengthsAndBytes(_ first: [UInt8], _ second: [UInt8]) {
        first.withUnsafeBufferPointer { first in
            second.withUnsafeBufferPointer { second in writeLengthsAndBytes(first, second) }
        }
    }

    @inline(__always)
    private mutating func writeLengthsAndBytes(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>) {
        if first.count < 0x80, second.count < 0x80, count + 2 <= buffer.count {
            buffer[count] = UInt8(truncatingIfNeeded: first.count)
            buffer[count + 1] = UInt8(truncatingIfNeeded: second.count)
            count += 2
        } else {
            writeLEB128(first.count)
            writeLEB128(second.count)
        }
        write(first)
        write(second)
    }

    /// The bytes ``writeLEB128(_:)`` writes for `value`.
    static func leb128Size(_ value: Int) -> Int {
        var size = 1, rest = UInt(bitPattern: value)
        while rest >= 0x80 {
            size += 1
            rest >>= 7
        }
        return size
    }

    private mutating func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { write($0) }
    }

    @inline(__always)
    private mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        let end = count + bytes.count
        precondition(end <= buffer.count, "bytes written past the capacity counted for them")
        // One `memcpy` (the generic `initialize(fromContentsOf:)` costs several times as much for
        // the short texts of a field). Neither buffer is empty here, so both have an address.
        if !bytes.isEmpty {
            (buffer.baseAddress! + count).initialize(from: bytes.baseAddress!, count: bytes.count)
        }
        count = end
    }
}
