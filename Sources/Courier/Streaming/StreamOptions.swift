/// How a streamed response is buffered between the network and its consumer.
///
/// ```swift
/// var options = StreamOptions()
/// options.bufferSize = 256 << 10   // pause the transfer with 256 KiB waiting
/// let stream = queue.stream(LogTailRequest(), options: options)
/// ```
public struct StreamOptions: Sendable, Hashable {
    /// Bytes that may wait for the consumer before the transfer is paused; it goes on once the
    /// consumer has read half of them. Default: 1 MiB. The curl transport pauses (so a slow
    /// consumer holds at most this much, plus one chunk); URLSession cannot pause a transfer
    /// (its `suspend` restarts data tasks), so there ``maximumBufferSize`` is the bound.
    public var bufferSize: Int = 1 << 20

    /// Bytes that may wait for the consumer at the most, on a transport that keeps delivering
    /// after being asked to pause: past it the stream ends with
    /// ``RequestError/streamLimitExceeded(_:)`` (``StreamLimit/bufferSize(_:)``) rather than
    /// holding more. Default: 64 MiB.
    ///
    /// This bounds what Courier holds. Linux's URLSession reads ahead of its delegate and queues
    /// what it read for it: in Courier's benchmark, on a fast loopback server and a busy machine,
    /// it sometimes held most of a 256 MiB body after the stream had ended at this limit. Use the
    /// curl transport (the default on Linux) where memory must stay bounded.
    public var maximumBufferSize: Int = 64 << 20

    /// The longest line ``ResponseStream/lines`` yields, in bytes; a longer one ends the stream with
    /// ``RequestError/streamLimitExceeded(_:)`` (``StreamLimit/lineLength(_:)``), so that a server
    /// that never sends a line end cannot fill memory. Default: 4 MiB.
    public var maximumLineLength: Int = 4 << 20

    /// Default options.
    public init() {}
}

/// Which limit of a stream a server's response broke (see ``RequestError/streamLimitExceeded(_:)``).
public enum StreamLimit: Sendable, Hashable, CustomStringConvertible {
    /// More bytes waited for the consumer than ``StreamOptions/maximumBufferSize``.
    case bufferSize(Int)
    /// A line was longer than ``StreamOptions/maximumLineLength``.
    case lineLength(Int)
    /// A server-sent event was larger than ``ServerSentEventOptions/maximumEventSize``.
    case eventSize(Int)

    public var description: String {
        switch self {
        case .bufferSize(let limit):
            "more than \(limit) bytes waited for a consumer that read slower than the server sent, on a transport that "
                + "cannot pause (URLSession); read faster, raise StreamOptions.maximumBufferSize, or use the curl transport"
        case .lineLength(let limit):
            "a line was longer than \(limit) bytes; raise StreamOptions.maximumLineLength if the server's lines are that long"
        case .eventSize(let limit):
            "an event was larger than \(limit) bytes; raise ServerSentEventOptions.maximumEventSize if the server's events are that large"
        }
    }
}
