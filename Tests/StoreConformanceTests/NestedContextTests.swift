import Foundation
import ObjectGraph
import TestSupport
import Testing

/// Child contexts: a child's save goes into its parent, the parent's save into the store.
@Suite struct NestedContextTests {
    /// A root context on a new store with a child and a grandchild, all on private queues.
    struct Levels {
        let file: StoreFile
        let root: ManagedObjectContext, child: ManagedObjectContext, grandchild: ManagedObjectContext
        init(_ kind: StoreKind) throws {
            file = try StoreFile(kind, model: try CompanyModel.make())
            root = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: file.graph.coordinator)
            child = ManagedObjectContext(concurrencyType: .privateQueue, parent: root)
            grandchild = ManagedObjectContext(concurrencyType: .privateQueue, parent: child)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func childSavesReachTheParentOnlyAndTheParentsSaveReachesTheStore(_ kind: StoreKind) throws {
        let levels = try Levels(kind)
        let (root, child) = (levels.root, levels.child)
        let ids = try child.performAndWait {
            let sales = child.insertNewObject(forEntityName: "Department")
            sales["name"] = "Sales"
            let ann = child.insertNewObject(forEntityName: "Employee")
            ann["name"] = "Ann"
            ann.setRelatedObject(sales, forKey: "department")
            try child.save()
            #expect(!child.hasChanges)
            #expect(!sales.objectID.isTemporaryID && !ann.objectID.isTemporaryID, "a child's save makes IDs permanent")
            return (sales.objectID, ann.objectID)
        }
        #expect(try levels.file.storedCount("Department") == 0, "nothing reached the store")
        try root.performAndWait {
            #expect(root.insertedObjects.count == 2)
            let ann = try root.existingObject(with: ids.1)
            #expect(ann.string(forKey: "name") == "Ann")
            #expect(ann.relatedObject(forKey: "department")?.objectID == ids.0)
            #expect(
                try root.existingObject(with: ids.0).relatedObjects(forKey: "employees") == [ann],
                "the inverse is kept in step")
            try root.save()
        }
        #expect(try levels.file.stored("Department", ["name"]) == [["Sales"]])
        #expect(try levels.file.stored("Person", ["name", "department.name"]) == [["Ann", "Sales"]])

