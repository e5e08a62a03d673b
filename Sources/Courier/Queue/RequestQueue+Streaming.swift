extension RequestQueue {
    /// Sends a request and returns its response as it arrives: the head, then the body in
    /// chunks or lines, with back-pressure.
    ///
    /// ```swift
    /// let stream = queue.stream(CompletionRequest(prompt: "Hello"))
    /// for try await line in stream.lines where !line.isEmpty {
    ///     print(line)
    /// }
    /// ```
    /// The request waits for a slot, runs its delegates, follows redirects, refreshes
    /// credentials and is retried as any request until its response head is accepted (a 2xx
    /// status); see ``ResponseStream`` for what happens after. The request's `ResponseType` is
    /// not used: observers of the stream's ``ResponseStream/id`` get a ``StreamedResponse``.
    /// Responses are not limited by ``RequestQueueConfiguration/maximumResponseSize``.
    /// - Parameters:
    ///   - request: The request.
    ///   - priority: Its place among waiting requests. Default: `.normal`.
    ///   - options: Buffer limits. Default: ``StreamOptions/init()``.
    public func stream<R: Request>(_ request: R, priority: RequestPriority = .normal,
                                   options: StreamOptions = StreamOptions()) -> ResponseStream {
        let channel = StreamChannel(options: options)
        let box = StreamBox(request: request, sink: channel, outcome: StreamedResponse.self)
        // Started on the calling thread (never the main thread) when it may start at once, as
        // `send` does: waking the start queue's thread cost a stream's first byte ~20 µs.
        let (id, mustStart) = enqueue(box: box, priority: priority, owner: nil, completion: { channel.requestEnded($0) },
                                      startsHere: true)
        let weakSelf = WeakRequestQueue(self)
        channel.setCancel { weakSelf.queue?.cancel(id) }
        if mustStart { runClaimedStartLoopHere() }
        return ResponseStream(id: id, channel: channel, options: options)
    }
}

extension RequestQueue {
    /// Sends a request for server-sent events and returns them as they arrive, reconnecting
    /// with `Last-Event-ID` when the connection ends, as the WHATWG `EventSource` does.
    ///
    /// ```swift
    /// for try await event in queue.events(NotificationsRequest()) where event.type == "mention" {
    ///     show(try event.decode(Mention.self))
    /// }
    /// ```
    /// Each connection goes through the queue like a ``stream(_:priority:options:)``; see
    /// ``ServerSentEventStream`` for when it reconnects and when it ends.
    /// - Parameters:
    ///   - request: The request; its headers are sent with `Accept: text/event-stream`,
    ///     `Cache-Control: no-store` and `Last-Event-ID`.
    ///   - priority: Each connection's place among waiting requests. Default: `.normal`.
    ///   - options: Reconnection and limits. Default: ``ServerSentEventOptions/init()``.
    public func events<R: Request>(_ request: R, priority: RequestPriority = .normal,
                                   options: ServerSentEventOptions = ServerSentEventOptions()) -> ServerSentEventStream {
        let weakSelf = WeakRequestQueue(self)
        return ServerSentEventStream(options: options) { lastEventID in
            weakSelf.queue?.stream(EventSourceRequest(inner: request, lastEventID: lastEventID), priority: priority,
                                   options: options.stream)
        }
    }

    /// Server-sent events from a URL, without a request type of one's own: a `GET` of `path`.
    ///
    /// ```swift
    /// for try await event in queue.events("/notifications") { print(event.data) }
    /// ```
    /// - Parameters:
    ///   - path: The path, relative to the queue's base URL, or an absolute URL.
    ///   - headers: Header fields to send besides those of every event-stream connection. Default: none.
    ///   - priority: Each connection's place among waiting requests. Default: `.normal`.
    ///   - options: Reconnection and limits. Default: ``ServerSentEventOptions/init()``.
    public func events(_ path: String, headers: HTTPFields = [], priority: RequestPriority = .normal,
                       options: ServerSentEventOptions = ServerSentEventOptions()) -> ServerSentEventStream {
        events(Endpoint(.get, path, headers: headers, as: EmptyResponse.self), priority: priority, options: options)
    }
}
