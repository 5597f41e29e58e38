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
}
