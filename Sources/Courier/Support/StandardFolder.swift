import Foundation

/// The platform's folders for what a library keeps on behalf of an app.
enum StandardFolder {
    /// `directory` in the user's domain on Apple platforms; on Linux the XDG base folder named by
    /// `variable` when set, otherwise `fallback` in the home folder.
    static func base(_ directory: FileManager.SearchPathDirectory, xdg variable: String, fallback: String) -> URL {
        #if canImport(Darwin)
        return FileManager.default.urls(for: directory, in: .userDomainMask).first ?? FileManager.default.temporaryDirectory
        #else
        let environment = ProcessInfo.processInfo.environment
        return environment[variable].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(fallback, isDirectory: true)
        #endif
    }
}
