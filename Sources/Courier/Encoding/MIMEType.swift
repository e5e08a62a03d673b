import Foundation

/// MIME types of common file extensions, for file parts appended without a `mimeType`.
/// A small table rather than a system database, so the result is the same on every platform.
enum MIMEType {
    /// `application/octet-stream`: what a file part is when its type is unknown.
    static let fallback = "application/octet-stream"

    private static let byExtension: [String: String] = [
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "heic": "image/heic", "svg": "image/svg+xml", "bmp": "image/bmp",
        "tif": "image/tiff", "tiff": "image/tiff", "ico": "image/vnd.microsoft.icon",
        "pdf": "application/pdf", "json": "application/json", "xml": "application/xml",
        "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
        "txt": "text/plain", "html": "text/html", "htm": "text/html", "css": "text/css",
        "csv": "text/csv", "md": "text/markdown", "js": "text/javascript",
        "mp4": "video/mp4", "m4v": "video/x-m4v", "mov": "video/quicktime", "webm": "video/webm",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "wav": "audio/wav", "aac": "audio/aac", "ogg": "audio/ogg",
    ]

    /// The MIME type for `fileName`'s extension (case-insensitive), or ``fallback``.
    static func guess(forFileName fileName: String) -> String {
        guard let dot = fileName.lastIndex(of: ".") else { return fallback }
        return byExtension[fileName[fileName.index(after: dot)...].lowercased()] ?? fallback
    }
}
