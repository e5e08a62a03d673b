import Foundation

/// Turns the bytes of a `text/event-stream` response into ``ServerSentEvent``s as the WHATWG
/// HTML standard's "Parsing an event stream" and "Interpreting an event stream" say
/// (https://html.spec.whatwg.org/multipage/server-sent-events.html), however the transport cuts
/// the bytes into chunks: feeding a stream in one piece, in chunks or byte by byte gives the same
/// events, each as soon as the blank line that completes it has arrived.
///
/// It works on the bytes, because a stream is long and mostly payload: line ends (CR, LF, CRLF),
/// colons and spaces are ASCII, which UTF-8 never uses inside a multi-byte character, so the
/// lines and fields cut as bytes are the ones the standard cuts after decoding, and each value is
/// decoded once, bytes that are not UTF-8 becoming U+FFFD as with the standard's UTF-8 decode.
/// Details the standard settles and that are easy to get wrong:
/// - One byte order mark (EF BB BF) at the very start of the stream is skipped, even when it
///   arrives split across chunks; anywhere else it is text (U+FEFF).
/// - A CR at the end of a chunk ends its line at once, so an event it completes is not held
///   back until more bytes come; an LF at the start of the next chunk is then the rest of that
///   line end, not a blank line.
/// - Field names are compared exactly ("Data" is an unknown field, ignored); a value loses one
///   leading space, no more; an `id` containing U+0000 is ignored.
/// - A `retry` field counts only when its value is all ASCII digits; one too large for `Int`
///   is ignored like any other unusable value (the reconnection time stays as it was).
///
/// There is nothing to call at the end of a stream: an event is dispatched by the blank line
/// after it, and one the stream ends in the middle of is simply never completed, which is what
/// the standard asks ("any pending data must be discarded").
///
/// Bounds, so that a hostile or broken server cannot make the client buffer without end: the
/// line being read plus the data of the event being built may hold at most
/// ``maximumEventSize`` bytes. Past that, `consume(_:)` throws a
/// ``Failure`` and so does every later call: the stream cannot go on in the middle of a line.
struct ServerSentEventParser {
    /// 8 MiB: streamed events are usually a few hundred bytes, but some APIs send whole
    /// base64-encoded images in one event (a few megabytes); 8 MiB takes those and still keeps a
    /// hostile server to a few tens of megabytes (the line, the data and the type and ID buffers).
    static let defaultMaximumEventSize = 8 << 20

    /// Why a stream cannot be parsed further.
    struct Failure: Error, Equatable, Sendable {
        /// A sentence for the error a user sees: what was exceeded and what to do about it.
        let reason: String
    }

    /// The most bytes the line being read and the data of the event being built may hold together.
    let maximumEventSize: Int

    /// The last event ID as of the last blank line: the value for `Last-Event-ID` when
    /// reconnecting, "" when there is none (then the header is left out).
    ///
    /// It follows the standard's "last event ID string", which takes the value of the last event
    /// ID buffer at every blank line (whether or not an event is dispatched), not the buffer
    /// itself: an `id` field in an event the connection dropped in the middle of was never
    /// completed, and resuming after it would skip that event.
    private(set) var lastEventID: String

    /// The reconnection time the stream set with `retry`, in milliseconds; nil until one is set.
    ///
    /// Set as soon as the field arrives, as the standard says, even in an event that is never
    /// completed: it describes the connection, not an event.
    private(set) var reconnectionTime: Int?

    /// The ID that the next blank line makes ``lastEventID`` and gives the event it dispatches.
    private var lastEventIDBuffer: String
    /// The last `event` field's value in the event being built ("" for "message").
    private var eventTypeBuffer = ""
    /// The event's `data` values so far as UTF-8, each followed by an LF; decoded once, at dispatch.
    private var dataBuffer: [UInt8] = []
    /// The start of a line whose end has not arrived yet (most lines end in the chunk they start in
    /// and are read where they are, without a copy).
    private var partialLine: [UInt8] = []
    /// How many bytes of a byte order mark the stream started with so far; nil once the start of
    /// the stream is past (skipped, or not a byte order mark).
    private var byteOrderMarkBytesSeen: Int? = 0
    /// The last chunk ended with a CR: an LF at the start of the next one belongs to that line end.
    private var pendingCarriageReturn = false
    /// The failure thrown once, thrown again by every later call.
    private var failure: Failure?

