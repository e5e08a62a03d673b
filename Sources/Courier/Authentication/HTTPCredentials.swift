/// User name and password that answer HTTP Basic and Digest authentication challenges
/// (``RequestQueueConfiguration/credentials``).
///
/// ```swift
/// config.credentials = HTTPCredentials(user: "ada", password: "secret")
/// ```
public struct HTTPCredentials: Sendable, Hashable {
    /// The user name.
    public var user: String
    /// The password.
    public var password: String

    /// Creates credentials.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }
}
