import Foundation

/// The error thrown inside the encoder. The key path is collected while the error unwinds,
/// so encoding that succeeds never builds path strings.
struct EncodingFailure: Error {
    enum PathComponent {
        case property(String)
        case index(Int)
        case dictionaryKey(String)
    }

    /// Innermost component first; reversed when formatted.
    var reversedPath: [PathComponent] = []
    var reason: String

    init(_ reason: String) {
        self.reason = reason
    }

    /// The key path in Swift terms: property names as written in the source, `[2]` for array
    /// elements and `["key"]` for dictionary entries, e.g. `user.friends[2].pet` or `tags["color"]`.
    func keyPath(prefix: String? = nil) -> String {
        var path = prefix ?? ""
        for component in reversedPath.reversed() {
            switch component {
            case .property(let name): path += path.isEmpty ? name : "." + name
            case .index(let index): path += "[\(index)]"
            case .dictionaryKey(let key): path += "[\"\(key)\"]"
            }
        }
        return path
    }

    func requestError(prefix: String? = nil) -> RequestError {
        .invalidParameters(keyPath: keyPath(prefix: prefix), reason: reason)
    }
}
