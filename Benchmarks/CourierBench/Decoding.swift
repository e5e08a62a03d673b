import Courier
import Foundation

// Response decoding: a page of 20 posts, decoded by the queue's ResponseDecoding against
// JSONDecoder alone set up to read the same JSON: snake_case keys with ISO 8601 dates (against
// .convertFromSnakeCase and .iso8601), and keys as declared (the default, against a plain
// JSONDecoder).

struct BenchPost: Decodable, Sendable {
    let id: Int
    let title: String
    let bodyText: String
    let publishedAt: Date
    let commentCount: Int
    let tags: [String]
    let author: BenchAuthor
}

struct BenchAuthor: Decodable, Sendable {
    let displayName: String
    let profileURL: URL
}

/// The page as an API writes it: `snake` for snake_case keys, or keys as declared.
private func postsPage(snake: Bool) -> Data {
    let posts = (0..<20).map { index in
        let keys = snake
            ? ["body_text", "published_at", "comment_count", "display_name", "profile_url"]
            : ["bodyText", "publishedAt", "commentCount", "displayName", "profileURL"]
        let date = snake ? "\"2026-11-25T10:\(10 + index % 50):00Z\"" : "\(785_000_000 + index)"
        return """
        {"id": \(index), "title": "Post \(index)", "\(keys[0])": "Some text, with \\"quotes\\" and a newline\\n.", \
        "\(keys[1])": \(date), "\(keys[2])": \(index * 3), "tags": ["swift", "linux"], \
        "author": {"\(keys[3])": "Ada", "\(keys[4])": "https://example.com/users/\(index)"}}
        """
    }
    return Data(("[" + posts.joined(separator: ",") + "]").utf8)
}

func decodingFigure(_ bench: Bench) -> [Row] {
    let count = bench.options.count(5_000, quick: 1_000)
    let snakeBody = postsPage(snake: true)
    let plainBody = postsPage(snake: false)
    let foundationSnake = JSONDecoder()
    foundationSnake.keyDecodingStrategy = .convertFromSnakeCase
    foundationSnake.dateDecodingStrategy = .iso8601
    let foundationPlain = JSONDecoder()
    let courierSnake = ResponseDecoding(keyStyle: .snakeCase, dateStyle: .iso8601)
    let courierPlain = ResponseDecoding.default
    var failures = 0
    var decoded = 0
    func opsPerSecond(_ body: () throws -> [BenchPost]) -> Double {
        let start = now()
        for _ in 0..<count {
            do { decoded &+= try body().count } catch { failures += 1 }
        }
        return Double(count) / (now() - start)
    }
    // `profileURL` is `profile_url` in the JSON: .convertFromSnakeCase makes it `profileUrl`,
    // which is not the property's name, so JSONDecoder needs a type with CodingKeys of its own.
    let results = interleaved(rounds: bench.rounds, [
        Contender("JSONDecoder, snake_case") { opsPerSecond { try foundationSnake.decode([FoundationPost].self, from: snakeBody).map(\.post) } },
        Contender("Courier, snake_case") { opsPerSecond { try courierSnake.decode([BenchPost].self, from: ResponseData(snakeBody)) } },
        Contender("JSONDecoder") { opsPerSecond { try foundationPlain.decode([BenchPost].self, from: plainBody) } },
        Contender("Courier, default") { opsPerSecond { try courierPlain.decode([BenchPost].self, from: ResponseData(plainBody)) } },
    ])
    let figure = "Decoding a page of 20 posts (\(grouped(count)) pages per round)"
    let note = failures > 0 ? "\(failures) decoding errors" : "\(decoded) posts decoded in all"
    return [
        Row(figure: figure, variant: "snake_case keys, ISO 8601 dates", unit: "pages/s", courier: results[1],
            baselineName: "JSONDecoder, .convertFromSnakeCase, .iso8601", baseline: results[0], target: .ratioAtLeast(1.0),
            errors: failures, note: note),
        Row(figure: figure, variant: "keys as declared (the default)", unit: "pages/s", courier: results[3],
            baselineName: "JSONDecoder", baseline: results[2], target: .ratioAtLeast(1.0), errors: failures),
    ]
}

/// The post as JSONDecoder's .convertFromSnakeCase sees it: `profileUrl`, not `profileURL`.
private struct FoundationPost: Decodable {
    let id: Int
    let title: String
    let bodyText: String
    let publishedAt: Date
    let commentCount: Int
    let tags: [String]
    let author: Author

    struct Author: Decodable {
        let displayName: String
        let profileUrl: URL
    }

    var post: BenchPost {
        // Built by the same memberwise path for both, so only decoding differs.
        BenchPost(id: id, title: title, bodyText: bodyText, publishedAt: publishedAt, commentCount: commentCount,
                  tags: tags, author: BenchAuthor(displayName: author.displayName, profileURL: author.profileUrl))
    }
}
