import Foundation

/// The file a ``DiskStore`` keeps one stored response in: its name and its binary format.
///
/// ## Name
/// `<16 hex digits of XXH64(url)>-<16 hex digits of XXH64(variant)>.courier-cache`, lower case,
/// where `variant` is the encoded variant block below (secondary key and credential). The
/// variants of a URL share the first half, so the store finds them in its index of names without
/// opening any other file. Temporary files are `.tmp-<16 hex digits>`, a name the index ignores.
///
/// ## Format, version 1
/// Integers are little-endian; a string is a `UInt32` byte count and its UTF-8 bytes, an
/// optional string has the count `0xFFFF_FFFF` for nil; times are `Float64` bit patterns.
///
/// | bytes | field |
/// | --- | --- |
/// | 8 | magic, ASCII `CourierC` |
/// | 4 | format version, `1` |
/// | 8 | when the store stored it, seconds since 1970 (orders the variants of a URL) |
/// | 8 | ``StoredResponse/requestTime`` |
/// | 8 | ``StoredResponse/responseTime`` |
/// | 8 | ``StoredResponse/statusCode``, signed |
/// | 4 + n | ``StoredResponse/url`` |
/// | 4 + n | variant block: ``StoredResponse/credentialKey`` (optional string), then |
/// | 4 + … | ``StoredResponse/secondaryKey``: a `UInt32` count, then each optional string |
/// | 4 + … | headers: a `UInt32` count, then name and value strings, in order (names may repeat) |
/// | 8 + n | body: a `UInt64` byte count and the bytes |
/// | 8 | checksum: XXH64 (seed 0) of every byte before it |
///
/// The checksum detects torn and corrupt files (a write cut short, a flipped bit, a truncated
/// file); it is no defence against anyone who can write the directory. A reader checks the magic,
/// the version, every length against the bytes left, the checksum and that nothing follows the
/// body; the store then checks that the file's URL and variant hash to its name (a file copied or
/// renamed); any failure makes the file unreadable, and the store deletes it. A sound file whose
/// URL differs from the one asked for but hashes the same (a collision) is passed over, not
/// deleted.
enum CacheEntryFile {
    static let magic: [UInt8] = Array("CourierC".utf8)
    static let version: UInt32 = 1
    static let suffix = ".courier-cache"
    static let temporaryPrefix = ".tmp-"

    /// The bytes before the URL: magic, version, three times and the status.
    private static let fixedHeaderSize = 8 + 4 + 8 + 8 + 8 + 8
    private static let nilLength = UInt32.max

    /// A stored response read back from a file.
    struct Contents {
        var response: StoredResponse
        /// When the store stored it, seconds since 1970.
        var storedAt: Double
        /// The name its URL and variant give it.
        var name: Name
    }

    /// An entry file's name: the hashes of its URL and of its variant.
    struct Name: Hashable, Sendable {
        var urlHash: UInt64
        var variantHash: UInt64

        init(urlHash: UInt64, variantHash: UInt64) {
            self.urlHash = urlHash
            self.variantHash = variantHash
        }

        /// The name of the file that keeps a response.
        init(of response: StoredResponse) {
            urlHash = CacheEntryFile.urlHash(response.url)
            var variant: [UInt8] = []
            CacheEntryFile.appendVariant(of: response, to: &variant)
            variantHash = XXH64.hash(variant)
        }

        /// Parses a file name; nil for any name that is not an entry file's.
        init?(fileName: String) {
            let utf8 = Array(fileName.utf8)
            let suffix = CacheEntryFile.suffix.utf8
            guard utf8.count == 33 + suffix.count, utf8[16] == UInt8(ascii: "-"), utf8[33...].elementsEqual(suffix),
                  let urlHash = Self.parseHex(utf8[0..<16]), let variantHash = Self.parseHex(utf8[17..<33])
            else { return nil }
            self.init(urlHash: urlHash, variantHash: variantHash)
        }

        var fileName: String {
            Self.hex(urlHash) + "-" + Self.hex(variantHash) + CacheEntryFile.suffix
        }

        static func hex(_ value: UInt64) -> String {
            let digits = Array("0123456789abcdef".utf8)
            var bytes = [UInt8](repeating: 0, count: 16)
            for index in 0..<16 {
                bytes[index] = digits[Int(truncatingIfNeeded: value >> (60 - 4 * index)) & 0xF]
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// Sixteen lower-case hex digits; nil for anything else.
        private static func parseHex(_ digits: ArraySlice<UInt8>) -> UInt64? {
            var value: UInt64 = 0
            for digit in digits {
                let nibble: UInt8
                switch digit {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
                default: return nil
                }
                value = value << 4 | UInt64(nibble)
            }
            return value
        }
    }

    static func urlHash(_ url: String) -> UInt64 {
        XXH64.hash(Array(url.utf8))
    }

    // MARK: - Writing

    /// The size of the file that keeps a response; nil when a string is too long for the format.
    static func encodedSize(of response: StoredResponse) -> Int? {
        var total = fixedHeaderSize
        var tooLong = false
        func string(_ value: String?) {
            let count = value?.utf8.count ?? 0
            if count >= Int(nilLength) { tooLong = true }
            total += 4 + count
        }
        string(response.url)
        string(response.credentialKey)
        total += 4
        for value in response.secondaryKey { string(value) }
        total += 4
        for field in response.headers {
            string(field.name)
            string(field.value)
        }
        total += 8 + response.body.count + 8
        return tooLong ? nil : total
    }

    /// The file's bytes (see the format above); the response must have an ``encodedSize(of:)``.
    static func encode(_ response: StoredResponse, storedAt: Double) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encodedSize(of: response) ?? 0)
        bytes.append(contentsOf: magic)
        append(UInt64(version), width: 4, to: &bytes)
        append(storedAt.bitPattern, width: 8, to: &bytes)
        append(response.requestTime.bitPattern, width: 8, to: &bytes)
        append(response.responseTime.bitPattern, width: 8, to: &bytes)
        append(UInt64(bitPattern: Int64(response.statusCode)), width: 8, to: &bytes)
        append(response.url, to: &bytes)
        appendVariant(of: response, to: &bytes)
        append(UInt64(response.headers.count), width: 4, to: &bytes)
        for field in response.headers {
            append(field.name, to: &bytes)
            append(field.value, to: &bytes)
        }
        append(UInt64(response.body.count), width: 8, to: &bytes)
        bytes.append(contentsOf: response.body)
        append(XXH64.hash(bytes), width: 8, to: &bytes)
        return bytes
    }

