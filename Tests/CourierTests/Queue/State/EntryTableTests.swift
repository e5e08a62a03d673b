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
}
