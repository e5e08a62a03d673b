import Foundation
import Observation
import Synchronization

/// A list that arrives in pages: each page a ``Resource`` of its own, the next one found from the
/// last (its `Link: <…>; rel="next"` header field, or a rule of the app's), appended as the
/// screen asks for more.
///
/// ```swift
/// let posts = queue.pages(PostsRequest())          // follows rel="next" links
/// posts.loadIfNeeded()
///
/// List {
///     ForEach(posts.items) { PostRow(post: $0) }
///     if posts.hasMore { ProgressView().task { posts.loadNextPage() } }
/// }
/// ```
/// Pages share what resources do: the cache, shared transfers, invalidation by writes, and the
/// same ``ResourceOptions``. A server whose next link leads back to a page already in the list
/// ends it there.
public final class PagedResource<R: Request>: Observable, Sendable {
    /// The type of one page's value.
    public typealias Page = R.ResponseType

    /// The request of the first page.
    public let firstRequest: R
    /// The options of every page.
    public let options: ResourceOptions

    private let queue: RequestQueue
    /// The options of every page: the app's, keeping the head where the next page is found.
    private let pageOptions: ResourceOptions
    private let nextRule: NextPage
    private let observation = ResourceObservation()
    private let list: Locked<[any PageSource<Page>]>
    /// Whether a change runs on the context (only ever touched there).
    private let changing = Atomic<Bool>(false)

    /// How the request of the next page is found.
    enum NextPage: Sendable {
        case link
        case rule(@Sendable (Page, ResponseHead) -> R?)
    }

    init(firstRequest: R, options: ResourceOptions, queue: RequestQueue, next: NextPage) {
        self.firstRequest = firstRequest
        self.options = options
        self.queue = queue
        var pageOptions = options
        pageOptions.keepsHead = true
        self.pageOptions = pageOptions
        nextRule = next
        list = Locked([queue.resource(firstRequest, options: pageOptions)])
        options.updatesOn.mark()
    }

    /// The pages loaded so far, in order.
    var loadedPages: [any PageSource<Page>] {
        observation.access(.pages)
        return list.withLock { $0 }
    }

    // MARK: - What it shows

    /// The values of the pages loaded so far, in order (a page still loading is not there yet).
    public var pages: [Page] { loadedPages.compactMap { $0.value } }

    /// Whether a page is loading.
    public var isLoading: Bool { loadedPages.contains { $0.isLoading } }

    /// Why the last page asked for failed; `nil` once it loads.
    public var error: RequestError? { loadedPages.last?.error }

    /// Whether there is more to load: nothing has loaded yet, the last page is not there yet, or
    /// it names a next page. `false` once the last page has come.
    public var hasMore: Bool {
        guard let last = loadedPages.last else { return true }
        guard let value = last.value, let head = last.head else { return true }
        switch nextRule {
        case .link: return nextLink(in: head) != nil
        case .rule(let next): return next(value, head) != nil
        }
    }

    /// Where the list stands: ``ResourcePhase/loaded(_:)`` with every page loaded once the first is.
    public var phase: ResourcePhase<[Page]> {
        let pages = loadedPages
        let values = pages.compactMap { $0.value }
        if !values.isEmpty { return .loaded(values) }
        if let first = pages.first {
            if first.isLoading { return .loading }
            if let error = first.error { return .failed(error) }
        }
        return .idle
    }

    // MARK: - What it does

    /// Loads the first page unless it is fresh.
    public func loadIfNeeded() {
        loadedPages.first?.loadIfNeeded()
    }

    /// Loads the page after the last one loaded; loads the last one again if it failed. Does
    /// nothing while the last page loads, or once the last page has come.
    public func loadNextPage() {
        change { [self] in advance()?.loadIfNeeded() }
    }

    /// Loads the next page and returns it: the first page on the first call, then each next one
    /// in turn, `nil` once the last page has come. For code that reads every page:
    ///
    /// ```swift
    /// while let page = try await posts.nextPage() {
    ///     print(page.posts.count)
    /// }
    /// ```
    /// - Throws: The page's load error (call again to load it again), or
    ///   ``RequestError/cancelled`` when the calling task is cancelled.
    public func nextPage() async throws(RequestError) -> Page? {
        let target: (any PageSource<Page>)? = await withCheckedContinuation { continuation in
            change { [self] in
                // A first page with no value is the page to come; otherwise the one after the last.
                if let first = list.withLock({ $0.count == 1 ? $0.first : nil }), first.value == nil {
                    return continuation.resume(returning: first)
                }
                continuation.resume(returning: advance())
            }
        }
        guard let target else { return nil }
        return try await target.fetch()
    }

