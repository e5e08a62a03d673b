import Foundation

// libFuzzer target for the server-sent events parser (Sources/Courier/Streaming/ServerSentEventParser.swift),
// built and run by Scripts/fuzz.sh. The input's first byte picks how the stream is cut into
// chunks, its second the size limit for the bounded runs, and the rest is the stream, whatever a
// server could send. Whatever it is, the parser must not crash, and:
// - in one piece, without a reachable limit, it gives exactly what a plain model of the standard's
//   text gives: the whole stream decoded as UTF-8 at once, then cut into lines by Unicode scalars;
// - with the limit, fed byte by byte, each call returns the events that byte completed and the
//   call that fails is the byte a model of the limit names; fed in chunks, each chunk returns
//   exactly the events of its bytes fed one by one, leaves the same state, and fails if and only
//   if it holds the failing byte; before a failure the events are the model's first ones.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServerSentEvents(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 2 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let chunkSeed = UInt64(input[0])
    let limit = Int(input[1]) + 1
    let stream = Array(input[2...])

    // The model, and the parser in one piece with a limit it cannot reach (the stream is shorter).
    let expected = ModelOfTheStandard(stream)
    var whole = ServerSentEventParser(maximumEventSize: stream.count + 1)
    let wholeEvents = try! stream.withUnsafeBytes { bytes in try whole.consume(bytes) }
    precondition(same(wholeEvents, expected.events), "one piece: \(wholeEvents) but the standard says \(expected.events)")
    precondition(whole.lastEventID.utf8.elementsEqual(expected.lastEventID.utf8))
    precondition(whole.reconnectionTime == expected.reconnectionTime)
    for event in wholeEvents { checkInvariants(event) }

    // Byte by byte with the limit: what each byte completed, and the state after it.
    var byteParser = ServerSentEventParser(maximumEventSize: limit)
    var eventsOfByte: [[ServerSentEvent]] = []
    var stateAfterByte: [(String, Int?)] = []
    var failingByte: Int?
    for index in stream.indices {
        do {
            let events = try withUnsafeBytes(of: stream[index]) { bytes throws(ServerSentEventParser.Failure) in
                try byteParser.consume(bytes)
            }
            eventsOfByte.append(events)
            stateAfterByte.append((byteParser.lastEventID, byteParser.reconnectionTime))
        } catch {
            precondition(error.reason.contains("\(limit)-byte limit"), error.reason)
            failingByte = index
            break
        }
    }
    if failingByte != nil {
        // Once failed, failed for good.
        let again = Result { () throws(ServerSentEventParser.Failure) in try byteParser.consume(Data()) }
        guard case .failure = again else { preconditionFailure("a failed parser took more bytes") }
    }
    precondition(failingByte == firstByteOverTheLimit(stream, limit: limit),
                 "failed at byte \(failingByte.map(String.init) ?? "none"), the limit model says "
                 + "\(firstByteOverTheLimit(stream, limit: limit).map(String.init) ?? "none")")
    let eventsBeforeFailure = eventsOfByte.flatMap { $0 }
    if failingByte == nil {
        precondition(same(eventsBeforeFailure, expected.events), "byte by byte: \(eventsBeforeFailure)")
    } else {
        precondition(eventsBeforeFailure.count <= expected.events.count
            && same(eventsBeforeFailure, Array(expected.events.prefix(eventsBeforeFailure.count))))
    }

    // In chunks with the limit: each chunk gives what its bytes gave one by one.
    var random = SplitMix(state: chunkSeed)
    var chunkParser = ServerSentEventParser(maximumEventSize: limit)
    var start = 0
    while start < stream.count {
        let end = min(stream.count, start + random.chunkSize())
        let chunk = Array(stream[start..<end])
        let result = random.next() & 1 == 0
            ? Result { () throws(ServerSentEventParser.Failure) in try chunkParser.consume(Data(chunk)) }
            : chunk.withUnsafeBytes { bytes in Result { () throws(ServerSentEventParser.Failure) in try chunkParser.consume(bytes) } }
        switch result {
        case .success(let events):
            precondition(failingByte.map { $0 >= end } ?? true, "chunk \(start)..<\(end) holds the failing byte but did not fail")
            precondition(same(events, Array(eventsOfByte[start..<end].joined())),
                         "chunk \(start)..<\(end) gave \(events), byte by byte \(Array(eventsOfByte[start..<end].joined()))")
            if end > start {
                let (lastEventID, reconnectionTime) = stateAfterByte[end - 1]
                precondition(chunkParser.lastEventID.utf8.elementsEqual(lastEventID.utf8))
                precondition(chunkParser.reconnectionTime == reconnectionTime)
            }
        case .failure(let error):
            precondition(failingByte.map { start <= $0 && $0 < end } ?? false,
                         "chunk \(start)..<\(end) failed: \(error.reason); byte by byte failed at \(String(describing: failingByte))")
            return 0
        }
        start = end
    }
    precondition(failingByte == nil, "the chunks never failed")
    return 0
}

