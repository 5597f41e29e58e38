import Foundation
import ObjectGraph
import TestSupport
import Testing

/// The coordinator keeps one snapshot per stored row that objects of its contexts use, counted, and
/// drops it when the last such object turns into a fault or leaves its context.
@Suite struct SnapshotTests {
    /// A re-import loop: each save of 5,000 departments (unique names) meets 2,500 names the previous
    /// save stored, which become updates of the stored rows (object-trumps) and so hold snapshots.
    /// A million objects on SQLite; see `loop(_:)` for the other kinds.
    @Test(arguments: StoreKind.allCases)
    func aSaveResetLoopOfAMillionObjectsLeavesNoSnapshots(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let coordinator = file.graph.coordinator, context = file.context
        context.mergePolicy = .objectTrumps
        let name = try #require(file.model.entity(named: "Department")?.attributeIndex(named: "name"))
        let (batches, batchSize, overlap) = Self.loop(kind)
        var afterSave: [Int] = [], afterReset: [Int] = []
        for batch in 0..<batches {
            let first = batch * (batchSize - overlap)
            for n in first..<first + batchSize {
                context.insertNewObject(forEntityName: "Department")[attributeAt: name] = .string("D\(n)")
            }
            try context.save()
            afterSave.append(coordinator.snapshotCount)
            context.reset()
            afterReset.append(coordinator.snapshotCount)
        }
        #expect(
            afterSave.first == 0 && afterSave.dropFirst().allSatisfy { $0 == overlap },
            "each stored row met again holds a snapshot until the reset")
        #expect(afterReset.allSatisfy { $0 == 0 })
        let rows = batches * (batchSize - overlap) + overlap
        #expect(try file.storedCount("Department") == rows)
        #expect(try file.storedDuplicates("Department", on: ["name"]).isEmpty, "no name is stored twice")
    }

    /// The loop's saves, objects per save, and objects each save shares with the one before: the
    /// million objects on SQLite (about 20 seconds in a debug build). An atomic store finds stored keys
    /// by testing every object against each batch of up to 500 keys, and writes its whole file at every
    /// save, so it runs 1,050 objects. The in-memory store copies its whole key index at every row a
    /// save indexes (a bug: `InMemoryStore.index(_:adding:)` iterates `keyIndexes.keys` while it
    /// mutates `keyIndexes`), so it runs 10,500; fixed, it takes the million in about 40 seconds.
    static func loop(_ kind: StoreKind) -> (batches: Int, batchSize: Int, overlap: Int) {
        switch kind {
        case .sqlite: return (200, 5_000, 2_500)
        case .inMemory, .sqliteGraph, .postgres: return (20, 1_000, 500)
        case .xml, .binary: return (20, 100, 50)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func contextsShareOneSnapshotPerRowAndTheLastUserDropsIt(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let coordinator = file.graph.coordinator
        let first = file.context, second = file.graph.makeContext()
        for n in 0..<10 { file.graph.insert("Badge", ["code": .string("b\(n)")]) }
        try first.save()
        #expect(coordinator.snapshotCount == 0, "objects a context inserted hold no snapshot: their values are its own")

        let fetched = try second.fetch(FetchRequest(entityName: "Badge"))
        #expect(
            fetched.count == 10 && coordinator.snapshotCount == 10,
            "the second context's objects use the same 10 snapshots")
        #expect(try first.fetch(FetchRequest(entityName: "Badge")).count == 10)
        let third = file.graph.makeContext()
        _ = try third.fetch(FetchRequest(entityName: "Badge"))
        #expect(coordinator.snapshotCount == 10, "a third context's objects share them too")
        third.reset()
        #expect(coordinator.snapshotCount == 10, "the second context still uses them")

        second.refresh(fetched[0], mergeChanges: false)
        #expect(coordinator.snapshotCount == 9, "a fault uses no snapshot")
        #expect(fetched[0].string(forKey: "code") != nil)
        #expect(coordinator.snapshotCount == 10, "firing the fault takes it again")
        second.reset()
        #expect(coordinator.snapshotCount == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func savesKeepSnapshotsCurrentAndDeletesDropThem(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let coordinator = file.graph.coordinator
        let first = file.context, second = file.graph.makeContext()
        let badge = file.graph.insert("Badge", ["code": "A"])
        let other = file.graph.insert("Badge", ["code": "B"])
        try first.save()
        let theirs = try second.existingObject(with: badge.objectID)
        _ = try second.existingObject(with: other.objectID)
        let read = try #require(coordinator.snapshotVersion(for: badge.objectID))
        #expect(read == 1 || kind.versionsByContent)

        badge["code"] = "A2"
        try first.save()
        let written = try #require(coordinator.snapshotVersion(for: badge.objectID))
        #expect(written != read, "the snapshot follows the save")
        #expect(written == 2 || kind.versionsByContent)
        second.refresh(theirs, mergeChanges: false)
        #expect(theirs.string(forKey: "code") == "A2", "a fault fired after another context's save sees the saved row")

        first.delete(other)
        try first.save()
        #expect(coordinator.snapshotVersion(for: other.objectID) == nil, "a deleted row is no longer served")
        #expect(coordinator.snapshotCount == 2, "its entry stays while the second context's object refers to it")
        second.reset()
        first.reset()
        #expect(coordinator.snapshotCount == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func childContextsUseTheirParentsObjectsNotSnapshots(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let coordinator = file.graph.coordinator
        let parent = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let badge = try parent.performAndWait {
            let badge = file.graph.insert("Badge", ["code": "A"], into: parent)
            try parent.save()
            return badge.objectID
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        parent.performAndWait { parent.reset() }
        let code = try child.performAndWait { try child.existingObject(with: badge).string(forKey: "code") }
        #expect(code == "A")
        #expect(coordinator.snapshotCount == 1, "the parent's object (read for the child) holds it; the child's none")
        parent.performAndWait { parent.reset() }
        #expect(coordinator.snapshotCount == 0)
    }
}