    /// The variant block: the credential key, then the secondary key.
    static func appendVariant(of response: StoredResponse, to bytes: inout [UInt8]) {
        append(response.credentialKey, to: &bytes)
        append(UInt64(response.secondaryKey.count), width: 4, to: &bytes)
        for value in response.secondaryKey { append(value, to: &bytes) }
    }

    private static func append(_ value: UInt64, width: Int, to bytes: inout [UInt8]) {
        for index in 0..<width {
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index)))
        }
    }

    private static func append(_ string: String?, to bytes: inout [UInt8]) {
        guard let string else {
            append(UInt64(nilLength), width: 4, to: &bytes)
            return
        }
        append(UInt64(string.utf8.count), width: 4, to: &bytes)
        bytes.append(contentsOf: string.utf8)
    }

    // MARK: - Reading

    /// The response a file's bytes keep; nil when they are not a whole, intact version-1 file.
    static func decode(_ bytes: [UInt8]) -> Contents? {
        let end = bytes.count - 8
        guard end >= fixedHeaderSize, bytes[0..<8].elementsEqual(magic),
              littleEndian(bytes, at: 8, width: 4) == UInt64(version),
              XXH64.hash(bytes, 0..<end) == littleEndian(bytes, at: end, width: 8)
        else { return nil }
        var reader = Reader(bytes: bytes, offset: 12, end: end)
        let storedAt = Double(bitPattern: reader.integer(width: 8))
        let requestTime = Double(bitPattern: reader.integer(width: 8))
        let responseTime = Double(bitPattern: reader.integer(width: 8))
        let status = Int(truncatingIfNeeded: Int64(bitPattern: reader.integer(width: 8)))
        let urlStart = reader.offset + 4
        guard let url = reader.string() ?? nil else { return nil }
        let urlHash = XXH64.hash(bytes, urlStart..<reader.offset)
        let variantStart = reader.offset
        guard let credentialKey = reader.string(), let keyCount = reader.count() else { return nil }
        var secondaryKey: [String?] = []
        for _ in 0..<keyCount {
            guard let value = reader.string() else { return nil }
            secondaryKey.append(value)
        }
        let variantHash = XXH64.hash(bytes, variantStart..<reader.offset)
        guard let headerCount = reader.count() else { return nil }
        var headers = HTTPFields()
        for _ in 0..<headerCount {
            guard let name = reader.string() ?? nil, let value = reader.string() ?? nil else { return nil }
            headers.append(value, for: name)
        }
        guard reader.end - reader.offset >= 8, let body = reader.bytes(reader.integer(width: 8)),
              reader.offset == reader.end
        else { return nil }
        let response = StoredResponse(
            url: url, statusCode: status, headers: headers, body: Data(body), requestTime: requestTime,
            responseTime: responseTime, secondaryKey: secondaryKey, credentialKey: credentialKey)
        return Contents(response: response, storedAt: storedAt, name: Name(urlHash: urlHash, variantHash: variantHash))
    }

    /// Reads the fields in order, never past `end`.
    private struct Reader {
        let bytes: [UInt8]
        var offset: Int
        let end: Int

        /// The next integer; the caller has checked that `width` bytes are left.
        mutating func integer(width: Int) -> UInt64 {
            defer { offset += width }
            return littleEndian(bytes, at: offset, width: width)
        }

        /// A count of items of four bytes at least: nil unless the bytes left could hold them.
        mutating func count() -> Int? {
            guard end - offset >= 4 else { return nil }
            let value = integer(width: 4)
            guard value <= (end - offset) / 4 else { return nil }
            return Int(value)
        }

        mutating func bytes(_ count: UInt64) -> ArraySlice<UInt8>? {
            guard count <= UInt64(end - offset) else { return nil }
            defer { offset += Int(count) }
            return bytes[offset..<offset + Int(count)]
        }

        /// An optional string: nil when the bytes end too soon, .some(nil) for a nil string.
        mutating func string() -> String?? {
            guard end - offset >= 4 else { return nil }
            let length = integer(width: 4)
            if length == UInt64(nilLength) { return .some(nil) }
            guard let utf8 = bytes(length) else { return nil }
            return .some(String(decoding: utf8, as: UTF8.self))
        }
    }
}
