import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response whose body arrives as it is sent: its head, then its bytes in chunks, read with
/// `for try await`. Made by ``RequestQueue/stream(_:priority:options:)``.
///
/// ```swift
/// let stream = queue.stream(LogTailRequest())
/// let head = try await stream.head              // status and header fields
/// for try await line in stream.lines {          // or: for try await chunk in stream
///     print(line)
/// }
/// ```
///
/// The request goes through the queue like any other: it waits for a slot, delegates see it,
/// retries, redirects, credential refreshes and its timeout apply until its response head is
/// accepted (a 2xx status). From then on the body belongs to the consumer: a failure ends the
/// stream with its error (nothing is replayed), the timeout no longer applies, and the request
/// holds its slot until the body ends.
///
/// The stream is read once, by one consumer. Reading it slower than the server sends pauses the
/// transfer (see ``StreamOptions/bufferSize``). It ends when the body does, when the consuming task is
/// cancelled, on ``cancel()`` or ``RequestQueue/cancel(_:)`` with its ``id``, and when nobody holds
/// it any more. Observers of its ``id`` get one ``StreamedResponse`` saying how it ended.
public final class ResponseStream: AsyncSequence, Sendable {
    public typealias Element = Data
    public typealias Failure = RequestError

    /// The request's ID, for ``RequestQueue/cancel(_:)`` and ``RequestQueue/addObserver(for:handler:)``.
    public let id: RequestID
    /// The stream's buffer limits.
    public let options: StreamOptions
    let channel: StreamChannel

    init(id: RequestID, channel: StreamChannel, options: StreamOptions) {
        self.id = id
        self.channel = channel
        self.options = options
    }

    deinit {
        // Nobody can read it any more: stop the transfer rather than let it hold a slot, paused.
        if !channel.hasEnded { channel.consumerCancelled() }
    }

    /// The response head: status and headers, once the server's answer was accepted.
    ///
    /// Throws what ended the request if it ended without one: a failure on the wire, a status
    /// outside 200–299 (``RequestError/validationFailed(_:body:)``, with the body), a timeout,
    /// a cancellation.
    public var head: ResponseHead {
        get async throws(RequestError) { try await channel.head() }
    }

    /// ``head`` as a Foundation `HTTPURLResponse`, made when first asked for.
    public var response: HTTPURLResponse {
        get async throws(RequestError) { try await channel.head().httpURLResponse }
    }

    /// Stops the request; reading then throws ``RequestError/cancelled``. The same as
    /// ``RequestQueue/cancel(_:)`` with ``id``.
    public func cancel() {
        channel.consumerCancelled()
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// Reads the body chunk by chunk, in order, as the transport delivered it.
    public struct AsyncIterator: AsyncIteratorProtocol {
        // The stream, not only its channel: while an iterator lives the stream is held.
        let stream: ResponseStream

        /// The next chunk; `nil` after a complete body. Throws what ended the body otherwise.
        public mutating func next() async throws(RequestError) -> Data? {
            try await stream.channel.next()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(RequestError) -> Data? {
            try await stream.channel.next()
        }
    }

    /// The body as lines of UTF-8 text (invalid bytes become U+FFFD), split at `\n` and `\r\n`;
    /// line ends are not included. A last line without a line end is yielded too.
    ///
    /// A line longer than ``StreamOptions/maximumLineLength`` ends the stream with
    /// ``RequestError/streamLimitExceeded(_:)``.
    public var lines: Lines {
        Lines(stream: self)
    }

    /// The lines of a ``ResponseStream``; see ``ResponseStream/lines``.
    public struct Lines: AsyncSequence, Sendable {
        public typealias Element = String
        public typealias Failure = RequestError

        let stream: ResponseStream

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(chunks: stream.makeAsyncIterator(), limit: stream.options.maximumLineLength)
        }

        /// Reads the lines one by one.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var chunks: ResponseStream.AsyncIterator
            var splitter: LineSplitter

            init(chunks: ResponseStream.AsyncIterator, limit: Int) {
                self.chunks = chunks
                splitter = LineSplitter(maximumLength: limit)
            }

            /// The next line; `nil` after the last.
            public mutating func next() async throws(RequestError) -> String? {
                try await next(isolation: nil)
            }

            public mutating func next(isolation actor: isolated (any Actor)?) async throws(RequestError) -> String? {
                while true {
                    switch splitter.nextLine() {
                    case .line(let line): return line
                    case .tooLong(let limit):
                        let error = RequestError.streamLimitExceeded(.lineLength(limit))
                        chunks.stream.channel.consumerFailed(error)
                        throw error
                    case .needMore:
                        guard let chunk = try await chunks.next(isolation: actor) else { return splitter.finish() }
                        splitter.append(chunk)
                    }
                }
            }
        }
    }
}