    /// On the context: the page to load next, appended when it is new; the last page again when
    /// it has no value yet; nil once the last page has come.
    private func advance() -> (any PageSource<Page>)? {
        guard let last = list.withLock({ $0.last }) else { return nil }
        guard let value = last.value, let head = last.head else { return last }
        let pages = list.withLock { $0 }
        // A next page already in the list, by its resource or by the URL a page came from, ends it.
        if case .link = nextRule, let url = nextLink(in: head), pages.contains(where: { $0.head?.url == url }) { return nil }
        guard let next = nextPage(after: value, head: head), !pages.contains(where: { $0 === next }) else { return nil }
        observation.willSet(.pages)
        list.withLock { $0.append(next) }
        observation.didSet(.pages)
        return next
    }

    /// Loads the first page again from the origin and drops the others; returns when it is there.
    public func refresh() async {
        let first: (any PageSource<Page>)? = await withCheckedContinuation { continuation in
            change { [self] in
                observation.willSet(.pages)
                list.withLock { $0 = Array($0.prefix(1)) }
                observation.didSet(.pages)
                continuation.resume(returning: list.withLock { $0.first })
            }
        }
        await first?.refresh()
    }

    /// Marks every page stale (see ``Resource/invalidate()``).
    public func invalidate() {
        for page in list.withLock({ $0 }) { page.invalidate() }
    }

    // MARK: - Pages

    private func nextPage(after value: Page, head: ResponseHead) -> (any PageSource<Page>)? {
        switch nextRule {
        case .link:
            return nextLink(in: head).map { queue.resource(LinkedPage(first: firstRequest, url: $0), options: pageOptions) }
        case .rule(let next):
            return next(value, head).map { queue.resource($0, options: pageOptions) }
        }
    }

    private func nextLink(in head: ResponseHead) -> URL? {
        head.links.first { $0.relations.contains("next") }?.target
    }

    /// Runs `work` on the context: at once when the caller is there, unless a change is under
    /// way (an observer told of it calls back, as a `withObservationTracking` handler does inside
    /// `willSet`): then after it. At once, it would change the list in the middle of a change,
    /// and an observer that asks for the next page on every change would recurse without end.
    private func change(_ work: @escaping @Sendable () -> Void) {
        if options.updatesOn.isCurrent, !changing.load(ordering: .relaxed) {
            run(work)
        } else {
            options.updatesOn.async { self.run(work) }
        }
    }

    private func run(_ work: () -> Void) {
        changing.store(true, ordering: .relaxed)
        work()
        changing.store(false, ordering: .relaxed)
    }
}

extension PagedResource where R.ResponseType: Collection {
    /// The elements of every page loaded so far, in order.
    public var items: [R.ResponseType.Element] { pages.flatMap { $0 } }
}

/// One page of a ``PagedResource``, whatever its request's type.
protocol PageSource<Value>: AnyObject, Sendable {
    associatedtype Value: Sendable
    var value: Value? { get }
    var head: ResponseHead? { get }
    var isLoading: Bool { get }
    var error: RequestError? { get }
    func loadIfNeeded()
    func invalidate()
    func refresh() async
    func fetch() async throws(RequestError) -> Value
}

extension Resource: PageSource {}

/// The page a `Link: <…>; rel="next"` names: the first page's request in every way (its type,
/// header fields, decoding, validation) but its URL, which carries its own query.
struct LinkedPage<First: Request>: Request {
    typealias ResponseType = First.ResponseType
    typealias ErrorBody = First.ErrorBody

    let first: First
    let url: URL

    var path: String { url.absoluteString }
    var method: HTTPMethod { .get }
    var headers: [String: String] { first.headers }
    var headerFields: HTTPFields { first.headerFields }
    var timeout: TimeInterval? { first.timeout }
    var cachePolicy: CachePolicy { first.cachePolicy }
    var sharesIdenticalRequests: Bool { first.sharesIdenticalRequests }
    var redirectPolicy: RedirectPolicy? { first.redirectPolicy }
    var decoding: ResponseDecoding? { first.decoding }

    func accepts(_ head: ResponseHead) -> Bool {
        first.accepts(head)
    }

    func makeResponse(body: ResponseData, head: ResponseHead, decoding: ResponseDecoding) throws -> ResponseType {
        try first.makeResponse(body: body, head: head, decoding: decoding)
    }
}
