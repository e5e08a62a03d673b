// libFuzzer target for Link header fields (Sources/Courier/Response/WebLink.swift), built and run
// by Scripts/fuzz.sh. The input's lines are `Link` field values. Whatever they hold, nothing
// crashes, nothing hangs, and:
// - there are no more links than link-values (commas plus fields);
// - every target is an absolute URL;
// - relation types are lowercased, non-empty and free of spaces, and `rel` is what they came from.
import Foundation

private let base = URL(string: "https://api.example.com/v1/items?page=2")!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebLink(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    let links = WebLink.parse(lines, base: base)
    // As scalars too: a comma after a prepended mark (U+0604) is one Character with it.
    let commas = lines.reduce(0) { $0 + $1.unicodeScalars.filter { $0 == "," }.count }
    precondition(links.count <= commas + lines.count, "\(links.count) links from \(lines.count) fields")
    for link in links {
        precondition(link.target.scheme != nil, "a relative target: \(link.target)")
        // As scalars: a space may hide in a Character with a prepended mark before it.
        for relation in link.relations {
            precondition(!relation.isEmpty && relation == relation.lowercased()
                         && !relation.unicodeScalars.contains(where: { $0 == " " || $0 == "\t" }), relation)
        }
        let rel = Array((link.parameters["rel"] ?? "").lowercased().unicodeScalars)
        precondition(link.relations.map { Array($0.unicodeScalars) } == rel.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(Array.init))
    }
    return 0
}