/// What any event must look like, whatever the stream.
private func checkInvariants(_ event: ServerSentEvent) {
    // The type is never empty ("message" at least); no value can hold a line end, except data its joined lines.
    precondition(!event.type.isEmpty)
    precondition(!event.type.unicodeScalars.contains { $0 == "\r" || $0 == "\n" })
    precondition(!event.data.unicodeScalars.contains("\r"))
    // An ID with U+0000 is ignored, and the parser started with none.
    precondition(!event.lastEventID.unicodeScalars.contains { $0 == "\r" || $0 == "\n" || $0 == "\u{0}" })
}

/// Events compared scalar by scalar: `String`'s `==` calls canonically equivalent texts equal.
private func same(_ left: [ServerSentEvent], _ right: [ServerSentEvent]) -> Bool {
    left.count == right.count && zip(left, right).allSatisfy { left, right in
        left.type.unicodeScalars.elementsEqual(right.type.unicodeScalars)
            && left.data.unicodeScalars.elementsEqual(right.data.unicodeScalars)
            && left.lastEventID.unicodeScalars.elementsEqual(right.lastEventID.unicodeScalars)
    }
}

/// The standard's text taken literally: the stream decoded as a whole (one leading BOM
/// stripped, bytes that are not UTF-8 replaced), lines cut at CRLF, LF or CR by scalars, each
/// line processed as "Interpreting an event stream" lists, on Strings.
private struct ModelOfTheStandard {
    var events: [ServerSentEvent] = []
    var lastEventID = ""
    var reconnectionTime: Int?

    init(_ bytes: [UInt8]) {
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
        let scalars = Array(String(decoding: body, as: UTF8.self).unicodeScalars)
        var data = "", type = "", idBuffer = ""
        var line: [Unicode.Scalar] = []
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            guard scalar == "\r" || scalar == "\n" else {
                line.append(scalar)
                continue
            }
            if scalar == "\r", index < scalars.count, scalars[index] == "\n" { index += 1 }
            defer { line = [] }
            if line.isEmpty {
                lastEventID = idBuffer
                if data.isEmpty {
                    type = ""
                    continue
                }
                if data.unicodeScalars.last == "\n" { data.unicodeScalars.removeLast() }
                events.append(ServerSentEvent(type: type.isEmpty ? "message" : type, data: data, lastEventID: idBuffer))
                data = ""
                type = ""
                continue
            }
            if line[0] == ":" { continue }
            let field: String, value: String
            if let colon = line.firstIndex(of: ":") {
                field = String(String.UnicodeScalarView(line[..<colon]))
                var valueScalars = line[(colon + 1)...]
                if valueScalars.first == " " { valueScalars = valueScalars.dropFirst() }
                value = String(String.UnicodeScalarView(valueScalars))
            } else {
                field = String(String.UnicodeScalarView(line))
                value = ""
            }
            switch Array(field.unicodeScalars) {
            case Array("event".unicodeScalars): type = value
            case Array("data".unicodeScalars): data += value + "\n"
            case Array("id".unicodeScalars): if !value.unicodeScalars.contains("\u{0}") { idBuffer = value }
            case Array("retry".unicodeScalars):
                if !value.isEmpty, value.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }), let time = Int(value) {
                    reconnectionTime = time
                }
            default: break
            }
        }
    }
}

/// Where the parser must fail, by the limit's definition: the first byte that makes the line
/// being read plus the data of the event being built longer than `limit`, counting the bytes the
/// server sent. A stream's first bytes only count once they are known not to be a byte order mark.
private func firstByteOverTheLimit(_ bytes: [UInt8], limit: Int) -> Int? {
    let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
    var decided = 0  // where the start of the stream is known to be a byte order mark or text
    while decided < min(3, bytes.count), bytes[decided] == mark[decided] { decided += 1 }
    if decided == bytes.count, decided < 3 { return nil }  // all of it could still be a mark
    let start = decided == 3 ? 3 : 0
    var line: [UInt8] = []
    var dataSize = 0
    var index = start
    while index < bytes.count {
        let byte = bytes[index]
        if byte == 0x0A || byte == 0x0D {
            if line.isEmpty {
                dataSize = 0
            } else if let colon = line.firstIndex(of: 0x3A), line[..<colon].elementsEqual("data".utf8) {
                var value = line[(colon + 1)...]
                if value.first == 0x20 { value = value.dropFirst() }
                dataSize += value.count + 1
            } else if line.elementsEqual("data".utf8) {
                dataSize += 1
            }
            line = []
            if byte == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A { index += 1 }
        } else {
            line.append(byte)
            if line.count > limit - dataSize { return max(index, decided) }
        }
        index += 1
    }
    return nil
}

/// A small, fast, seeded random number generator (SplitMix64), so a seed byte picks the chunks.
private struct SplitMix {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 0 to 127 bytes, small sizes as likely as large ones, so cuts land inside line ends and characters.
    mutating func chunkSize() -> Int {
        Int(next() % (1 << (next() % 8)))
    }
}
