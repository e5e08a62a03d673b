import Foundation

/// The body of a streamed response between its transport and its consumer: chunks in order,
/// how full the buffer is, and how the body ended.
///
/// Invariants, checked by `StreamBufferTests`:
/// - chunks come out in the order they went in, each exactly once, and then the end, once;
/// - `buffered` is the size of the chunks not yet taken;
/// - the transfer is asked to pause when `buffered` reaches `bufferSize`, and to go on once
///   the consumer has taken it down to half of that (`take` says when);
/// - more than `maximumBufferSize` bytes waiting (a transport that cannot pause) ends the body
///   with ``RequestError/streamLimitExceeded(_:)`` and drops what was waiting;
/// - after ``RequestError/cancelled`` nothing more comes out; after any other end, the chunks
///   that arrived before it come out first;
/// - nothing goes in after the end.
struct StreamBuffer {
    enum Appended {
        /// Deliver more.
        case more
        /// The buffer is full: pause the transfer until `take` says to resume it.
        case pause
        /// Too much is waiting for a transport that kept delivering: the body ended with an error.
        case overflow(RequestError)
        /// The body has ended already; the chunk was dropped.
        case ended
    }

    enum Taken {
        /// The next chunk, and whether a paused transfer should now go on.
        case chunk(Data, resumeTransfer: Bool)
        /// The body is over: `nil` when complete, else why not.
        case end(RequestError?)
        /// Nothing yet.
        case wait
    }

    let bufferSize: Int
    let maximumBufferSize: Int
    private var chunks: [Data] = []
    private var first = 0
    private(set) var buffered = 0
    private(set) var isPaused = false
    private(set) var end: RequestError??
    /// Bytes appended so far.
    private(set) var received: Int64 = 0

    init(bufferSize: Int, maximumBufferSize: Int) {
        self.bufferSize = max(1, bufferSize)
        self.maximumBufferSize = max(self.bufferSize, maximumBufferSize)
    }

    var hasEnded: Bool { end != nil }

    mutating func append(_ chunk: Data) -> Appended {
        guard end == nil else { return .ended }
        guard !chunk.isEmpty else { return isPaused ? .pause : .more }
        received += Int64(chunk.count)
        if buffered + chunk.count > maximumBufferSize {
            let error = RequestError.streamLimitExceeded(.bufferSize(maximumBufferSize))
            finish(error)
            return .overflow(error)
        }
        chunks.append(chunk)
        buffered += chunk.count
        if buffered >= bufferSize { isPaused = true }
        return isPaused ? .pause : .more
    }

    mutating func take() -> Taken {
        if first < chunks.count {
            let chunk = chunks[first]
            chunks[first] = Data()
            first += 1
            buffered -= chunk.count
            if first == chunks.count || first >= 1024 {
                chunks.removeFirst(first)
                first = 0
            }
            let resume = isPaused && buffered <= bufferSize / 2 && end == nil
            if resume { isPaused = false }
            return .chunk(chunk, resumeTransfer: resume)
        }
        if let end { return .end(end) }
        return .wait
    }

    /// Ends the body; false when it had ended already (the first end stands).
    @discardableResult
    mutating func finish(_ error: RequestError?) -> Bool {
        guard end == nil else { return false }
        end = .some(error)
        if case .cancelled? = error { dropWaiting() }
        if case .streamLimitExceeded? = error { dropWaiting() }
        return true
    }

    private mutating func dropWaiting() {
        chunks = []
        first = 0
        buffered = 0
    }
}
