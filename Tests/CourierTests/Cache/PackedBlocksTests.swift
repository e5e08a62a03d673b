import Foundation
import XCTest
@testable import Courier

/// Where a memory store packs its responses: ranges of 256 KiB blocks, handed out in order, the
/// blocks held bounded by half the store's capacity, each freed when the last range in it goes.
final class PackedBlocksTests: XCTestCase {
    private let block = PackedBlocks.blockSize

    func testAStoreSmallerThan4MiBUsesNoBlocks() {
        // Given the blocks of a store of 4 MiB less one byte
        var blocks = PackedBlocks(capacity: PackedBlocks.smallestStore - 1)

        // Then every response gets storage of its own
        XCTAssertNil(blocks.reserve(100))
        XCTAssertEqual(blocks.account.bytes, 0)
        XCTAssertEqual(PackedBlocks.smallestStore, 4 * 1024 * 1024)
    }

    func testRangesFollowOneAnotherAndANewBlockStartsWhenOneIsFull() {
        // Given the blocks of a 16 MiB store
        var blocks = PackedBlocks(capacity: 16 * 1024 * 1024)

        // When ranges are reserved that fill a block but 100 bytes, then one of 101
        let first = blocks.reserve(1_000)
        let second = blocks.reserve(PackedBlocks.largest)
        var rest: [(block: ByteBlock, start: Int)] = []
        var used = 1_000 + PackedBlocks.largest
        while block - used >= 100 + 10_000 {
            rest.append(blocks.reserve(10_000)!)
            used += 10_000
        }
        let filler = blocks.reserve(block - used - 100)
        let next = blocks.reserve(101)

        // Then each starts where the one before ended, in one block, and the last in a new block
        XCTAssertEqual(first?.start, 0)
        XCTAssertEqual(second?.start, 1_000)
        XCTAssertTrue(second?.block === first?.block)
        XCTAssertEqual(rest.first?.start, 1_000 + PackedBlocks.largest)
        XCTAssertTrue(filler?.block === first?.block)
        XCTAssertEqual(next?.start, 0)
        XCTAssertFalse(next?.block === first?.block)
        XCTAssertEqual(blocks.account.bytes, 2 * block)
    }

    func testAResponseLargerThan16KiBGetsStorageOfItsOwn() {
        var blocks = PackedBlocks(capacity: 16 * 1024 * 1024)
        XCTAssertEqual(PackedBlocks.largest, 16 * 1024)
        XCTAssertNil(blocks.reserve(PackedBlocks.largest + 1))
        XCTAssertNotNil(blocks.reserve(PackedBlocks.largest))
    }

    func testTheBlocksHeldNeverExceedHalfTheCapacityAndTwoBlocks() {
        // Given the blocks of a 4 MiB store (8 blocks, and two more), every range kept
        var blocks = PackedBlocks(capacity: PackedBlocks.smallestStore)
        var kept: [ByteBlock] = []

        // When ranges of a whole block's size are reserved until none is given
        while let range = blocks.reserve(PackedBlocks.largest) {
            kept.append(range.block)
            XCTAssertLessThanOrEqual(blocks.account.bytes, PackedBlocks.smallestStore / 2 + 2 * block)
        }

        // Then 10 blocks were held, full, and no more
        XCTAssertEqual(blocks.account.bytes, 10 * block)
        XCTAssertEqual(kept.count, 10 * block / PackedBlocks.largest)
    }

    func testABlockIsFreedWhenTheLastRangeInItGoes() {
        // Given a first block full of storages, and a second block begun
        var blocks = PackedBlocks(capacity: 16 * 1024 * 1024)
        func pack(_ length: Int) -> ByteStorage {
            let range = blocks.reserve(length)!
            return ByteStorage(in: range.block, at: range.start, writingAtMost: length) { $0.write("x") }
        }
        var first = (0..<(block / PackedBlocks.largest)).map { _ in pack(PackedBlocks.largest) }
        let second = pack(100)
        XCTAssertEqual(blocks.account.bytes, 2 * block)

        // When all but one of the first block's storages go
        let last = first.removeLast()
        first = []
        XCTAssertEqual(blocks.account.bytes, 2 * block)
        XCTAssertEqual(last.string(0..<1), "x")

        // Then the block is freed with the last one, and the second (in use) kept
        _ = consume last
        XCTAssertEqual(blocks.account.bytes, block)
        XCTAssertEqual(second.string(0..<1), "x")
    }
}
