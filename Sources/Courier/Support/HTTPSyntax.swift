/// The byte classes of HTTP's syntax (RFC 9110 §5.6), shared by the parsers of what servers send
/// and by the checks of what Courier sends. Free of other dependencies, so that fuzz targets can
/// compile it with the one parser they test.
enum HTTPSyntax {
    /// RFC 9110 §5.6.2 `tchar`: the bytes of a token (a header name, a directive's name).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            // A case per byte rather than a search of a string: this runs for every byte of every
            // response's field names.
            true
        default:
            false
        }
    }

    /// RFC 9110 §5.6.3 whitespace: a space or a horizontal tab.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// Whether two field names are the same name (RFC 9110 §5.1): equal but for the case of ASCII
    /// letters, so that no Unicode folding can make two names equal. Compared byte by byte,
    /// without allocating: lookups run for every response.
    static func namesEqual(_ first: some StringProtocol, _ second: some StringProtocol) -> Bool {
        guard first.utf8.count == second.utf8.count else { return false }
        // Over the bytes where both have them in one piece (native strings, small ones too):
        // a third of the cost of stepping two `UTF8View`s' indices.
        let contiguous = first.utf8.withContiguousStorageIfAvailable { a in
            second.utf8.withContiguousStorageIfAvailable { b in
                for index in a.indices where lowercase(a[index]) != lowercase(b[index]) { return false }
                return true
            }
        }
        if let contiguous, let equal = contiguous { return equal }
        return first.utf8.elementsEqual(second.utf8) { lowercase($0) == lowercase($1) }
    }

    /// The byte with an ASCII letter folded to lower case; any other byte as it is.
    static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
