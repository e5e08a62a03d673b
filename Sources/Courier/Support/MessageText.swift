/// Text as it goes into error messages: one readable line of bounded length.
extension String {
    /// The string cut to 200 characters, for messages that must stay readable.
    var truncatedForMessages: String {
        count > 200 ? prefix(200) + "…" : self
    }

    /// The string with control characters shown as escapes, safe to print in one line.
    var debugEscaped: String {
        String(unicodeScalars.flatMap { scalar -> [Character] in
            scalar.value < 0x20 || scalar.value == 0x7F
                ? Array(scalar.escaped(asASCII: true)) : [Character(scalar)]
        })
    }
}
