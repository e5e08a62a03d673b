import XCTest
@testable import Courier

final class EntryTableTests: XCTestCase {
    final class Item { let name: String; init(_ name: String) { self.name = name } }

    private func id(_ raw: UInt64) -> RequestID { RequestID(rawValue: raw) }

    func testInsertLookUpAndRemoveWithGaps() {
        // Given IDs with small gaps (other queues drew the ones between)
        var table = EntryTable<Item>()
        for raw: UInt64 in [10, 11, 14, 20] { table.insert(Item("\(raw)"), for: id(raw)) }

        // Then each is found, the gaps are not, and removal in any order works
        XCTAssertEqual(table.count, 4)
        XCTAssertEqual(table[id(14)]?.name, "14")
        XCTAssertNil(table[id(12)])
        XCTAssertNil(table[id(9)])
        XCTAssertNil(table[id(21)])
        XCTAssertEqual(table.remove(id(14))?.name, "14")
        XCTAssertNil(table.remove(id(14)))
        XCTAssertEqual(table.remove(id(10))?.name, "10")
        XCTAssertEqual(table.ids(where: { _ in true }), [id(11), id(20)])
        XCTAssertEqual(table.count, 2)
    }

    func testFarIDsGoToTheOverflowAndStillWork() {
        var table = EntryTable<Item>()
        table.insert(Item("a"), for: id(1))
        table.insert(Item("far"), for: id(1_000_000))
        table.insert(Item("farther"), for: id(1_000_001))
        XCTAssertEqual(table[id(1_000_000)]?.name, "far")
        XCTAssertEqual(table[id(1_000_001)]?.name, "farther")
        XCTAssertEqual(table.ids(where: { _ in true }), [id(1), id(1_000_000), id(1_000_001)])
        XCTAssertEqual(table.remove(id(1_000_000))?.name, "far")
        XCTAssertEqual(table.remove(id(1))?.name, "a")
        XCTAssertEqual(table.count, 1)
        XCTAssertEqual(table[id(1_000_001)]?.name, "farther")
    }

    func testEmptiedTableStartsAgainAtTheNextID() {
        var table = EntryTable<Item>()
        for raw: UInt64 in 1...10_000 { table.insert(Item("\(raw)"), for: id(raw)) }
        for raw: UInt64 in 1...10_000 { XCTAssertEqual(table.remove(id(raw))?.name, "\(raw)") }
        XCTAssertEqual(table.count, 0)
        table.insert(Item("later"), for: id(5_000_000))
        XCTAssertEqual(table[id(5_000_000)]?.name, "later")
        XCTAssertEqual(table.ids(where: { _ in true }), [id(5_000_000)])
    }

    func testAgreesWithADictionaryUnderRandomUse() {
        var table = EntryTable<Item>()
        var reference: [UInt64: Item] = [:]
        var random = SeededGenerator(seed: 7)
        var next: UInt64 = 1
        for _ in 0..<20_000 {
            if random.next() % 3 != 0 {
                next += 1 + (random.next() % 50 == 0 ? random.next() % 5_000 : random.next() % 3)
                let item = Item("\(next)")
                table.insert(item, for: id(next))
                reference[next] = item
            } else if let victim = reference.keys.randomElement(using: &random) {
                XCTAssertTrue(table.remove(id(victim)) === reference.removeValue(forKey: victim))
            }
        }
        XCTAssertEqual(table.count, reference.count)
        XCTAssertEqual(table.ids(where: { _ in true }), reference.keys.sorted().map(id))
        for (raw, item) in reference { XCTAssertTrue(table[id(raw)] === item) }
    }

    func testAnIDFromTheOverflowThatTheArrayGrewOverIsStillFound() {
        // Given an ID far enough ahead to go to the overflow (durable IDs jump by 1,024 a millisecond)
        var table = EntryTable<Item>()
        table.insert(Item("first"), for: id(100))
        table.insert(Item("ahead"), for: id(100 + 3_000))
        // When the array grows over it, in steps within its reach
        table.insert(Item("step"), for: id(100 + 1_000))
        table.insert(Item("step 2"), for: id(100 + 2_000))
        table.insert(Item("past"), for: id(100 + 3_010))

        // Then it is still found, listed and removed
        XCTAssertEqual(table[id(100 + 3_000)]?.name, "ahead")
        XCTAssertEqual(table.ids(where: { _ in true }), [id(100), id(1_100), id(2_100), id(3_100), id(3_110)])
        XCTAssertEqual(table.remove(id(100 + 3_000))?.name, "ahead")
        XCTAssertNil(table[id(100 + 3_000)])
        XCTAssertEqual(table.count, 4)
    }

    func testAnIDOlderThanTheFirstLiveOneIsFound() {
        // Given a table whose first IDs were removed
        var table = EntryTable<Item>()
        for raw: UInt64 in 10...20 { table.insert(Item("\(raw)"), for: id(raw)) }
        for raw: UInt64 in 10...15 { table.remove(id(raw)) }

        // When an ID older than the first live one comes (added out of order)
        table.insert(Item("late"), for: id(12))

        // Then it is found, listed first and removed like any other
        XCTAssertEqual(table[id(12)]?.name, "late")
        XCTAssertEqual(table.ids(where: { _ in true }).first, id(12))
        XCTAssertEqual(table.remove(id(12))?.name, "late")
        XCTAssertEqual(table.count, 5)
    }

    func testAgreesWithADictionaryWhenIDsComeOutOfOrder() {
        // IDs as durable requests draw them: by the millisecond times 1,024, added by several
        // threads in an order that is not theirs
        var table = EntryTable<Item>()
        var reference: [UInt64: Item] = [:]
        var random = SeededGenerator(seed: 11)
        var clock: UInt64 = 1_000_000 << 10
        for _ in 0..<20_000 {
            if random.next() % 3 != 0 {
                clock += random.next() % 4 == 0 ? 1_024 * (1 + random.next() % 3) : 1
                let raw = clock - (random.next() % 4 == 0 ? random.next() % 3_000 : 0)
                guard reference[raw] == nil else { continue }
                let item = Item("\(raw)")
                table.insert(item, for: id(raw))
                reference[raw] = item
            } else if let victim = reference.keys.randomElement(using: &random) {
                XCTAssertTrue(table.remove(id(victim)) === reference.removeValue(forKey: victim))
            }
        }
        XCTAssertEqual(table.count, reference.count)
        XCTAssertEqual(table.ids(where: { _ in true }), reference.keys.sorted().map(id))
        for (raw, item) in reference { XCTAssertTrue(table[id(raw)] === item, "\(raw)") }
    }
}
