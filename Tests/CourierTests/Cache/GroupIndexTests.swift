import XCTest
@testable import Courier

/// The index from a group's hash to its newest slot that ``UseOrder`` keeps: every group stored is
/// found from its hash, through collisions, runs that wrap around the table, removals that move
/// later buckets back, and growth.
final class GroupIndexTests: XCTestCase {
    /// The index with a model beside it: which group each slot holds, and each group's hash.
    private struct Subject {
        var index = GroupIndex()
        var groupOfSlot: [Int: String] = [:]
        var model: [String: (slot: Int, hash: UInt32)] = [:]
        /// The hash each group had when last inserted, removed ones too.
        var hashOf: [String: UInt32] = [:]
        var nextSlot = 0

        func bucket(_ group: String) -> Int? {
            guard let hash = model[group]?.hash else { return nil }
            return index.bucket(hash: hash) { groupOfSlot[$0] == group }
        }

        mutating func insert(_ group: String, hash: UInt32) {
            let slot = nextSlot
            nextSlot += 1
            groupOfSlot[slot] = group
            if let bucket = bucket(group) {
                index.setSlot(slot, inBucket: bucket)
            } else {
                index.insert(slot, hash: hash)
            }
            model[group] = (slot, hash)
            hashOf[group] = hash
        }

        mutating func remove(_ group: String) {
            guard let bucket = bucket(group) else { return XCTFail("\(group) is not found") }
            index.remove(bucket: bucket)
            model[group] = nil
        }

        /// Every group of the model is found with its slot; groups removed are not.
        func check(_ removed: [String], file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertEqual(index.count, model.count, file: file, line: line)
            for (group, entry) in model {
                XCTAssertEqual(bucket(group).map(index.slot(inBucket:)), entry.slot, group, file: file, line: line)
            }
            for group in removed where model[group] == nil {
                let hash = hashOf[group] ?? 0
                XCTAssertNil(index.bucket(hash: hash) { groupOfSlot[$0] == group }, group, file: file, line: line)
            }
        }
    }

    func testGroupsWithTheSameHashAreToldApartByTheirSlotsGroups() {
        // Given three groups with one hash, and one with another
        var subject = Subject()
        for group in ["/a", "/b", "/c"] { subject.insert(group, hash: 7) }
        subject.insert("/d", hash: 8)
        // When /b gets a newer slot and /a goes
        subject.insert("/b", hash: 7)
        subject.remove("/a")
        // Then the others are found with their slots
        subject.check(["/a"])
        XCTAssertEqual(subject.bucket("/b").map(subject.index.slot(inBucket:)), 4)
    }

    func testARemovalMovesBackTheBucketsOfItsRunThatWrapAroundTheTable() {
        // Given a table of 16 buckets whose last ones and first ones hold one run: homes 14 and 15
        // and a group whose home is 0, pushed past them
        var subject = Subject()
        subject.insert("/p", hash: 14)
        subject.insert("/q", hash: 14)
        subject.insert("/r", hash: 15)
        subject.insert("/s", hash: 0)
        subject.insert("/t", hash: 14)
        // When groups at the start, in the middle and at the end of the run go, one by one
        for group in ["/p", "/r", "/t"] {
            subject.remove(group)
            // Then every other group is still found from its home
            subject.check(["/p", "/r", "/t"])
        }
    }

    func testManyInsertsAndRemovalsAgreeWithADictionary() {
        // Given a generator with a fixed seed and hashes from a small range (many collisions)
        var generator = SeededGenerator(seed: 42)
        var subject = Subject()
        var removed: [String] = []
        // When 20,000 random inserts (new groups and newer slots) and removals run, the table
        // growing from 16 buckets meanwhile
        for step in 0..<20_000 {
            let group = "/\(generator.next() % 600)"
            if generator.next() % 3 == 0, subject.model[group] != nil {
                subject.remove(group)
                removed.append(group)
            } else {
                subject.insert(group, hash: subject.model[group]?.hash ?? UInt32(generator.next() % 97))
            }
            // Then it agrees with the model all along (checked every 500 steps, and at the end)
            if step % 500 == 0 { subject.check(removed) }
        }
        subject.check(removed)
        XCTAssertGreaterThan(subject.model.count, 100)
    }
}
