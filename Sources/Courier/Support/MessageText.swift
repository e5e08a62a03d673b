/// Text as it goes into error messages: one readable line of bounded length.
extension String {
    /// The string cut to 200 characters, for messages that must stay readable.
    var truncatedForMessages: String {
        count > 200 ? prefix(200) + "…" : self
    }

    /// The string with control characters shown as escapes, safe to print in one line.
    /// Built scalar by scalar: a description of a status error escapes up to 200 characters of
    /// its body, and making a `Character` array of them cost 187,000 instructions a description.
    var debugEscaped: String {
        let needsEscape = { (scalar: Unicode.Scalar) in scalar.value < 0x20 || scalar.value == 0x7F }
        guard unicodeScalars.contains(where: needsEscape) else { return self }
        var escaped = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if needsEscape(scalar) {
                escaped.append(contentsOf: scalar.escaped(asASCII: true).unicodeScalars)
            } else {
                escaped.append(scalar)
            }
        }
        return String(escaped)
    }
}