    /// Buffers keep their storage between events up to this size; a rare huge event does not pin
    /// its memory for the rest of the stream.
    private static let retainedCapacity = 64 * 1024

    /// Starts parsing a stream.
    /// - Parameters:
    ///   - lastEventID: The last event ID buffer to start with. A reconnection carries on the
    ///     previous parser's ``lastEventID``, as browsers do, so that events of the new response
    ///     without an `id` field keep reporting it. The standard starts every stream with "".
    ///   - maximumEventSize: The most bytes the line being read and the data of the event being
    ///     built may hold together. Default: ``defaultMaximumEventSize``. Must be positive.
    init(lastEventID: String = "", maximumEventSize: Int = Self.defaultMaximumEventSize) {
        precondition(maximumEventSize > 0, "maximumEventSize must be positive, not \(maximumEventSize)")
        self.lastEventID = lastEventID
        self.lastEventIDBuffer = lastEventID
        self.maximumEventSize = maximumEventSize
    }

    /// Feeds the next bytes of the stream; returns the events they completed, in order.
    ///
    /// Any cut is fine: in the middle of a line, of a line end or of a UTF-8 character.
    /// - Throws: ``Failure`` when a line and the event's data exceed ``maximumEventSize``; the
    ///   events this call completed before that point are lost with it, and every later call
    ///   throws the same failure.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [ServerSentEvent] {
        if let failure { throw failure }
        let count = bytes.count
        var start = 0
        if var seen = byteOrderMarkBytesSeen {
            while start < count, seen < 3, bytes[start] == Self.byteOrderMarkByte(seen) {
                seen += 1
                start += 1
            }
            if seen == 3 {
                byteOrderMarkBytesSeen = nil
            } else if start == count {
                byteOrderMarkBytesSeen = seen
                return []
            } else {
                // Another byte came: what looked like the start of a byte order mark was text.
                for index in 0..<seen { partialLine.append(Self.byteOrderMarkByte(index)) }
                byteOrderMarkBytesSeen = nil
            }
        }
        if pendingCarriageReturn, start < count {
            pendingCarriageReturn = false
            if bytes[start] == Self.lineFeed { start += 1 }
        }
        var events: [ServerSentEvent] = []
        while start < count {
            guard let end = Self.firstLineEnd(in: bytes, from: start) else {
                try checkSize(ofLine: partialLine.count + (count - start))
                partialLine.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
                break
            }
            try checkSize(ofLine: partialLine.count + (end - start))
            if partialLine.isEmpty {
                processLine(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), into: &events)
            } else {
                partialLine.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                // Moved out while it is read, since reading it updates the other buffers.
                var line: [UInt8] = []
                swap(&line, &partialLine)
                line.withUnsafeBytes { processLine($0, into: &events) }
                line.removeAll(keepingCapacity: line.capacity <= Self.retainedCapacity)
                swap(&line, &partialLine)
            }
            start = end + 1
            if bytes[end] == Self.carriageReturn {
                if start == count {
                    pendingCarriageReturn = true
                } else if bytes[start] == Self.lineFeed {
                    start += 1
                }
            }
        }
        return events
    }

    /// Feeds the next bytes of the stream; returns the events they completed, in order.
    /// - Throws: ``Failure`` as the raw-buffer `consume(_:)` does.
    mutating func consume(_ data: Data) throws(Failure) -> [ServerSentEvent] {
        try data.withUnsafeBytes { bytes in Result { () throws(Failure) in try consume(bytes) } }.get()
    }

    /// Throws when a line of this many bytes would not fit beside the event's data so far.
    ///
    /// Checked before a line is kept or read: while a line grows, the total is largest at its
    /// end, and reading it only ever shrinks it (a `data` line adds less than its own length).
    private mutating func checkSize(ofLine length: Int) throws(Failure) {
        guard length > maximumEventSize - dataBuffer.count else { return }
        let failure = Failure(reason: "the server sent an event larger than the \(maximumEventSize)-byte limit "
            + "(a line and the event's data so far exceed it); raise maximumEventSize if its events are "
            + "really this large, or reconnect to start a new stream")
        self.failure = failure
        throw failure
    }

    /// One line, without its line end, as "Interpreting an event stream" reads it.
    private mutating func processLine(_ line: UnsafeRawBufferPointer, into events: inout [ServerSentEvent]) {
        guard let first = line.first else {
            dispatch(into: &events)
            return
        }
        guard first != Self.colon else { return }  // a comment
        var colon = 0
        while colon < line.count, line[colon] != Self.colon { colon += 1 }
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        var valueStart = Swift.min(colon + 1, line.count)
        if valueStart < line.count, line[valueStart] == Self.space { valueStart += 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[valueStart...])
        if Self.is(name, "data") {
            dataBuffer.append(contentsOf: value)
            dataBuffer.append(Self.lineFeed)
        } else if Self.is(name, "event") {
            eventTypeBuffer = String(decoding: value, as: UTF8.self)
        } else if Self.is(name, "id") {
            if !value.contains(0) { lastEventIDBuffer = String(decoding: value, as: UTF8.self) }
        } else if Self.is(name, "retry") {
            setReconnectionTime(value)
        }
    }

    /// "Dispatch the event": every blank line commits the last event ID; only one after `data`
    /// fields makes an event.
    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        lastEventID = lastEventIDBuffer
        guard !dataBuffer.isEmpty else {
            eventTypeBuffer = ""
            return
        }
        // The buffer ends with the LF its last `data` field appended: the one the standard removes.
        let data = dataBuffer.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer.dropLast()), as: UTF8.self)
        }
        events.append(ServerSentEvent(type: eventTypeBuffer.isEmpty ? "message" : eventTypeBuffer,
                                      data: data, lastEventID: lastEventIDBuffer))
        dataBuffer.removeAll(keepingCapacity: dataBuffer.capacity <= Self.retainedCapacity)
        eventTypeBuffer = ""
    }

    /// A `retry` value: ASCII digits only, at least one, and small enough for `Int`; anything
    /// else leaves the reconnection time as it was.
    private mutating func setReconnectionTime(_ value: UnsafeRawBufferPointer) {
        guard !value.isEmpty else { return }
        var milliseconds = 0
        for byte in value {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return }
            let (shifted, overflowed) = milliseconds.multipliedReportingOverflow(by: 10)
            let (sum, carried) = shifted.addingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
            guard !overflowed, !carried else { return }
            milliseconds = sum
        }
        reconnectionTime = milliseconds
    }

    /// The index of the first CR or LF at or after `start`, if any.
    private static func firstLineEnd(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let count = bytes.count
        var index = start
        while index < count {
            let byte = bytes[index]
            if byte == lineFeed || byte == carriageReturn { return index }
            index += 1
        }
        return nil
    }

    /// Whether a field name is exactly `name` (compared byte for byte: no case folding).
    private static func `is`(_ field: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        field.count == name.utf8CodeUnitCount && name.withUTF8Buffer { $0.elementsEqual(field) }
    }

    /// The byte order mark's bytes, EF BB BF, by position.
    private static func byteOrderMarkByte(_ index: Int) -> UInt8 {
        switch index {
        case 0: 0xEF
        case 1: 0xBB
        default: 0xBF
        }
    }

    private static let lineFeed: UInt8 = 0x0A
    private static let carriageReturn: UInt8 = 0x0D
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")
}