        // An update and a delete go the same way.
        try child.performAndWait {
            let ann = try child.existingObject(with: ids.1)
            ann["name"] = "Anne"
            child.delete(try child.existingObject(with: ids.0))
            try child.save()
        }
        #expect(try levels.file.stored("Person", ["name", "department.name"]) == [["Ann", "Sales"]])
        try root.performAndWait {
            #expect(root.updatedObjects.count == 1 && root.deletedObjects.count == 1)
            try root.save()
        }
        #expect(
            try levels.file.stored("Person", ["name", "department.name"]) == [["Anne", "nil"]],
            "the delete rule (nullify) applied")
        #expect(try levels.file.storedCount("Department") == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func threeLevelsSaveUpwardOneLevelAtATime(_ kind: StoreKind) throws {
        let levels = try Levels(kind)
        let id = try levels.grandchild.performAndWait {
            let badge = levels.grandchild.insertNewObject(forEntityName: "Badge")
            badge["code"] = "G1"
            try levels.grandchild.save()
            return badge.objectID
        }
        try levels.child.performAndWait {
            #expect(try levels.child.existingObject(with: id).string(forKey: "code") == "G1")
            #expect(levels.child.hasChanges)
            try levels.child.save()
        }
        #expect(try levels.file.storedCount("Badge") == 0)
        try levels.root.performAndWait {
            #expect(try levels.root.existingObject(with: id).string(forKey: "code") == "G1")
            try levels.root.save()
        }
        #expect(try levels.file.stored("Badge", ["code"]) == [["G1"]])
        #expect(levels.file.graph.coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation) == id)
    }

    @Test(arguments: StoreKind.allCases)
    func aChildFetchSeesItsParentsUnsavedChanges(_ kind: StoreKind) throws {
        let levels = try Levels(kind)
        let (root, child) = (levels.root, levels.child)
        let (kept, changed, removed, added) = try root.performAndWait {
            let objects = ["kept", "changed", "removed"].map { code in
                let badge = root.insertNewObject(forEntityName: "Badge")
                badge["code"] = .string(code)
                return badge
            }
            try root.save()
            objects[1]["code"] = "changed again"
            root.delete(objects[2])
            let added = root.insertNewObject(forEntityName: "Badge")
            added["code"] = "added"
            #expect(added.objectID.isTemporaryID)
            return (objects[0].objectID, objects[1].objectID, objects[2].objectID, added)
        }
        let seen = try child.performAndWait {
            var request = FetchRequest(entityName: "Badge", sortDescriptors: [FetchSortDescriptor("code")])
            let objects = try child.fetch(request)
            request.predicate = try FetchPredicate(format: "code BEGINSWITH 'changed'")
            #expect(try child.count(for: request) == 1)
            #expect(try child.fetch(request).first?.objectID == changed)
            return objects.map { ($0.objectID, $0.string(forKey: "code") ?? "") }
        }
        #expect(seen.map(\.1) == ["added", "changed again", "kept"])
        #expect(!seen.contains { $0.0 == removed })
        #expect(seen.contains { $0.0 == kept })
        // The parent's inserted object got its permanent ID when the child read it; both name it alike.
        let addedID = root.performAndWait { added.objectID }
        #expect(!addedID.isTemporaryID && seen[0].0 == addedID)
        try root.performAndWait { try root.save() }
        #expect(try levels.file.stored("Badge", ["code"]) == [["added"], ["changed again"], ["kept"]])
    }

    @Test(arguments: StoreKind.allCases)
    func childObjectsRelateToObjectsTheParentInsertedAndNeverSaved(_ kind: StoreKind) throws {
        let levels = try Levels(kind)
        let (root, child) = (levels.root, levels.child)
        let department = root.performAndWait {
            let department = root.insertNewObject(forEntityName: "Department")
            department["name"] = "Research"
            return department
        }
        let departmentID = try child.performAndWait {
            let research = try child.fetch(FetchRequest(entityName: "Department"))[0]
            for name in ["Bo", "Cy"] {
                let employee = child.insertNewObject(forEntityName: "Employee")
                employee["name"] = .string(name)
                employee.setRelatedObject(research, forKey: "department")
            }
            try child.save()
            return research.objectID
        }
        try root.performAndWait {
            #expect(department.objectID == departmentID)
            #expect(
                Set(department.relatedObjects(forKey: "employees").compactMap { $0.string(forKey: "name") }) == [
                    "Bo", "Cy",
                ])
            try root.save()
        }
        #expect(try levels.file.storedCount("Employee", where: "department.name == 'Research'") == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func aChildsDiscardedChangesNeverReachTheParent(_ kind: StoreKind) throws {
        let levels = try Levels(kind)
        try levels.child.performAndWait {
            levels.child.insertNewObject(forEntityName: "Badge")["code"] = "discarded"
            levels.child.rollback()
            try levels.child.save()
        }
        #expect(levels.root.performAndWait { !levels.root.hasChanges })
    }

    @Test(arguments: StoreKind.allCases)
    func twoChildrenOfOneParentSaveIntoItAndTheParentWritesBoth(_ kind: StoreKind) throws {
        let levels = try Levels(kind)
        let root = levels.root
        let sales = try root.performAndWait {
            let sales = root.insertNewObject(forEntityName: "Department")
            sales["name"] = "Sales"
            try root.save()
            return sales.objectID
        }
        let first = levels.child
        let second = ManagedObjectContext(concurrencyType: .privateQueue, parent: root)
        try first.performAndWait {
            let ann = first.insertNewObject(forEntityName: "Employee")
            ann["name"] = "Ann"
            ann.setRelatedObject(try first.existingObject(with: sales), forKey: "department")
            try first.existingObject(with: sales)["budget"] = .decimal(10)
        }
        try second.performAndWait {
            let bob = second.insertNewObject(forEntityName: "Employee")
            bob["name"] = "Bob"
            bob.setRelatedObject(try second.existingObject(with: sales), forKey: "department")
            try second.existingObject(with: sales)["budget"] = .decimal(20)
        }
        try first.performAndWait { try first.save() }
        try second.performAndWait { try second.save() }  // a child's save never conflicts: the last one wins
        try root.performAndWait { try root.save() }
        #expect(
            try levels.file.stored("Person", ["name", "department.name"]) == [["Ann", "Sales"], ["Bob", "Sales"]])
        #expect(try levels.file.stored("Department", ["name", "budget"]) == [["Sales", "20"]])
        let seen = try first.performAndWait {
            try first.fetch(FetchRequest(entityName: "Employee")).compactMap { $0.string(forKey: "name") }.sorted()
        }
        #expect(seen == ["Ann", "Bob"], "a sibling's saved objects reach the other child through the parent")
    }

    @Test(arguments: StoreKind.allCases)
    func aChildLearnsOfItsParentsSave(_ kind: StoreKind) throws {
        let levels = try Levels(kind)
        let (root, child) = (levels.root, levels.child)
        let badge = try root.performAndWait {
            let badge = root.insertNewObject(forEntityName: "Badge")
            badge["code"] = "v1"
            try root.save()
            return badge.objectID
        }
        let manual = ManagedObjectContext(concurrencyType: .privateQueue, parent: root)
        let read = try child.performAndWait {
            child.automaticallyMergesChangesFromParent = true
            return try child.existingObject(with: badge).string(forKey: "code")
        }
        let readManually = try manual.performAndWait { try manual.existingObject(with: badge).string(forKey: "code") }
        #expect(read == "v1" && readManually == "v1")
        let saves = Saves()
        let observation = root.observeDidSave { saves.append($0) }
        defer { observation.cancel() }
        try root.performAndWait {
            try root.existingObject(with: badge)["code"] = "v2"
            try root.save()
        }
        // The merge is scheduled on the child's queue; a block queued after it sees its result.
        let merged = try child.performAndWait { try child.existingObject(with: badge).string(forKey: "code") }
        #expect(merged == "v2")
        let stale = try manual.performAndWait { try manual.existingObject(with: badge).string(forKey: "code") }
        #expect(stale == "v1", "without automatic merging a child keeps what it read")
        let save = try #require(saves.all.last)
        let fresh = try manual.performAndWait {
            manual.mergeChanges(fromContextDidSave: save)
            return try manual.existingObject(with: badge).string(forKey: "code")
        }
        #expect(fresh == "v2")
    }
}

/// Did-save notifications collected from any thread.
final class Saves: @unchecked Sendable {
    private let lock = NSLock()
    private var saves: [ContextDidSave] = []
    func append(_ save: ContextDidSave) { lock.withLock { saves.append(save) } }
    var all: [ContextDidSave] { lock.withLock { saves } }
}
