import Foundation
import ObjectGraph
import Stores
import Testing
import TestSupport

/// The coordinator keeps one snapshot per stored row that objects of its contexts use, counted, and
/// drops it when the last such object turns into a fault or leaves its context.
@Suite struct SnapshotTests {
    @Test func aSaveResetLoopOfAMillionObjectsLeavesNoSnapshots() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let coordinator = file.graph.coordinator, context = file.context
        let batches = 200, batchSize = 5_000
        var afterSave: [Int] = [], afterReset: [Int] = []
        for batch in 0..<batches {
            for n in 0..<batchSize {
                context.insertNewObject(forEntityName: "Badge")[attributeAt: 0] = .string("\(batch)-\(n)")
            }
            try context.save()
            afterSave.append(coordinator.snapshotCount)
            context.reset()
            afterReset.append(coordinator.snapshotCount)
        }
        #expect(afterSave.allSatisfy { $0 == batchSize }, "each saved object holds its row's snapshot until the reset")
        #expect(afterReset.allSatisfy { $0 == 0 })
        #expect(try file.query("SELECT count(*) FROM Badge") == [[.integer(Int64(batches * batchSize))]])
    }

    @Test func contextsShareOneSnapshotPerRowAndTheLastUserDropsIt() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let coordinator = file.graph.coordinator
        let first = file.context, second = file.graph.makeContext()
        for n in 0..<10 { file.graph.insert("Badge", ["code": .string("b\(n)")]) }
        try first.save()
        #expect(coordinator.snapshotCount == 10)

        let fetched = try second.fetch(FetchRequest(entityName: "Badge"))
        #expect(fetched.count == 10 && coordinator.snapshotCount == 10, "the second context's objects use the same 10 snapshots")
        first.reset()
        #expect(coordinator.snapshotCount == 10, "the second context still uses them")

        second.refresh(fetched[0], mergeChanges: false)
        #expect(coordinator.snapshotCount == 9, "a fault uses no snapshot")
        #expect(fetched[0].string(forKey: "code") != nil)
        #expect(coordinator.snapshotCount == 10, "firing the fault takes it again")
        second.reset()
        #expect(coordinator.snapshotCount == 0)
    }

    @Test func savesKeepSnapshotsCurrentAndDeletesDropThem() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let coordinator = file.graph.coordinator
        let first = file.context, second = file.graph.makeContext()
        let badge = file.graph.insert("Badge", ["code": "A"])
        let other = file.graph.insert("Badge", ["code": "B"])
        try first.save()
        #expect(coordinator.snapshotVersion(for: badge.objectID) == 1)

        let theirs = try second.existingObject(with: badge.objectID)
        badge["code"] = "A2"
        try first.save()
        #expect(coordinator.snapshotVersion(for: badge.objectID) == 2)
        second.refresh(theirs, mergeChanges: false)
        #expect(theirs.string(forKey: "code") == "A2", "a fault fired after another context's save sees the saved row")

        first.delete(other)
        try first.save()
        #expect(coordinator.snapshotVersion(for: other.objectID) == nil)
        #expect(coordinator.snapshotCount == 1)
        second.reset()
        first.reset()
        #expect(coordinator.snapshotCount == 0)
    }

    @Test func childContextsUseTheirParentsObjectsNotSnapshots() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let coordinator = file.graph.coordinator
        let parent = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let badge = try parent.performAndWait {
            let badge = file.graph.insert("Badge", ["code": "A"], into: parent)
            try parent.save()
            return badge.objectID
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        let code = try child.performAndWait { try child.existingObject(with: badge).string(forKey: "code") }
        #expect(code == "A")
        #expect(coordinator.snapshotCount == 1)
        parent.performAndWait { parent.reset() }
        #expect(coordinator.snapshotCount == 0)
    }
}
