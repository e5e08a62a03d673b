import Foundation
import XCTest
@testable import Courier

/// The cache's store in memory: its byte bound, its eviction order and its variants.
final class MemoryStoreTests: XCTestCase {
    private let a = "https://a.test/1"
    private let b = "https://a.test/2"
    private let c = "https://a.test/3"
    private let d = "https://a.test/4"

    func testAStoredResponseIsReadBack() {
        // Given a response with every field set
        let store = MemoryStore(capacity: 10_000)
        let response = StoredResponse(
            url: a, statusCode: 203, headers: ["ETag": "\"x\"", "Vary": "Accept"], body: Data("hello".utf8),
            requestTime: 10, responseTime: 11, secondaryKey: ["text/html", nil], credentialKey: "digest")
        // When it is stored
        store.store(response)
        // Then it is the one response of its URL, and it costs what its cost says
        XCTAssertEqual(store.responses(for: a), [response])
        XCTAssertEqual(store.responses(for: b), [])
        XCTAssertEqual(store.size, response.cost)
        XCTAssertEqual(store.capacity, 10_000)
    }

    func testTheLeastRecentlyUsedIsEvictedFirst() {
        // Given room for three responses of 100 bytes, and A, B, C stored, then A read
        let store = MemoryStore(capacity: 3000)
        for url in [a, b, c] { store.store(.costing(1000, url)) }
        XCTAssertEqual(store.responses(for: a).count, 1)
        // When D is stored
        store.store(.costing(1000, d))
        // Then B, the least recently used, is gone, and the rest fill the store exactly
        XCTAssertEqual(store.responses(for: b), [])
        XCTAssertEqual(store.size, 3000)
        // And storing B again evicts C (A and D were used after it)
        store.store(.costing(1000, b))
        XCTAssertEqual([a, b, c, d].map { store.responses(for: $0).count }, [1, 1, 0, 1])
    }

    func testStoringEvictsAsManyAsNeeded() {
        // Given three responses of 100 bytes in 300
        let store = MemoryStore(capacity: 3000)
        for url in [a, b, c] { store.store(.costing(1000, url)) }
        // When one of 250 bytes comes
        store.store(.costing(2500, d))
        // Then all three are gone
        XCTAssertEqual([a, b, c, d].map { store.responses(for: $0).count }, [0, 0, 0, 1])
        XCTAssertEqual(store.size, 2500)
    }

    func testStoringAVariantAgainReplacesIt() {
        // Given a stored response
        let store = MemoryStore(capacity: 10000)
        store.store(.costing(1000, a, secondaryKey: ["gzip"]))
        // When the same URL and secondary key is stored with another body
        let newer = StoredResponse.costing(1500, a, secondaryKey: ["gzip"])
        store.store(newer)
        // Then only the newer is there
        XCTAssertEqual(store.responses(for: a), [newer])
        XCTAssertEqual(store.size, 1500)
    }

    func testVariantsAreKeptApartMostRecentlyStoredFirst() {
        // Given four variants of one URL: two secondary keys, an absent field, and a credential
        let store = MemoryStore(capacity: 100000)
        let gzip = StoredResponse.costing(1000, a, secondaryKey: ["gzip"])
        let brotli = StoredResponse.costing(1010, a, secondaryKey: ["br"])
        let absent = StoredResponse.costing(1020, a, secondaryKey: [nil])
        let private1 = StoredResponse.costing(1030, a, secondaryKey: ["gzip"], credentialKey: "k1")
        for response in [gzip, brotli, absent, private1] { store.store(response) }
        // Then all four are there, the most recently stored first
        XCTAssertEqual(store.responses(for: a), [private1, absent, brotli, gzip])
        XCTAssertEqual(store.size, 4060)
        // And storing the first again moves it to the front
        store.store(gzip)
        XCTAssertEqual(store.responses(for: a), [gzip, private1, absent, brotli])
        XCTAssertEqual(store.size, 4060)
    }

    func testReadingAURLUsesAllItsVariants() {
        // Given two variants of A, then B, in room for three
        let store = MemoryStore(capacity: 3000)
        store.store(.costing(1000, a, secondaryKey: ["1"]))
        store.store(.costing(1000, a, secondaryKey: ["2"]))
        store.store(.costing(1000, b))
        // When A is read and C stored
        XCTAssertEqual(store.responses(for: a).count, 2)
        store.store(.costing(1000, c))
        // Then B went, both variants of A stayed
        XCTAssertEqual(store.responses(for: a).map(\.secondaryKey), [["2"], ["1"]])
        XCTAssertEqual(store.responses(for: b), [])
    }

