import Foundation

// libFuzzer target for the HTTP date parser and formatter (Sources/Courier/Cache/HTTPDate.swift),
// built and run by Scripts/fuzz.sh. Whatever the input, nothing crashes, and:
// - a date the parser accepts lies in years 0…9999 (plus a leap second at the very end), and
//   formatting it gives an IMF-fixdate that parses back to it;
// - an accepted IMF-fixdate is the formatted date up to the case of its names and its weekday
//   (which the parser does not check), unless its seconds are a leap second;
// - whitespace around a value changes nothing;
// - the first 8 bytes, read as seconds since 1970, format (clamped to years 0…9999) as 29 bytes
//   that parse back to the clamped seconds.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPDate(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    let now = Date(timeIntervalSince1970: 1_780_272_000)
    let parsed = HTTPDate.parse(text, now: now)
    precondition(HTTPDate.parse(" \t" + text + "\t ", now: now) == parsed, "whitespace changed \(text.debugDescription)")
    if let seconds = parsed {
        precondition(seconds >= HTTPDate.earliest && seconds <= HTTPDate.latest + 1, "out of range: \(seconds)")
        if seconds <= HTTPDate.latest {
            let formatted = HTTPDate.format(secondsSince1970: seconds)
            precondition(HTTPDate.parse(formatted, now: now) == seconds, "\(formatted) does not parse back to \(seconds)")
            let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            if trimmed.utf8.count == 29, Array(trimmed.utf8)[3] == UInt8(ascii: ","), !trimmed.contains(":60 ") {
                precondition(trimmed.lowercased().dropFirst(3) == formatted.lowercased().dropFirst(3),
                             "\(trimmed.debugDescription) formats as \(formatted)")
            }
        }
    }
    if bytes.count >= 8 {
        let raw = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let seconds = Int64(bitPattern: raw)
        let clamped = min(max(seconds, HTTPDate.earliest), HTTPDate.latest)
        let formatted = HTTPDate.format(secondsSince1970: seconds)
        precondition(formatted.utf8.count == 29, formatted)
        precondition(HTTPDate.parse(formatted, now: now) == clamped, "\(formatted) does not parse back to \(clamped)")
        precondition(HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(clamped))) == formatted)
    }
    return 0
}
