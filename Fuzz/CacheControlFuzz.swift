// libFuzzer target for the Cache-Control parser (Sources/Courier/Cache/CacheControl.swift), built
// and run by Scripts/fuzz.sh. The input is cut at line feeds into field values, as several
// Cache-Control lines. Whatever they hold, the parser must not crash, and:
// - every value keeps its bounds (delta-seconds in 0…2^31, field names lowercased tokens);
// - writing the directives back and parsing that gives the same directives;
// - the lines joined with ", " give the same directives as the lines apart, when no quoted
//   string can run from one line into the next (no `"` in the input);
// - names are case-insensitive: the input with ASCII letters uppercased gives the same directives.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCacheControl(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    let directives = CacheControl(fieldValues: lines)

    let deltas = [directives.maxAge, directives.sharedMaxAge, directives.staleWhileRevalidate, directives.staleIfError,
                  directives.minFresh]
    for case let value? in deltas {
        precondition((0...CacheControl.maximumDeltaSeconds).contains(value), "delta-seconds out of range: \(value)")
    }
    if case .seconds(let value)? = directives.maxStale {
        precondition((0...CacheControl.maximumDeltaSeconds).contains(value))
    }
    if directives.hasInvalidFreshness {
        precondition(directives.maxAge == nil || directives.sharedMaxAge == nil)
    }
    for case .fields(let names)? in [directives.noCache, directives.privateScope] {
        for name in names {
            precondition(!name.isEmpty && name.utf8.allSatisfy { byte in
                !(65...90).contains(byte) && byte > 0x20 && byte < 0x7F && !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte)
            }, "not a lowercased token: \(name)")
        }
    }

    let written = directives.fieldValue
    let reread = CacheControl(written)
    precondition(reread == directives, "\(written) reads back as \(reread.fieldValue)")
    precondition(reread.fieldValue == written)

    if !bytes.contains(UInt8(ascii: "\"")) {
        let joined = CacheControl(lines.joined(separator: ", "))
        precondition(joined == directives, "joined: \(joined.fieldValue) apart: \(written)")
    }

    let uppercased = bytes.map { (97...122).contains($0) ? $0 - 32 : $0 }
    let upper = CacheControl(fieldValues: uppercased.split(separator: 0x0A, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) })
    precondition(upper == directives, "uppercased: \(upper.fieldValue) as is: \(written)")
    return 0
}