    func testAResponseLargerThanTheCapacityIsNotStoredAndReplacesNothing() {
        // Given a stored response
        let store = MemoryStore(capacity: 2000)
        let stored = StoredResponse.costing(1000, a)
        store.store(stored)
        // When the same variant comes larger than the whole store
        store.store(.costing(2010, a))
        // Then the stored one is still there, and nothing was evicted
        XCTAssertEqual(store.responses(for: a), [stored])
        XCTAssertEqual(store.size, 1000)
        // And one exactly the capacity fits
        store.store(.costing(2000, b))
        XCTAssertEqual(store.size, 2000)
        XCTAssertEqual(store.responses(for: b).count, 1)
    }

    func testRemovingAURLRemovesAllItsVariants() {
        let store = MemoryStore(capacity: 10000)
        store.store(.costing(1000, a, secondaryKey: ["1"]))
        store.store(.costing(1000, a, secondaryKey: ["2"]))
        store.store(.costing(1000, b))
        store.removeResponses(for: a)
        XCTAssertEqual(store.responses(for: a), [])
        XCTAssertEqual(store.responses(for: b).count, 1)
        XCTAssertEqual(store.size, 1000)
        store.removeResponses(for: c)  // nothing there: nothing happens
        XCTAssertEqual(store.size, 1000)
    }

    func testRemoveAllEmptiesTheStore() {
        let store = MemoryStore(capacity: 10000)
        for url in [a, b, c] { store.store(.costing(1000, url)) }
        store.removeAll()
        XCTAssertEqual([a, b, c].map { store.responses(for: $0).count }, [0, 0, 0])
        XCTAssertEqual(store.size, 0)
        // And it works on afterwards
        store.store(.costing(1000, d))
        XCTAssertEqual(store.size, 1000)
    }

    func testAStoreWithoutCapacityKeepsNothing() {
        let store = MemoryStore(capacity: 0)
        store.store(.sample(a))
        XCTAssertEqual(store.responses(for: a), [])
        XCTAssertEqual(store.size, 0)
    }

    // MARK: Blocks

    func testALargeStorePacksIntoBlocksAndEvictionFreesThem() {
        // Given a 4 MiB store, and responses of about 10 KiB stored under 1,200 URLs (three times
        // its capacity), every fifth read back at once
        let store = MemoryStore(capacity: PackedBlocks.smallestStore)
        var stored: [String: StoredResponse] = [:]
        for index in 0..<1_200 {
            let url = "https://blocks.test/\(index)"
            let body = Data(repeating: UInt8(index & 0xFF), count: 9_000 + (index * 131) % 2_000)
            let response = StoredResponse.sample(url, body: body, headers: ["ETag": "\"\(index)\""])
            store.store(response)
            stored[url] = response
            if index % 5 == 0 { XCTAssertEqual(store.responses(for: url), [response]) }
        }

        // Then whatever is still stored reads back as it was stored, within the capacity
        var left = 0
        for (url, response) in stored {
            let found = store.responses(for: url)
            if !found.isEmpty {
                XCTAssertEqual(found, [response], url)
                left += 1
            }
        }
        XCTAssertGreaterThan(left, 300)
        XCTAssertLessThanOrEqual(store.size, store.capacity)
        // And the blocks held (for about three times the capacity packed in all) stay within half
        // of it and two blocks
        XCTAssertGreaterThan(store.blockBytes, 0)
        XCTAssertLessThanOrEqual(store.blockBytes, store.capacity / 2 + 2 * PackedBlocks.blockSize)
        store.removeAll()
        XCTAssertLessThanOrEqual(store.blockBytes, PackedBlocks.blockSize)
    }

