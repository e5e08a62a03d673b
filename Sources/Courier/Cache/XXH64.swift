/// XXH64, the 64-bit xxHash of Yann Collet (https://github.com/Cyan4973/xxHash, its
/// specification `doc/xxhash_spec.md`), in safe Swift: stable across platforms, processes and
/// versions, which Swift's own `Hasher` (seeded per process) is not. Fast (several GB/s in a
/// release build) and well mixed, not cryptographic: it names and checks cache files, it does not
/// resist anyone who wants a collision.
enum XXH64 {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The hash of all the bytes.
    static func hash(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        hash(bytes, 0..<bytes.count, seed: seed)
    }

    /// The hash of the bytes in a range.
    static func hash(_ bytes: [UInt8], _ range: Range<Int>, seed: UInt64 = 0) -> UInt64 {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        let end = range.upperBound
        var offset = range.lowerBound
        var hash: UInt64
        if range.count >= 32 {
            var v1 = seed &+ prime1 &+ prime2
            var v2 = seed &+ prime2
            var v3 = seed
            var v4 = seed &- prime1
            while end - offset >= 32 {
                v1 = round(v1, littleEndian(bytes, at: offset, width: 8))
                v2 = round(v2, littleEndian(bytes, at: offset + 8, width: 8))
                v3 = round(v3, littleEndian(bytes, at: offset + 16, width: 8))
                v4 = round(v4, littleEndian(bytes, at: offset + 24, width: 8))
                offset += 32
            }
            hash = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
            hash = merge(hash, v1)
            hash = merge(hash, v2)
            hash = merge(hash, v3)
            hash = merge(hash, v4)
        } else {
            hash = seed &+ prime5
        }
        hash &+= UInt64(range.count)
        while end - offset >= 8 {
            hash = rotate(hash ^ round(0, littleEndian(bytes, at: offset, width: 8)), 27) &* prime1 &+ prime4
            offset += 8
        }
        if end - offset >= 4 {
            hash = rotate(hash ^ (littleEndian(bytes, at: offset, width: 4) &* prime1), 23) &* prime2 &+ prime3
            offset += 4
        }
        while offset < end {
            hash = rotate(hash ^ (UInt64(bytes[offset]) &* prime5), 11) &* prime1
            offset += 1
        }
        hash ^= hash >> 33
        hash &*= prime2
        hash ^= hash >> 29
        hash &*= prime3
        hash ^= hash >> 32
        return hash
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        rotate(accumulator &+ input &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        value << count | value >> (64 - count)
    }

    @inline(__always)
    private static func merge(_ hash: UInt64, _ lane: UInt64) -> UInt64 {
        (hash ^ round(0, lane)) &* prime1 &+ prime4
    }
}

/// The unsigned little-endian integer of `width` bytes at `offset` (the hash's lanes, and the
/// integers of ``CacheEntryFile``).
@inline(__always)
func littleEndian(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64 {
    var value: UInt64 = 0
    for index in (0..<width).reversed() {
        value = value << 8 | UInt64(bytes[offset + index])
    }
    return value
}
