// Mirrors the article "Observable Resources" (Courier.docc/ObservableResources.md).
import Courier
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Observation
import XCTest
#if canImport(SwiftUI)
import SwiftUI
#endif

final class ObservableResourcesDocsTests: XCTestCase {
    struct Profile: Response, Decodable, Equatable { let id: Int; let name: String }

    struct ProfileRequest: Request {
        typealias ResponseType = Profile
        let userID: Int
        var path: String { "/users/\(userID)" }
        var method: HTTPMethod { .get }
    }

    struct Post: Decodable, Identifiable, Sendable { let id: Int; let title: String }
    struct PostsPage: Response, Decodable { let number: Int; let hasMore: Bool; let posts: [Post] }

    struct PostsRequest: Request {
        typealias ResponseType = PostsPage
        var page = 1
        var path: String { "/posts?page=\(page)" }
        var method: HTTPMethod { .get }
    }

    struct NewPostRequest: Request {
        typealias ResponseType = EmptyResponse
        let title: String
        var path: String { "/posts" }
        var method: HTTPMethod { .post }
    }

    #if canImport(SwiftUI)
    // Overview (verbatim): type-checked where SwiftUI exists.
    struct ProfileView: View { let user: Profile; let stale: Bool; var body: some View { Text(user.name) } }
    struct ErrorView: View { let error: RequestError; init(_ error: RequestError) { self.error = error }; var body: some View { Text("\(error)") } }
    struct PostRow: View { let post: Post; var body: some View { Text(post.title) } }

    struct ProfileScreen: View {
        @State private var profile = RequestQueue.shared.resource(ProfileRequest(userID: 42))

        var body: some View {
            Group {
                switch profile.phase {
                case .idle, .loading: ProgressView()
                case .loaded(let user): ProfileView(user: user, stale: profile.isStale)
                case .failed(let error): ErrorView(error)
                }
            }
            .refreshable { await profile.refresh() }
            .task { await profile.watch() }
        }
    }

    // Pages (verbatim).
    struct PostsScreen: View {
        @State private var posts = RequestQueue.shared.pages(PostsRequest())

        var body: some View {
            List {
                ForEach(posts.items) { PostRow(post: $0) }
                if posts.hasMore { ProgressView().task { posts.loadNextPage() } }
            }
            .task { posts.loadIfNeeded() }
        }
    }
    #endif

    private let changes = DispatchQueue(label: "ObservableResourcesDocsTests.changes")

    func testOneResourcePerRequest() {
        let queue = DocsSupport.queue(FixtureTransport())
        // One resource per request (verbatim)
        let a = queue.resource(ProfileRequest(userID: 42))
        let b = queue.resource(ProfileRequest(userID: 42))   // a === b
        XCTAssertTrue(a === b)
    }

    func testWritesMakeResourcesStale() async throws {
        // Given a posts list and a post, loaded and fresh for a minute
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/v1/posts", query: ["page": "1"], headers: ["Cache-Control": "max-age=60"],
                      json: #"{"number": 1, "hasMore": false, "posts": []}"#)
        fixtures.stub(.post, "/v1/posts", status: 201, json: "{}")
        let queue = DocsSupport.queue(fixtures)
        let options = ResourceOptions(updatesOn: .queue(changes))
        let list = queue.resource(PostsRequest(), options: options)
        _ = try await list.fetch()
        XCTAssertFalse(list.isStale)

        // Writes make resources stale (verbatim but for the base URL)
        try await queue.send(NewPostRequest(title: "Hello"))
        queue.invalidateResources(under: URL(string: "https://api.example.com/v1/posts")!)
        // /posts, /posts?page=2 and /posts/7 are stale; the watched ones reload.

        changes.sync {}
        XCTAssertTrue(list.isStale)
    }

    func testPagesByARuleOfYours() async throws {
        let fixtures = FixtureTransport()
        fixtures.stub(.get, "/v1/posts", query: ["page": "1"], json: #"{"number": 1, "hasMore": true, "posts": [{"id": 1, "title": "a"}]}"#)
        fixtures.stub(.get, "/v1/posts", query: ["page": "2"], json: #"{"number": 2, "hasMore": false, "posts": [{"id": 2, "title": "b"}]}"#)
        let queue = DocsSupport.queue(fixtures)

        // Pages (verbatim but for the options)
        let posts = queue.pages(PostsRequest(page: 1), options: ResourceOptions(updatesOn: .queue(changes))) { page, _ in
            page.hasMore ? PostsRequest(page: page.number + 1) : nil
        }

        var titles: [String] = []
        // Pages › reading every page (verbatim but for the print)
        while let page = try await posts.nextPage() {
            titles += page.posts.map(\.title)
        }
        XCTAssertEqual(titles, ["a", "b"])
        XCTAssertFalse(posts.hasMore)
    }

    func testWithoutAView() async throws {
        let fixtures = FixtureTransport()
        fixtures.holdsAnswers = true
        fixtures.stub(.get, "/v1/users/42", json: #"{"id": 42, "name": "Ada"}"#)
        let queue = DocsSupport.queue(fixtures)
        let printed = Recorder<String>()
        @Sendable func print(_ line: String) { printed.append(line) }

        // Without a view (verbatim but for print, and the answer held until the loading line shows)
        let changes = DispatchQueue(label: "profile")
        let profile = queue.resource(ProfileRequest(userID: 42), options: ResourceOptions(updatesOn: .queue(changes)))

        @Sendable func show() {
            // Told before a change: read the resource once the change is over.
            let line = withObservationTracking { "\(profile.phase)" } onChange: { changes.async(execute: show) }
            print(line)
        }
        changes.sync(execute: show)                  // idle
        async let fetched = profile.fetch()          // loading, then loaded(…)
        let held = try await fixtures.waitForHeldRequests(1)
        changes.sync {}
        fixtures.release(held[0])
        let user = try await fetched

        changes.sync {}
        XCTAssertEqual(user.name, "Ada")
        XCTAssertEqual(printed.all.count, 3, "\(printed.all)")
        XCTAssertEqual(printed.all.prefix(2), ["idle", "loading"])
        XCTAssertTrue(printed.all.last?.hasPrefix("loaded(") == true, "\(printed.all)")
    }

}
