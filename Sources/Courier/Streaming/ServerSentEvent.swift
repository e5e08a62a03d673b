/// One event of a `text/event-stream` response (server-sent events), as the WHATWG HTML
/// standard's event-stream interpretation dispatches it.
///
/// Streaming APIs (chat completions, live feeds, progress reports) send their results as a
/// series of these: each carries its payload in ``data``, usually JSON that ``decode(_:using:)``
/// turns into a value of yours, and ``type`` says which kind of payload it is when a stream mixes
/// several. ``lastEventID`` is what a server that resumes streams needs back, in the
/// `Last-Event-ID` header, to carry on after this event when the connection drops.
///
/// ```swift
/// switch event.type {
/// case "message": let chunk = try event.decode(Chunk.self)
/// case "error": throw ServerError(message: event.data)
/// default: break   // the standard has clients ignore what they do not know
/// }
/// ```
///
/// Comments (the keep-alive lines some servers send), `retry` fields and blocks without any
/// `data` field are part of the stream but not events: they never become a value of this type.
/// It is a plain value so that tests can build the events they expect and compare them whole.
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type: the `event` field, "message" when the event had none.
    ///
    /// Never empty: an `event` field with an empty value leaves the type at "message" too, as the
    /// standard has browsers do, so a `switch` over the types has one name for untyped events.
    public var type: String

    /// The data fields' values joined with "\n" (no trailing newline).
    ///
    /// A server splits a multi-line payload into one `data` field a line; joining them gives the
    /// payload back as it was written. It can be empty (a lone `data` field) and can contain
    /// U+FFFD where the server sent bytes that are not UTF-8.
    public var data: String

    /// The last event ID when the event was dispatched (set by this event's `id` field or an
    /// earlier one); "" when none.
    ///
    /// The ID sticks until the server sends another `id` field (an empty one clears it), so every
    /// event tells how far the stream had got when it arrived: after handling it, that is the
    /// value to resume from.
    public var lastEventID: String

    /// Makes an event, for tests and for transports of your own; streams make theirs while parsing.
    /// - Parameters:
    ///   - type: The event type. Default: "message", the type of events without an `event` field.
    ///   - data: The payload, its lines joined with "\n".
    ///   - lastEventID: The stream's last event ID when the event arrived. Default: none.
    public init(type: String = "message", data: String, lastEventID: String = "") {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }
}
