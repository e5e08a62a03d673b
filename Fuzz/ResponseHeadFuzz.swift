// libFuzzer target for the response head parser (Sources/Courier/Transport/Curl/ResponseHeadParser.swift),
// built and run by Scripts/fuzz.sh. The input is what a server could send as its head; it is cut
// into lines the way libcurl hands them over. Whatever the input, the parser must not crash, and
// a head it accepts must keep the documented bounds.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponseHead(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var parser = ResponseHeadParser()
    var consumed = 0
    var start = 0
    do {
        // As libcurl hands lines over: a buffer each, read in place.
        let whole = UnsafeRawBufferPointer(start: data, count: size)
        for index in bytes.indices where bytes[index] == 0x0A {
            try parser.consume(UnsafeRawBufferPointer(rebasing: whole[start...index]))
            consumed += index + 1 - start
            start = index + 1
        }
        if start < bytes.count { try parser.consume(UnsafeRawBufferPointer(rebasing: whole[start...])) }
    } catch {
        // A failure is an answer; its reason must be printable.
        precondition(!error.reason.isEmpty)
        return 0
    }
    if let head = parser.head {
        precondition((200...999).contains(head.status), "a final head has a final status: \(head.status)")
        precondition(head.version.hasPrefix("HTTP/"))
        precondition(head.fields.count <= ResponseHeadParser.maximumFieldCount)
        precondition(consumed <= ResponseHeadParser.maximumSize)
        // What the transport hands on: the fields as HTTPFields, and their dictionary when asked.
        let fields = HTTPFields(head.fields)
        precondition(fields.dictionary.count <= head.fields.count)
        for field in head.fields {
            precondition(!field.name.isEmpty && !field.name.contains(":"))
            precondition(!head.values(of: field.name).isEmpty)
            precondition(fields[field.name] != nil)
        }
    }
    return 0
}
