import Foundation
import XCTest
@testable import Courier
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The cache's store on disk: its files, their format and checks, its index across a reopen, and
/// the directory it owns.
final class DiskStoreTests: XCTestCase {
    private var directory: URL!
    private var cleanUps: [() -> Void] = []

    private let a = "https://a.test/1"
    private let b = "https://a.test/2"
    private let c = "https://a.test/3"
    private let d = "https://a.test/4"

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-disk-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        for cleanUp in cleanUps.reversed() { cleanUp() }
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Round trip

    func testEveryFieldSurvivesAReopen() throws {
        // Given responses with every kind of field: nil and empty secondary key values, a
        // credential, an empty body, every byte value, header fields in several scripts
        let binary = StoredResponse(
            url: a, statusCode: 206, headers: ["Content-Type": "application/octet-stream", "ETag": "W/\"ü\""],
            body: Data((0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 7) }), requestTime: 1_700_000_123.456_789,
            responseTime: 1_700_000_124.000_001, secondaryKey: [nil, "", "gzip, br"], credentialKey: "c2VjcmV0")
        let empty = StoredResponse(
            url: b + "?q=%C3%A9&x=1", statusCode: 204, headers: [:], body: Data(), requestTime: 0, responseTime: -1.5,
            secondaryKey: [], credentialKey: nil)
        let unicode = StoredResponse(
            url: c, statusCode: 200, headers: ["X-Grüße": "日本語 — ελληνικά 🚀", "Vary": "Accept-Language"],
            body: Data("∑ body".utf8), requestTime: 1, responseTime: 2, secondaryKey: ["fr-CH, fr;q=0.9"], credentialKey: "")
        var store: DiskStore? = try open(capacity: 1 << 20)
        for response in [binary, empty, unicode] { store!.store(response) }
        // When the store is released and the directory opened again
        store = try reopen(&store, capacity: 1 << 20)
        // Then each response comes back equal in every field
        XCTAssertEqual(store!.responses(for: binary.url), [binary])
        XCTAssertEqual(store!.responses(for: empty.url), [empty])
        XCTAssertEqual(store!.responses(for: unicode.url), [unicode])
        XCTAssertEqual(store!.size, try entryFiles().reduce(0) { $0 + $1.size })
    }

    func testAResponseIsServedAtOnceAndFromItsFileAfterwards() throws {
        // Given a store
        let store = try open(capacity: 1 << 20)
        let response = StoredResponse.sample(a, body: Data(repeating: 0x42, count: 100_000))
        // When a response is stored, it is read back before any flush (from memory or from disk)
        store.store(response)
        XCTAssertEqual(store.responses(for: a), [response])
        // Then after the flush its file is there, of the size the store counts
        store.flush()
        let files = try entryFiles()
        XCTAssertEqual(files.map(\.name), [CacheEntryFile.Name(of: response).fileName])
        XCTAssertEqual(files.first?.size, CacheEntryFile.encodedSize(of: response))
        XCTAssertEqual(store.size, files.first?.size)
        XCTAssertEqual(store.responses(for: a), [response])
    }

    func testVariantsAreFilesSharingTheURLsHashMostRecentlyStoredFirst() throws {
        // Given three variants of one URL and another URL
        var store: DiskStore? = try open(capacity: 1 << 20)
        let gzip = StoredResponse.sample(a, body: Data("gzip".utf8), secondaryKey: ["gzip"])
        let absent = StoredResponse.sample(a, body: Data("none".utf8), secondaryKey: [nil])
        let personal = StoredResponse.sample(a, body: Data("mine".utf8), secondaryKey: ["gzip"], credentialKey: "k")
        for response in [gzip, absent, personal, .sample(b)] { store!.store(response) }
        store!.flush()
        // Then each is a file, the three of A named with A's hash first
        let prefix = CacheEntryFile.Name.hex(CacheEntryFile.urlHash(a)) + "-"
        XCTAssertEqual(try entryFiles().filter { $0.name.hasPrefix(prefix) }.count, 3)
        XCTAssertEqual(try entryFiles().count, 4)
        // And they come back the most recently stored first, before and after a reopen
        XCTAssertEqual(store!.responses(for: a), [personal, absent, gzip])
        store = try reopen(&store, capacity: 1 << 20)
        XCTAssertEqual(store!.responses(for: a), [personal, absent, gzip])
        // And storing one again replaces its file and puts it first
        var newer = gzip
        newer.body = Data("newer gzip".utf8)
        store!.store(newer)
        store = try reopen(&store, capacity: 1 << 20)
        XCTAssertEqual(store!.responses(for: a), [newer, personal, absent])
        XCTAssertEqual(try entryFiles().count, 4)
    }

    // MARK: Bound and eviction

    func testTheLeastRecentlyUsedIsEvictedAcrossAReopen() throws {
        // Given room for three files of the same size, A, B, C stored, then A read
        let entrySize = try XCTUnwrap(CacheEntryFile.encodedSize(of: .sample(a, body: Data(count: 100))))
        var store: DiskStore? = try open(capacity: 3 * entrySize)
        for url in [a, b, c] { store!.store(.sample(url, body: Data(count: 100))) }
        store!.flush()
        XCTAssertEqual(store!.responses(for: a).count, 1)
        // When the store is opened again and D stored
        store = try reopen(&store, capacity: 3 * entrySize)
        XCTAssertEqual(store!.size, 3 * entrySize)
        store!.store(.sample(d, body: Data(count: 100)))
        store!.flush()
        // Then B, the least recently used before the reopen, is gone, from the index and the disk
        XCTAssertEqual([a, b, c, d].map { store!.responses(for: $0).count }, [1, 0, 1, 1])
        XCTAssertEqual(try Set(entryFiles().map(\.name)), Set([a, c, d].map { CacheEntryFile.Name(of: .sample($0)).fileName }))
        XCTAssertEqual(store!.size, 3 * entrySize)
    }

    func testLastUsesAreWrittenWhenTheStoreIsReleased() throws {
        // Given A, B, C on disk, then A read, and the store released at once, without a flush
        let entrySize = try XCTUnwrap(CacheEntryFile.encodedSize(of: .sample(a)))
        var store: DiskStore? = try open(capacity: 3 * entrySize)
        for url in [a, b, c] { store!.store(.sample(url)) }
        store!.flush()
        XCTAssertEqual(store!.responses(for: a).count, 1)
        weak let released = store
        store = nil
        XCTAssertNil(released, "the delayed writing of uses does not keep the store")
        // When the directory is opened again and D stored
        store = try open(capacity: 3 * entrySize)
        store!.store(.sample(d))
        // Then B went: A's read reached the disk
        XCTAssertEqual([a, b, c, d].map { store!.responses(for: $0).count }, [1, 0, 1, 1])
    }

    func testTheBoundHoldsAfterEveryWriteAndAcrossASmallerReopen() throws {
        // Given a store of 10 KB and responses of various sizes stored in turn
        var store: DiskStore? = try open(capacity: 10_000)
        for index in 0..<60 {
            store!.store(.sample("https://bound.test/\(index % 25)", body: Data(count: (index * 397) % 3_000)))
            // Then after every write the files fit, and the store counts what the disk holds
            store!.flush()
            let onDisk = try entryFiles().reduce(0) { $0 + $1.size }
            XCTAssertLessThanOrEqual(onDisk, 10_000)
            XCTAssertEqual(store!.size, onDisk)
        }
        // When it is opened again with half the capacity
        store = try reopen(&store, capacity: 5_000)
        // Then the least recently used files went at once
        let onDisk = try entryFiles().reduce(0) { $0 + $1.size }
        XCTAssertLessThanOrEqual(onDisk, 5_000)
        XCTAssertEqual(store!.size, onDisk)
        XCTAssertEqual(store!.responses(for: "https://bound.test/9").count, 1, "the last one stored was kept")
    }

    func testAResponseLargerThanTheCapacityIsNotStoredAndReplacesNothing() throws {
        let small = StoredResponse.sample(a, body: Data(count: 10))
        let capacity = try XCTUnwrap(CacheEntryFile.encodedSize(of: small)) + 50
        let store = try open(capacity: capacity)
        store.store(small)
        store.store(.sample(a, body: Data(count: 61)))
        store.flush()
        XCTAssertEqual(store.responses(for: a), [small])
        XCTAssertEqual(try entryFiles().count, 1)
        store.store(.sample(a, body: Data(count: 60)))  // exactly the capacity
        store.flush()
        XCTAssertEqual(store.responses(for: a).first?.body.count, 60)
        XCTAssertEqual(store.size, capacity)
    }

    func testRemovingDeletesTheFiles() throws {
        // Given two variants of A, and B
        let store = try open(capacity: 1 << 20)
        store.store(.sample(a, secondaryKey: ["1"]))
        store.store(.sample(a, secondaryKey: ["2"]))
        store.store(.sample(b))
        // When A is removed
        store.removeResponses(for: a)
        store.flush()
        // Then only B's file is left
        XCTAssertEqual(store.responses(for: a), [])
        XCTAssertEqual(try entryFiles().map(\.name), [CacheEntryFile.Name(of: .sample(b)).fileName])
        // And after removeAll nothing is, though other files stay
        try Data("mine".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        store.store(.sample(c))
        store.removeAll()
        store.flush()
        XCTAssertEqual(try entryFiles().count, 0)
        XCTAssertEqual(store.size, 0)
        XCTAssertEqual([a, b, c].map { store.responses(for: $0).count }, [0, 0, 0])
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("notes.txt").path))
    }

    // MARK: Damaged files

    func testAFlippedByteAnywhereIsNeverServedAndTheFileIsRemoved() throws {
        let response = StoredResponse.sample(a, body: Data("a body of some length".utf8), headers: ["ETag": "\"1\""])
        let length = try XCTUnwrap(CacheEntryFile.encodedSize(of: response))
        // Given a byte flipped at the start, in the URL, in the headers, in the body and in the checksum
        for offset in [0, 9, 50, length - 30, length - 12, length - 1] {
            try assertDamageIsDetected(response, "byte \(offset)") { $0[offset] ^= 0x20 }
        }
    }

    func testATruncatedOrEmptyFileIsNeverServedAndIsRemoved() throws {
        let response = StoredResponse.sample(a, body: Data(repeating: 7, count: 300))
        for kept in [0, 5, 44, 100, 300] {
            try assertDamageIsDetected(response, "\(kept) bytes kept") { $0.removeLast($0.count - kept) }
        }
        try assertDamageIsDetected(response, "one byte more") { $0.append(0) }
    }

    func testAnotherFormatVersionIsNeverServedAndIsRemoved() throws {
        // Given a file whose version alone differs: its checksum is right for its bytes
        try assertDamageIsDetected(.sample(a), "version 2") { bytes in
            bytes[8] = 2
            bytes.removeLast(8)
            let checksum = XXH64.hash(bytes)
            bytes.append(contentsOf: (0..<8).map { UInt8(truncatingIfNeeded: checksum >> (8 * $0)) })
        }
    }

    func testSwappedFileNamesAreNeverServedAndAreRemoved() throws {
        // Given two sound files, each under the other's name
        var store: DiskStore? = try open(capacity: 1 << 20)
        let first = StoredResponse.sample(a, body: Data("first".utf8))
        let second = StoredResponse.sample(b, body: Data("second".utf8))
        store!.store(first)
        store!.store(second)
        store!.flush()
        store = nil
        let firstPath = directory.appendingPathComponent(CacheEntryFile.Name(of: first).fileName).path
        let secondPath = directory.appendingPathComponent(CacheEntryFile.Name(of: second).fileName).path
        XCTAssertEqual(rename(firstPath, firstPath + ".x"), 0)
        XCTAssertEqual(rename(secondPath, firstPath), 0)
        XCTAssertEqual(rename(firstPath + ".x", secondPath), 0)
        // When the store opens and reads both URLs
        store = try open(capacity: 1 << 20)
        // Then neither is served, both files are gone
        XCTAssertEqual(store!.responses(for: a), [])
        XCTAssertEqual(store!.responses(for: b), [])
        store!.flush()
        XCTAssertEqual(try entryFiles().count, 0)
        XCTAssertEqual(store!.size, 0)
    }

    func testAFileOfAnotherVariantUnderAVariantsNameIsNotServed() throws {
        // Given the file of A's gzip variant copied under the name of its br variant
        var store: DiskStore? = try open(capacity: 1 << 20)
        let gzip = StoredResponse.sample(a, body: Data("gzip".utf8), secondaryKey: ["gzip"])
        let brotli = StoredResponse.sample(a, body: Data("br".utf8), secondaryKey: ["br"])
        store!.store(gzip)
        store!.store(brotli)
        store!.flush()
        store = nil
        let gzipFile = directory.appendingPathComponent(CacheEntryFile.Name(of: gzip).fileName)
        let brotliFile = directory.appendingPathComponent(CacheEntryFile.Name(of: brotli).fileName)
        try FileManager.default.removeItem(at: brotliFile)
        try FileManager.default.copyItem(at: gzipFile, to: brotliFile)
        // When A is read
        store = try open(capacity: 1 << 20)
        // Then only the true gzip file is served, and the impostor is gone
        XCTAssertEqual(store!.responses(for: a), [gzip])
        store!.flush()
        XCTAssertEqual(try entryFiles().map(\.name), [gzipFile.lastPathComponent])
    }

    /// Stores `response`, damages its file with `damage` while no store is open, opens the
    /// store again and checks that the response is not served and the file is gone.
    private func assertDamageIsDetected(
        _ response: StoredResponse, _ label: String, file: StaticString = #filePath, line: UInt = #line,
        damage: (inout [UInt8]) -> Void
    ) throws {
        var store: DiskStore? = try open(capacity: 1 << 20)
        store!.removeAll()
        store!.store(response)
        store!.store(.sample(d))
        store!.flush()
        let path = directory.appendingPathComponent(CacheEntryFile.Name(of: response).fileName)
        store = nil
        var bytes = [UInt8](try Data(contentsOf: path))
        XCTAssertNotNil(CacheEntryFile.decode(bytes), "the file was sound before (\(label))", file: file, line: line)
        damage(&bytes)
        try Data(bytes).write(to: path)
        XCTAssertNil(CacheEntryFile.decode(bytes), "the damage is seen (\(label))", file: file, line: line)

        store = try open(capacity: 1 << 20)
        XCTAssertEqual(store!.responses(for: response.url), [], label, file: file, line: line)
        store!.flush()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path.path), "the file is removed (\(label))", file: file, line: line)
        XCTAssertEqual(store!.responses(for: d).count, 1, "the sound file is still served (\(label))", file: file, line: line)
        XCTAssertEqual(store!.size, try entryFiles().reduce(0) { $0 + $1.size }, label, file: file, line: line)
    }

    func testLeftoverTemporaryFilesAreRemovedAtOpenAndOtherFilesLeftAlone() throws {
        // Given a directory with temporary files of a crashed writer, a file of the user's, and
        // a file that looks almost like an entry
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in [".tmp-0123456789abcdef", ".tmp-probe", ".tmp-"] {
            try Data("torn".utf8).write(to: directory.appendingPathComponent(name))
        }
        let others = ["notes.txt", "0123456789ABCDEF-0123456789abcdef.courier-cache"]
        for name in others { try Data("other".utf8).write(to: directory.appendingPathComponent(name)) }
        // When the store opens
        let store = try open(capacity: 1 << 20)
        // Then the temporary files are gone, the others are there and not counted
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        XCTAssertEqual(Set(names), Set(others + [CacheDirectory.lockFileName]))
        XCTAssertEqual(store.size, 0)
    }

    // MARK: The directory

    func testOpeningTheSameDirectoryTwiceGivesTheSameStore() throws {
        // Given a store open on a directory
        let store = try open(capacity: 1000)
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("courier-link-\(UUID().uuidString)")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: directory)
        cleanUps.append { try? FileManager.default.removeItem(at: link) }
        // When it is opened again, however the path is spelled
        let spellings = [directory!, URL(fileURLWithPath: directory.path + "/"),
                         directory.appendingPathComponent("sub").appendingPathComponent(".."),
                         directory.appendingPathComponent("."), link]
        for spelling in spellings {
            // Then it is the same store, with the capacity it was first opened with
            let again = try DiskStore.open(directory: spelling, capacity: 5)
            XCTAssertTrue(again === store, spelling.path)
            XCTAssertEqual(again.capacity, 1000)
        }
        // And what one stores the other reads
        try DiskStore.open(directory: directory, capacity: 1000).store(.sample(a))
        XCTAssertEqual(store.responses(for: a).count, 1)
    }

    func testAReleasedStoreGivesTheDirectoryBack() throws {
        // Given a store opened and released
        var store: DiskStore? = try open(capacity: 1000)
        store!.store(.sample(a))
        store = try reopen(&store, capacity: 1000)
        store = nil
        // Then nobody holds the lock file any more
        let descriptor = openForLocking(directory.appendingPathComponent(CacheDirectory.lockFileName).path)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        XCTAssertEqual(flock(descriptor, LOCK_EX | LOCK_NB), 0, "the lock was given back")
        // And while this descriptor holds it, opening fails as if another process held it
        XCTAssertThrowsError(try open(capacity: 1000)) { error in
            XCTAssertEqual(error as? CacheStoreError, .usedByAnotherProcess(directory.resolvingSymlinksInPath().path))
        }
    }

    func testADirectoryThatCannotBeCreatedIsATypedError() throws {
        // Given a path below a regular file
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("file")
        try Data().write(to: file)
        let path = file.appendingPathComponent("cache")
        // Then opening throws, naming the path and what to do
        XCTAssertThrowsError(try DiskStore.open(directory: path, capacity: 1000)) { error in
            guard case .cannotCreateDirectory(let named, _)? = error as? CacheStoreError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(named, path.path)
            XCTAssertTrue("\(error)".contains("Cannot create the cache directory \(path.path) ("), "\(error)")
            XCTAssertTrue("\(error)".hasSuffix("until then responses are cached in memory only."), "\(error)")
        }
    }

    func testAReadOnlyDirectoryIsATypedErrorAtOpen() throws {
        // Given a directory this process cannot write in
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try makeReadOnly(directory)
        // Then opening it throws, and says so
        XCTAssertThrowsError(try open(capacity: 1000)) { error in
            guard case .cannotWrite(let path, _)? = error as? CacheStoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, directory.resolvingSymlinksInPath().path)
            XCTAssertTrue("\(error)".contains("Make it writable by this process"), "\(error)")
        }
    }

    func testAWriteIntoADirectoryThatBecameReadOnlyIsDropped() throws {
        // Given a store with one response on disk, whose directory then became read-only
        let store = try open(capacity: 1 << 20)
        let kept = StoredResponse.sample(a)
        store.store(kept)
        store.flush()
        try makeReadOnly(directory)
        // When another response is stored, and a variant of the first replaced
        store.store(.sample(b))
        store.store(.sample(a, body: Data("newer".utf8)))
        store.flush()
        // Then neither is served, and nothing was written; the first file is what it was
        XCTAssertEqual(store.responses(for: b), [])
        XCTAssertEqual(store.responses(for: a), [])
        XCTAssertEqual(store.size, 0)
        XCTAssertEqual(try entryFiles().count, 1)
    }

    func testAWriteIntoARemovedDirectoryIsDropped() throws {
        // Given a store whose directory was removed behind its back
        let store = try open(capacity: 1 << 20)
        try FileManager.default.removeItem(at: directory)
        // When a response is stored
        store.store(.sample(a))
        store.flush()
        // Then it is not served, nothing is counted, and the store works on once the directory is back
        XCTAssertEqual(store.responses(for: a), [])
        XCTAssertEqual(store.size, 0)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store.store(.sample(b))
        store.flush()
        XCTAssertEqual(store.responses(for: b).count, 1)
    }

    // MARK: Threads

    func testConcurrentUseKeepsTheIndexAndTheFilesInStep() throws {
        // Given eight threads storing, reading and removing overlapping URLs
        let store = try open(capacity: 40_000)
        let wrongBodies = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<150 {
                let url = "https://threads.test/\((index * 7 + thread) % 30)"
                switch index % 10 {
                case 0: store.removeResponses(for: url)
                case 1, 2, 3:
                    for response in store.responses(for: url) where response.body != Self.body(for: url, response.secondaryKey) {
                        wrongBodies.withLock { $0 += 1 }
                    }
                default:
                    let key = [String(thread % 3)]
                    store.store(.sample(url, body: Self.body(for: url, key), secondaryKey: key))
                }
            }
        }
        store.flush()
        // Then every read was right, the files are what the index says, within the bound, and every one is served
        XCTAssertEqual(wrongBodies.withLock { $0 }, 0)
        let files = try entryFiles()
        XCTAssertEqual(store.size, files.reduce(0) { $0 + $1.size })
        XCTAssertLessThanOrEqual(store.size, 40_000)
        let served = (0..<30).flatMap { store.responses(for: "https://threads.test/\($0)") }
        XCTAssertEqual(served.count, files.count)
    }

    private static func body(for url: String, _ key: [String?]) -> Data {
        let text = url + (key.first.flatMap { $0 } ?? "-")
        return Data(String(repeating: text, count: 1 + text.utf8.count % 40).utf8)
    }

    // MARK: The file format

    func testXXH64MatchesTheReference() {
        // Values of the reference implementation (libxxhash 0.8.1, seed 0), across its code paths
        XCTAssertEqual(XXH64.hash([]), 0xEF46_DB37_51D8_E999)
        XCTAssertEqual(XXH64.hash(Array("a".utf8)), 0xD24E_C4F1_A98C_6E5B)
        XCTAssertEqual(XXH64.hash(Array("abc".utf8)), 0x44BC_2CF5_AD77_0999)
        XCTAssertEqual(XXH64.hash(Array("0123456789abcdef0123456789abcdef0123456789".utf8)), 0xA761_90C3_ACF0_8A1C)
        let long = Array(repeating: Array(0...255 as ClosedRange<UInt8>), count: 3).flatMap { $0 } + Array("xyz".utf8)
        XCTAssertEqual(XXH64.hash(long), 0xE921_A1B4_5BD7_79F8)
        XCTAssertEqual(XXH64.hash(long, seed: 0x9E37_79B9_7F4A_7C15), 0x179C_A020_1A65_D20E)
        XCTAssertEqual(XXH64.hash([0] + long + [0], 1..<(long.count + 1)), 0xE921_A1B4_5BD7_79F8)
    }

    func testTheEncodingIsTheDocumentedLayout() throws {
        // Given a small response with a repeated field
        let fields: HTTPFields = [HTTPField(name: "B", value: "2"), HTTPField(name: "A", value: "1"), HTTPField(name: "b", value: "3")]
        let response = StoredResponse(url: "http://x/", statusCode: 200, headers: fields, body: Data([0xFF]),
                                      requestTime: 1, responseTime: 2, secondaryKey: [nil, "v"], credentialKey: nil)
        // When it is encoded
        let bytes = CacheEntryFile.encode(response, storedAt: 3)
        // Then it is laid out byte for byte as documented (the fields in their order), its size predicted
        func le(_ value: UInt64, _ width: Int) -> [UInt8] { (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        var expected = Array("CourierC".utf8) + le(1, 4) + le(3.0.bitPattern, 8) + le(1.0.bitPattern, 8) + le(2.0.bitPattern, 8)
        expected += le(200, 8) + le(9, 4) + Array("http://x/".utf8)
        expected += le(0xFFFF_FFFF, 4) + le(2, 4) + le(0xFFFF_FFFF, 4) + le(1, 4) + Array("v".utf8)
        expected += le(3, 4) + le(1, 4) + Array("B".utf8) + le(1, 4) + Array("2".utf8) + le(1, 4) + Array("A".utf8) + le(1, 4) + Array("1".utf8)
        expected += le(1, 4) + Array("b".utf8) + le(1, 4) + Array("3".utf8)
        expected += le(1, 8) + [0xFF]
        expected += le(XXH64.hash(expected), 8)
        XCTAssertEqual(bytes, expected)
        XCTAssertEqual(CacheEntryFile.encodedSize(of: response), bytes.count)
        // And it decodes to the response, with the name its URL and variant give it
        let contents = try XCTUnwrap(CacheEntryFile.decode(bytes))
        XCTAssertEqual(contents.response, response)
        XCTAssertEqual(contents.storedAt, 3)
        XCTAssertEqual(contents.name, CacheEntryFile.Name(of: response))
    }

    func testNamesAreHashesInHex() throws {
        let response = StoredResponse.sample(a, secondaryKey: ["gzip"])
        let name = CacheEntryFile.Name(of: response)
        XCTAssertEqual(name.urlHash, XXH64.hash(Array(a.utf8)))
        XCTAssertEqual(name.fileName.count, 16 + 1 + 16 + ".courier-cache".count)
        XCTAssertEqual(CacheEntryFile.Name(fileName: name.fileName), name)
        XCTAssertEqual(CacheEntryFile.Name.hex(0x0123_4567_89AB_CDEF), "0123456789abcdef")
        for wrong in ["", ".tmp-0123456789abcdef", "0123456789abcdef-0123456789abcdef.courier-cach",
                      "0123456789abcdeg-0123456789abcdef.courier-cache", "0123456789abcdef_0123456789abcdef.courier-cache",
                      "0123456789abcdef-0123456789abcdef.courier-cachee", "0123456789ABCDEF-0123456789abcdef.courier-cache"] {
            XCTAssertNil(CacheEntryFile.Name(fileName: wrong), wrong)
        }
    }

    func testResponsesOfEveryShapeRoundTripThroughTheFormat() throws {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            let response = StoredResponse(
                url: "https://r.test/" + String(repeating: "é", count: Int.random(in: 0..<40, using: &random)),
                statusCode: Int.random(in: -1...999, using: &random),
                headers: HTTPFields((0..<Int.random(in: 0..<6, using: &random)).map { HTTPField(name: "H\($0 % 3)", value: String(repeating: "v", count: $0)) }),
                body: Data((0..<Int.random(in: 0..<200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }),
                requestTime: Double.random(in: 0..<2e9, using: &random), responseTime: Double.random(in: 0..<2e9, using: &random),
                secondaryKey: (0..<Int.random(in: 0..<4, using: &random)).map { _ in Bool.random(using: &random) ? nil : "k" },
                credentialKey: Bool.random(using: &random) ? nil : "c")
            let bytes = CacheEntryFile.encode(response, storedAt: 5)
            XCTAssertEqual(bytes.count, CacheEntryFile.encodedSize(of: response))
            XCTAssertEqual(CacheEntryFile.decode(bytes)?.response, response)
            XCTAssertNil(CacheEntryFile.decode(Array(bytes.dropLast())))
        }
    }

    // MARK: Helpers

    private func open(capacity: Int) throws -> DiskStore {
        try DiskStore.open(directory: directory, capacity: capacity)
    }

    /// Flushes and releases the store, checks it is gone, and opens the directory again.
    private func reopen(_ store: inout DiskStore?, capacity: Int, file: StaticString = #filePath, line: UInt = #line) throws -> DiskStore {
        store?.flush()
        weak let released = store
        store = nil
        XCTAssertNil(released, "the store is still alive", file: file, line: line)
        return try open(capacity: capacity)
    }

    private func entryFiles() throws -> [(name: String, size: Int)] {
        try CourierTests.entryFiles(in: directory)
    }

    /// Makes a directory impossible to create files in: by its permissions, or, for root (whom
    /// permissions do not stop), by the immutable attribute. Undone at tear-down.
    private func makeReadOnly(_ url: URL) throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: url.path)
        cleanUps.append { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path) }
        if try isWritable(url), FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr") {
            try run("/usr/bin/chattr", "+i", url.path)
            cleanUps.append { try? self.run("/usr/bin/chattr", "-i", url.path) }
        }
        // By hand a skip; under Scripts/test.sh a failure, so that CI never passes without it.
        if try isWritable(url) { throw HTTPBin.missing("cannot make a directory read-only for this user on this file system") }
    }

    private func isWritable(_ url: URL) throws -> Bool {
        let probe = url.appendingPathComponent("probe-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: probe.path, contents: Data()) else { return false }
        try FileManager.default.removeItem(at: probe)
        return true
    }

    private func run(_ tool: String, _ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
    }
}

/// `open(2)` for a lock file, out of reach of the test's own `open(capacity:)`.
private func openForLocking(_ path: String) -> Int32 {
    open(path, O_RDWR | O_CLOEXEC)
}
