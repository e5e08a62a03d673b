import Foundation

/// How ``RequestQueue/events(_:priority:options:)`` follows a stream of server-sent events.
///
/// ```swift
/// var options = ServerSentEventOptions()
/// options.reconnectionDelay = 1          // until the server sets its own with `retry:`
/// options.maximumReconnections = 5       // give up after 5 connections in a row with no event
/// let events = queue.events(TickerRequest(), options: options)
/// ```
public struct ServerSentEventOptions: Sendable, Hashable {
    /// Whether a stream that ends or fails on the wire is connected again, with the
    /// `Last-Event-ID` of the last event, as the WHATWG `EventSource` does. Default: true.
    /// Reconnection stops on a `204 No Content`, on any other status than 200 or a response that is
    /// not `text/event-stream` (which fail), and on cancellation.
    public var reconnects = true

    /// Seconds to wait before connecting again, until the server sets its own delay with a
    /// `retry:` field. Default: 3.
    public var reconnectionDelay: TimeInterval = 3

    /// How many connections in a row may end without delivering an event before the stream
    /// gives up with the last error. Default: `nil`, never (as `EventSource`).
    public var maximumReconnections: Int?

    /// The `Last-Event-ID` to send on the first connection, to resume where an earlier stream
    /// stopped (see ``ServerSentEventStream/lastEventID``). Default: `nil`, none.
    public var lastEventID: String?

    /// The largest event accepted, in bytes (its lines and data together); a larger one ends the
    /// stream with ``RequestError/streamLimitExceeded(_:)`` (``StreamLimit/eventSize(_:)``) and no
    /// reconnection, so that a server cannot fill memory with one endless event. Default: 8 MiB
    /// (some APIs send images of several megabytes as one event).
    public var maximumEventSize = ServerSentEventParser.defaultMaximumEventSize

    /// The buffer limits of each connection's stream. Default: ``StreamOptions/init()``.
    public var stream = StreamOptions()

    /// Default options.
    public init() {}
}
