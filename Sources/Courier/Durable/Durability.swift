import Foundation

/// Where a queue journals its durable requests, which response types their results decode into
/// after a restart, and how long they are tried: what ``RequestQueueConfiguration/durability``
/// holds.
///
/// ```swift
/// var configuration = RequestQueueConfiguration.default
/// configuration.durability = Durability(folder: Durability.standardFolder(named: "api"),
///                                       responseTypes: [Message.self, EmptyResponse.self],
///                                       limits: .init(attempts: 20, age: 7 * 86_400, results: 2 * 86_400))
/// let queue = try RequestQueue.open(configuration: configuration, baseURL: api)
/// ```
/// One queue at a time holds a folder (a second one, in this process or another, fails to open
/// with ``JournalError/Kind/heldElsewhere``).
public struct Durability: Sendable {
    /// The folder of the journal (an SQLite database and copies of body files), created when
    /// missing. It must outlive the app's process: not a temporary or caches folder.
    public var folder: URL
    /// The response types that results of requests added before a restart decode into: the app
    /// registers every response type of its durable requests at start-up. A result whose type is
    /// not registered ends with ``RequestError/responseTypeNotRegistered(_:response:body:)``,
    /// keeping the raw response. Default: none.
    public var responseTypes: DurableResponseTypes
    /// How long durable requests are tried, and how long their results are kept. Default:
    /// ``Limits/init(attempts:age:results:maximumPendingRequests:maximumBytes:)``'s defaults.
    public var limits: Limits

    /// Creates the durability of a queue.
    /// - Parameters:
    ///   - folder: The journal's folder; ``standardFolder(named:)`` names the platform's place.
    ///   - responseTypes: The response types results decode into after a restart. Default: none.
    ///   - limits: Attempts, age, and how long results are kept. Default: `Limits()`.
    public init(folder: URL, responseTypes: DurableResponseTypes = [], limits: Limits = Limits()) {
        self.folder = folder
        self.responseTypes = responseTypes
        self.limits = limits
    }

    /// The platform's folder for an app's own data with `Courier/Durable/<name>` appended:
    /// `Library/Application Support` on Apple platforms, `$XDG_DATA_HOME` or `~/.local/share` on
    /// Linux. Not the caches folder, which the system may empty: the journal holds writes the
    /// app promised to send.
    /// ```swift
    /// Durability(folder: Durability.standardFolder(named: "api"))
    /// ```
    public static func standardFolder(named name: String = "default") -> URL {
        StandardFolder.base(.applicationSupportDirectory, xdg: "XDG_DATA_HOME", fallback: ".local/share")
            .appendingPathComponent("Courier/Durable", isDirectory: true).appendingPathComponent(name, isDirectory: true)
    }

    /// How long durable requests are tried and their results kept, and how much the journal
    /// holds. The journal is bounded so that an app offline for days, or an origin that never
    /// answers, cannot fill the disk.
    /// ```swift
    /// var limits = Durability.Limits()
    /// limits.attempts = 5            // then the last failure is the result
    /// ```
    public struct Limits: Sendable, Equatable {
        /// Attempts in all, across restarts, the first included. Default: 20. A durable request
        /// whose attempt fails in a way the queue's ``RequestQueueConfiguration/retryPolicy``
        /// (or ``RetryPolicy/default`` when it has none) retries is tried again, whatever its
        /// method (its Idempotency-Key makes a replay safe), until this many attempts or ``age``;
        /// then the last failure is its result.
        public var attempts: Int
        /// How long after it was added a request may still be tried, in seconds. Default: 7 days.
        public var age: TimeInterval
        /// How long a result nobody has seen is kept, in seconds (2 days by default): the app has
        /// that long to observe it after a relaunch. A result an observer got is removed at the
        /// next opening.
        public var results: TimeInterval
        /// The most durable requests waiting for their result (10,000 by default); adding one more
        /// throws ``JournalError/Kind/boundsReached``.
        public var maximumPendingRequests: Int
        /// The most bytes of requests and kept results (64 MiB by default); adding a request that
        /// would exceed it throws ``JournalError/Kind/boundsReached``.
        public var maximumBytes: Int

