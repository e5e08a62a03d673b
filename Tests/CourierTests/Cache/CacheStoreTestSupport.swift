import Foundation
@testable import Courier

extension StoredResponse {
    /// A response for the store tests: no header fields unless given, so that its
    /// ``StoredResponse/cost`` is `body.count + 2 * url.utf8.count + 496` plus its keys.
    static func sample(
        _ url: String, body: Data = Data(), headers: HTTPFields = [:], secondaryKey: [String?] = [],
        credentialKey: String? = nil, statusCode: Int = 200
    ) -> StoredResponse {
        StoredResponse(url: url, statusCode: statusCode, headers: headers, body: body, requestTime: 1_700_000_000.25,
                       responseTime: 1_700_000_000.5, secondaryKey: secondaryKey, credentialKey: credentialKey)
    }

    /// A response whose cost is exactly `cost` bytes (at least its cost without a body: about 580
    /// bytes for the tests' URLs).
    static func costing(_ cost: Int, _ url: String, secondaryKey: [String?] = [], credentialKey: String? = nil) -> StoredResponse {
        var response = sample(url, secondaryKey: secondaryKey, credentialKey: credentialKey)
        response.body = Data(repeating: 0x61, count: cost - response.cost)
        return response
    }
}

/// The entry files in a cache directory, by name, with their sizes.
func entryFiles(in directory: URL) throws -> [(name: String, size: Int)] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path)
        .filter { CacheEntryFile.Name(fileName: $0) != nil }
        .sorted()
        .map { name in
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)
            return (name, (attributes[.size] as? NSNumber)?.intValue ?? -1)
        }
}
