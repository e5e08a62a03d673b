/// Refuses header names and values that would corrupt the request or inject headers.
enum HeaderValidator {
    static func validate(name: String, value: String) throws(RequestError) {
        guard !name.isEmpty, name.utf8.allSatisfy(HTTPSyntax.isTokenByte) else {
            throw RequestError.invalidHeader(name: name, reason:
                "a header name may contain only letters, digits and !#$%&'*+-.^_`|~")
        }
        if let bad = value.utf8.first(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            let what = bad == 0 ? "NUL" : bad == 0x0D ? "a carriage return (CR)" : "a line feed (LF)"
            throw RequestError.invalidHeader(name: name, reason:
                "its value contains \(what), which could inject headers")
        }
    }
}
