import Foundation

extension RequestQueue {
    /// The resource of a request: one per request for as long as someone holds it, so that two
    /// screens showing the same data share its value and its loads.
    ///
    /// ```swift
    /// let profile = queue.resource(ProfileRequest(userID: 42))
    /// profile.loadIfNeeded()
    /// ```
    /// Requests are the same when they go on the wire the same (method, URL, header fields) and
    /// have the same type, and their options are equal. The queue holds resources weakly; a
    /// resource holds its queue. A request whose parameters are a streamed multipart form gets a
    /// resource of its own, never shared.
    /// - Parameters:
    ///   - request: The request the resource loads (a `GET`, usually).
    ///   - options: Freshness, retries and where it changes. Default: the HTTP freshness of its
    ///     responses, retries from 1 s to 60 s while watched, changes on the main actor.
    public func resource<R: Request>(_ request: R, options: ResourceOptions = ResourceOptions()) -> Resource<R> {
        let box = RequestBox(request: request)
        guard !box.preparesSlowly, let prepared = try? box.prepare(with: builder),
              let url = prepared.urlRequest.url.flatMap(CacheKey.make(for:)) else {
            // Not shared: preparing it writes a file, or it fails (as its loads will, with the reason).
            return Resource(request: request, queue: self, key: .unregistered(options: options))
        }
        var text = "\(prepared.urlRequest.httpMethod ?? "GET") \(url)"
        for field in prepared.urlRequest.allHTTPHeaderFields?.sorted(by: { $0.key < $1.key }) ?? [] {
            text += "\n\(field.key.lowercased()): \(field.value)"
        }
        let name = ResourceRegistry.Name(requestType: ObjectIdentifier(R.self), request: text, options: options)
        return resources.resource(for: name) { key in
            Resource(request: request, queue: self, key: key)
        }
    }

    /// Marks stale every resource of this queue whose URL is `url` or under it: the same origin,
    /// and a path that is `url`'s or continues it with `/`, with any query.
    ///
    /// ```swift
    /// try await queue.send(NewPostRequest(title: "Hello"))
    /// queue.invalidateResources(under: URL(string: "https://api.example.com/v1/posts")!)
    /// // /posts, /posts?page=2 and /posts/7 are stale; the watched ones load again.
    /// ```
    /// Writes through the queue already invalidate the resources of their own URL (and of their
    /// `Location`); this is for the others they change.
    public func invalidateResources(under url: URL) {
        guard let matches = ResourceRegistry.prefixMatcher(for: url) else { return }
        resources.invalidate(where: matches)
    }

    /// A list that arrives in pages, following each page's `Link: <…>; rel="next"` header field.
    ///
    /// ```swift
    /// let posts = queue.pages(PostsRequest())
    /// posts.loadIfNeeded()          // the first page
    /// posts.loadNextPage()          // the page its Link names, appended
    /// ```
    /// The next page's request is the first page's with the linked URL (which carries its own
    /// query): the same type, header fields, decoding and validation. Each page is the
    /// ``Resource`` of its request, shared as resources are; the list itself is the caller's.
    /// - Parameters:
    ///   - firstRequest: The request of the first page.
    ///   - options: The options of every page. Default: as ``resource(_:options:)``.
    public func pages<R: Request>(_ firstRequest: R, options: ResourceOptions = ResourceOptions()) -> PagedResource<R> {
        PagedResource(firstRequest: firstRequest, options: options, queue: self, next: .link)
    }

    /// A list that arrives in pages, the request of each next page made by `next` from the last
    /// page and the head of its response; `nil` when it was the last.
    ///
    /// ```swift
    /// let posts = queue.pages(PostsRequest(page: 1)) { page, _ in
    ///     page.hasMore ? PostsRequest(page: page.number + 1) : nil
    /// }
    /// ```
    /// - Parameters:
    ///   - firstRequest: The request of the first page.
    ///   - options: The options of every page. Default: as ``resource(_:options:)``.
    ///   - next: The request of the page after a page, or `nil` after the last.
    public func pages<R: Request>(_ firstRequest: R, options: ResourceOptions = ResourceOptions(),
                                  next: @escaping @Sendable (R.ResponseType, ResponseHead) -> R?) -> PagedResource<R> {
        PagedResource(firstRequest: firstRequest, options: options, queue: self, next: .rule(next))
    }
}
