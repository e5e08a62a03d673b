import XCTest
@testable import Courier

/// The use order both cache stores evict by: its groups (a URL's variants) and its order of use.
final class UseOrderTests: XCTestCase {
    private struct Item: GroupedUseOrderEntry, Equatable {
        typealias Group = String
        let name: String
        let group: String
        var cost: Int { 10 }
    }

    private func names(_ order: UseOrder<Item>, _ group: String) -> [String] {
        order.slots(of: group).map { order[$0].name }
    }

    func testAGroupListsItsSlotsNewestFirstThroughRemovalsAndReuse() {
        // Given three variants of /a and two of /b, inserted in turns
        var order = UseOrder<Item>()
        let a1 = order.insert(Item(name: "a1", group: "/a"))
        order.insert(Item(name: "b1", group: "/b"))
        let a2 = order.insert(Item(name: "a2", group: "/a"))
        let b2 = order.insert(Item(name: "b2", group: "/b"))
        let a3 = order.insert(Item(name: "a3", group: "/a"))
        XCTAssertEqual(names(order, "/a"), ["a3", "a2", "a1"])
        XCTAssertEqual(names(order, "/b"), ["b2", "b1"])

        // When one from the middle of /a goes, then /a's newest, then /b's newest
        XCTAssertEqual(order.remove(a2).name, "a2")
        XCTAssertEqual(names(order, "/a"), ["a3", "a1"])
        order.remove(a3)
        XCTAssertEqual(names(order, "/a"), ["a1"])
        order.remove(b2)
        XCTAssertEqual(names(order, "/b"), ["b1"])

        // Then a new variant reuses a freed slot and heads its group; a group emptied is gone
        let a4 = order.insert(Item(name: "a4", group: "/a"))
        XCTAssertTrue([a2, a3, b2].contains(a4))
        XCTAssertEqual(names(order, "/a"), ["a4", "a1"])
        order.remove(a1)
        order.remove(a4)
        XCTAssertEqual(names(order, "/a"), [])
        XCTAssertEqual(order.size, 10)
        XCTAssertEqual(order.slots(of: "/c"), [])
    }

    func testAnInsertReplacesTheVariantItIsGivenAndOnlyThat() {
        // Given three variants of /a and one of /b
        var order = UseOrder<Item>()
        order.insert(Item(name: "a1", group: "/a"))
        order.insert(Item(name: "a2", group: "/a"))
        order.insert(Item(name: "b1", group: "/b"))
        order.insert(Item(name: "a3", group: "/a"))
        // When a new /a replaces a2 (in the middle of its group), then one replaces nothing
        let first = order.insert(Item(name: "a4", group: "/a")) { $0.name == "a2" }
        let second = order.insert(Item(name: "a5", group: "/a")) { $0.name == "b1" }
        // Then a2 went and nothing else; /b is untouched, and the cost counts what is left
        XCTAssertEqual(first.replaced?.name, "a2")
        XCTAssertNil(second.replaced)
        XCTAssertEqual(names(order, "/a"), ["a5", "a4", "a3", "a1"])
        XCTAssertEqual(names(order, "/b"), ["b1"])
        XCTAssertEqual(order.size, 50)
        // And the oldest is still a1, then b1
        XCTAssertEqual(order.evict(toFit: 30).map(\.name), ["a1", "b1"])
    }

    func testEvictionTakesTheLeastRecentlyUsedAndLeavesTheGroupsConsistent() {
        // Given /a, /b and a second /a, then /a's first used again
        var order = UseOrder<Item>()
        let a1 = order.insert(Item(name: "a1", group: "/a"))
        order.insert(Item(name: "b1", group: "/b"))
        order.insert(Item(name: "a2", group: "/a"))
        order.use(a1)
        // When only two fit
        let evicted = order.evict(toFit: 20)
        // Then /b's went (the least recently used), and /a keeps both, newest inserted first
        XCTAssertEqual(evicted.map(\.name), ["b1"])
        XCTAssertEqual(names(order, "/b"), [])
        XCTAssertEqual(names(order, "/a"), ["a2", "a1"])
        // And then a2 (now the least recently used) goes before a1
        XCTAssertEqual(order.evict(toFit: 10).map(\.name), ["a2"])
        XCTAssertEqual(names(order, "/a"), ["a1"])
    }
}
