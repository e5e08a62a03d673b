import Foundation

/// A checksum of a journal row's fields that never change (FNV-1a, 64 bits), stored with the row
/// and checked when it is read back.
///
/// SQLite checks the structure of its pages (`quick_check` at open) but not the bytes of the
/// values in them: a flipped byte in a request's URL or body would pass and be sent. With this,
/// such a row is reported as damage (`JournalError.Kind.corrupt`) instead of replayed.
enum JournalChecksum {
    static func of(_ values: [SQLiteValue]) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
        }
        func add(tag: UInt8, length: Int) {
            add(CollectionOfOne(tag))
            add(withUnsafeBytes(of: UInt64(length).littleEndian) { Array($0) })
        }
        // Each value with its type and length, so that ("ab", "c") and ("a", "bc") differ.
        for value in values {
            switch value {
            case .null: add(tag: 0, length: 0)
            case .integer(let integer):
                add(tag: 1, length: 8)
                add(withUnsafeBytes(of: integer.littleEndian) { Array($0) })
            case .real(let real):
                add(tag: 2, length: 8)
                add(withUnsafeBytes(of: real.bitPattern.littleEndian) { Array($0) })
            case .text(let text):
                add(tag: 3, length: text.utf8.count)
                add(text.utf8)
            case .blob(let data):
                add(tag: 4, length: data.count)
                add(data)
            }
        }
        return Int64(bitPattern: hash)
    }
}
