// libFuzzer target for Vary and secondary keys (Sources/Courier/Cache/Vary.swift), built and run
// by Scripts/fuzz.sh. The input's lines are both Vary field values and request header lines
// (`name:value`). Whatever they hold, nothing crashes, and:
// - the names are sorted, unique, lowercased tokens, never `*`; writing them back and parsing
//   that gives the same Vary;
// - a secondary key has one entry per name, each normalised (normalising again changes nothing,
//   no whitespace at either end), and the request matches its own key;
// - normalising is idempotent for every line;
// - the lines as repeated `Vary` fields of a response give the same Vary.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVary(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    let vary = Vary(fieldValues: lines)
    precondition(Vary(vary.fieldValue) == vary, "\(vary.fieldValue) reads back differently")
    // The lines as a response's repeated `Vary` fields read as one list, whatever the name's case.
    precondition(Vary(of: HTTPFields(lines.map { HTTPField(name: "vary", value: $0) })) == vary, "lines read apart")

    var headers: [String: String] = [:]
    for line in lines {
        let normalized = Vary.normalized(line)
        precondition(Vary.normalized(normalized) == normalized, "normalising \(line.debugDescription) twice")
        if let colon = line.firstIndex(of: ":") {
            headers[String(line[..<colon])] = String(line[line.index(after: colon)...])
        }
    }

    switch vary {
    case .everything:
        precondition(vary.secondaryKey(for: headers) == nil)
        precondition(!vary.matches([], headers: headers))
    case .fields(let names):
        precondition(names == Array(Set(names)).sorted(), "not sorted and unique: \(names)")
        for name in names {
            precondition(!name.isEmpty && name != "*" && name == name.lowercased() && !name.contains(" "))
        }
        guard let key = vary.secondaryKey(for: headers) else { preconditionFailure("fields without a key") }
        precondition(key.count == names.count)
        for case let value? in key {
            precondition(Vary.normalized(value) == value, "key value not normalised: \(value.debugDescription)")
            precondition(value.first != " " && value.last != " " && value.first != "\t" && value.last != "\t")
        }
        precondition(vary.matches(key, headers: headers))
    }
    return 0
}