    func testThreadsPackingIntoBlocksAtOnceKeepEveryResponseWhole() {
        // Given eight threads storing and reading responses in a 4 MiB store (blocks shared)
        let store = MemoryStore(capacity: PackedBlocks.smallestStore)
        let mismatches = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<400 {
                let url = "https://threads-blocks.test/\(thread)/\(index)"
                let body = Data(repeating: UInt8(truncatingIfNeeded: thread &* 31 &+ index), count: 200 + (index * 97) % 6_000)
                let response = StoredResponse.sample(url, body: body, headers: ["X-Thread": String(thread)])
                store.store(response)
                // Then every response read back is the one stored, byte for byte
                let found = store.responses(for: url)
                if !(found.isEmpty || found == [response]) { mismatches.withLock { $0 += 1 } }
                if index % 7 == 0 { _ = store.responses(for: "https://threads-blocks.test/\((thread + 1) % 8)/\(index / 2)") }
            }
        }
        XCTAssertEqual(mismatches.withLock { $0 }, 0)
        XCTAssertLessThanOrEqual(store.size, store.capacity)
        XCTAssertGreaterThan(store.blockBytes, 0)
    }

    // MARK: Against a model

    func testRandomOperationsMatchASimpleModel() {
        for seed: UInt64 in [1, 2, 3, 42, 2024] {
            // Given the store and a plain list kept in the order of use, under the same operations
            var random = SeededGenerator(seed: seed)
            let store = MemoryStore(capacity: 3_000)
            var model = ReferenceStore(capacity: 3_000)
            let urls = (0..<6).map { "https://model.test/\($0)" }
            let keys: [[String?]] = [[], ["a"], ["b"], [nil]]
            for step in 0..<3_000 {
                let url = urls.randomElement(using: &random)!
                let roll = Int.random(in: 0..<100, using: &random)
                let context = "seed \(seed), step \(step)"
                switch roll {
                case 0..<50:
                    let response = StoredResponse.sample(
                        url, body: Data(repeating: UInt8(step & 0xFF), count: Int.random(in: 0..<400, using: &random)),
                        secondaryKey: keys.randomElement(using: &random)!, credentialKey: Bool.random(using: &random) ? nil : "k")
                    store.store(response)
                    model.store(response)
                case 50..<88:
                    // Then every read answers what the model answers
                    XCTAssertEqual(store.responses(for: url), model.responses(for: url), context)
                case 88..<99:
                    store.removeResponses(for: url)
                    model.removeResponses(for: url)
                default:
                    store.removeAll()
                    model.removeAll()
                }
                // And the size is the model's, never above the capacity
                XCTAssertEqual(store.size, model.size, context)
                XCTAssertLessThanOrEqual(store.size, 3_000, context)
            }
            for url in urls { XCTAssertEqual(store.responses(for: url), model.responses(for: url), "seed \(seed), end") }
        }
    }

    /// What the store should do, the slow and obvious way.
    private struct ReferenceStore {
        let capacity: Int
        /// The most recently used first, with the number of the store that put each there.
        var entries: [(response: StoredResponse, stored: Int)] = []
        var stores = 0

        var size: Int { entries.reduce(0) { $0 + $1.response.cost } }

        mutating func store(_ response: StoredResponse) {
            guard response.cost <= capacity else { return }
            entries.removeAll {
                $0.response.url == response.url && $0.response.secondaryKey == response.secondaryKey
                    && $0.response.credentialKey == response.credentialKey
            }
            stores += 1
            entries.insert((response, stores), at: 0)
            while size > capacity { entries.removeLast() }
        }

        /// A URL's variants, the most recently stored first; they all become the most recently
        /// used, the most recently stored of them foremost.
        mutating func responses(for url: String) -> [StoredResponse] {
            let hits = entries.filter { $0.response.url == url }.sorted { $0.stored > $1.stored }
            entries.removeAll { $0.response.url == url }
            entries.insert(contentsOf: hits, at: 0)
            return hits.map(\.response)
        }

        mutating func removeResponses(for url: String) {
            entries.removeAll { $0.response.url == url }
        }

        mutating func removeAll() {
            entries = []
        }
    }

    // MARK: Threads

    func testConcurrentUseKeepsTheBound() {
        // Given eight threads storing and reading overlapping URLs
        let store = MemoryStore(capacity: 50_000)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<500 {
                let url = "https://threads.test/\((index * 7 + thread) % 40)"
                if index % 3 == 0 {
                    _ = store.responses(for: url)
                } else {
                    store.store(.costing(1000 + (index % 5) * 500, url, secondaryKey: [String(thread % 2)]))
                }
            }
        }
        // Then the bound held, and the size is what the responses left cost
        XCTAssertLessThanOrEqual(store.size, 50_000)
        let left = (0..<40).flatMap { store.responses(for: "https://threads.test/\($0)") }
        XCTAssertEqual(left.reduce(0) { $0 + $1.cost }, store.size)
    }
}