        /// Creates limits; every parameter defaults to the value its property documents.
        /// - Parameters:
        ///   - attempts: Attempts in all, across restarts. Default: 20.
        ///   - age: Seconds after adding that a request may still be tried. Default: 7 days.
        ///   - results: Seconds an unseen result is kept. Default: 2 days.
        ///   - maximumPendingRequests: The most requests waiting for a result. Default: 10,000.
        ///   - maximumBytes: The most bytes of requests and results. Default: 64 MiB.
        public init(attempts: Int = 20, age: TimeInterval = 7 * 86_400, results: TimeInterval = 2 * 86_400,
                    maximumPendingRequests: Int = 10_000, maximumBytes: Int = 64 << 20) {
            self.attempts = attempts
            self.age = age
            self.results = results
            self.maximumPendingRequests = maximumPendingRequests
            self.maximumBytes = maximumBytes
        }

        /// SQLite's limit on the journal file's pages, for tests that fill the "disk".
        var maximumPageCount: Int?

        /// The journal's own configuration from these limits.
        var journalConfiguration: JournalConfiguration {
            var configuration = JournalConfiguration()
            configuration.maximumPageCount = maximumPageCount
            configuration.maximumPendingRequests = max(1, maximumPendingRequests)
            configuration.maximumBytes = max(0, maximumBytes)
            configuration.undeliveredResultRetention = max(0, results)
            return configuration
        }
    }
}

/// The response types that durable requests' results decode into after a restart, registered by
/// the app at start-up (a process that starts again no longer knows the request's Swift type,
/// only its name as the journal kept it).
///
/// ```swift
/// var types: DurableResponseTypes = [Message.self, EmptyResponse.self]   // Decodable types
/// types.register(Banner.self)                                            // a Response of your own
/// ```
/// Types are named as `String(reflecting:)` names them (`MyApp.Message`): renaming a type or its
/// module leaves the results of requests journaled under the old name unregistered.
public struct DurableResponseTypes: Sendable, ExpressibleByArrayLiteral {
    /// How one registered type is made from a journaled response.
    struct Maker: Sendable {
        let type: ObjectIdentifier
        let name: String
        let accepts: @Sendable (ResponseHead) -> Bool
        let make: @Sendable (ResponseData, ResponseHead, ResponseDecoding) throws -> any Sendable
    }

    private(set) var makers: [String: Maker] = [:]

    /// No types.
    public init() {}

    /// The `Decodable` types listed, as `[Message.self, EmptyResponse.self]`.
    public init(arrayLiteral elements: any (Decodable & Sendable).Type...) {
        for element in elements { register(element) }
    }

    /// Registers a `Decodable` response type, made as a request of it makes it (JSON with the
    /// queue's ``RequestQueueConfiguration/decoding``; `String` and `Data` take the body as it is).
    public mutating func register<T: Decodable & Sendable>(_ type: T.Type) {
        add(Maker(type: ObjectIdentifier(T.self), name: String(reflecting: T.self),
                  accepts: { ResponseMaking.accepts(T.self, $0) },
                  make: { try ResponseMaking.make(T.self, body: $0, head: $1, decoding: $2) }))
    }

    /// Registers a ``Response`` type, made by its own initializer.
    public mutating func register<T: Response>(_ type: T.Type) {
        add(Maker(type: ObjectIdentifier(T.self), name: String(reflecting: T.self),
                  accepts: { T.accepts($0) },
                  make: { try ResponseMaking.makeResponse(T.self, body: $0, head: $1, decoding: $2) }))
    }

    /// Registers a type that is both a ``Response`` and `Decodable`, made by its own initializer.
    public mutating func register<T: Response & Decodable>(_ type: T.Type) {
        add(Maker(type: ObjectIdentifier(T.self), name: String(reflecting: T.self),
                  accepts: { T.accepts($0) },
                  make: { try ResponseMaking.makeResponse(T.self, body: $0, head: $1, decoding: $2) }))
    }

    /// The names of the registered types, sorted: the names the journal keeps.
    public var names: [String] { makers.keys.sorted() }

    private mutating func add(_ maker: Maker) {
        makers[maker.name] = maker
    }

    subscript(name: String) -> Maker? { makers[name] }
}
