import Foundation
import ObjectGraph
import TestSupport
import Testing

@Suite struct ContextTests {
    let graph: TestGraph
    init() throws { graph = try TestGraph(model: try CompanyModel.make()) }

    @Test func changeSetsTrackInsertsUpdatesAndDeletes() throws {
        let context = graph.context
        #expect(!context.hasChanges)
        let a = graph.insert("Department", ["name": "A"]), b = graph.insert("Department", ["name": "B"])
        #expect(context.insertedObjects == [a, b] && context.hasChanges && a.isInserted)
        try context.save()
        #expect(!context.hasChanges && context.insertedObjects.isEmpty && !a.isInserted)
        a["budget"] = .decimal(5)
        context.delete(b)
        #expect(context.updatedObjects == [a] && context.deletedObjects == [b])
        #expect(a.isUpdated && b.isDeleted)
        try context.save()
        #expect(!context.hasChanges)
        #expect(b.managedObjectContext == nil, "a deleted object leaves its context once the delete is saved")
        #expect(try graph.storedCount("Department") == 1)
    }

    @Test func uniquingGivesOneInstancePerID() throws {
        graph.insert("Department", ["name": "A"])
        try graph.context.save()
        let other = graph.makeContext()
        let first = try other.fetch(FetchRequest(entityName: "Department"))
        let second = try other.fetch(FetchRequest(entityName: "Department"))
        #expect(first[0] === second[0])
        #expect(other.object(with: first[0].objectID) === first[0])
        #expect(try other.existingObject(with: first[0].objectID) === first[0])
    }

    @Test func faultsLoadTheirValuesOnFirstAccess() throws {
        let dept = graph.insert("Department", ["name": "A"])
        let ada = graph.insert("Employee", ["name": "Ada"])
        ada.setRelatedObject(dept, forKey: "department")
        try graph.context.save()

        let other = graph.makeContext()
        let fault = other.object(with: dept.objectID)
        #expect(fault.isFault)
        #expect(other.registeredObjects.count == 1)
        #expect(fault.string(forKey: "name") == "A")
        #expect(!fault.isFault)
        #expect(fault.hasFault(forRelationshipNamed: "employees"))
        let employees = fault.relatedObjects(forKey: "employees")
        #expect(!fault.hasFault(forRelationshipNamed: "employees"))
        // The to-many fault materialised its destinations as faults of their own.
        #expect(employees.count == 1 && employees[0].isFault)
        #expect(employees[0] === other.registeredObject(for: ada.objectID))
        #expect(employees[0].label == "Ada" && !employees[0].isFault)
        #expect(employees[0].relatedObject(forKey: "department") === fault)
    }

    @Test func existingObjectThrowsWhenTheRowIsGone() throws {
        let dept = graph.insert("Department", ["name": "A"])
        try graph.context.save()
        let id = dept.objectID
        graph.context.delete(dept)
        try graph.context.save()
        let error = try #require(throws: StoreError.self) { try graph.makeContext().existingObject(with: id) }
        #expect(error.code == .objectNotFound)
        #expect(error.description.contains("does not exist"))
    }

    @Test func rollbackRestoresValuesRelationshipsAndDeletedObjects() throws {
        let sales = graph.insert("Department", ["name": "Sales"]), ops = graph.insert("Department", ["name": "Ops"])
        let ada = graph.insert("Employee", ["name": "Ada"])
        ada.setRelatedObject(sales, forKey: "department")
        try graph.context.save()

        ada["name"] = "Ada L."
        ada.setRelatedObject(ops, forKey: "department")
        let newcomer = graph.insert("Employee", ["name": "New"])
        newcomer.setRelatedObject(sales, forKey: "department")
        graph.context.delete(ops)
        graph.context.rollback()

        #expect(!graph.context.hasChanges)
        #expect(ada.string(forKey: "name") == "Ada")
        #expect(ada.relatedObject(forKey: "department") === sales)
        #expect(sales.relatedObjects(forKey: "employees").map(\.label) == ["Ada"])
        #expect(ops.relatedObjects(forKey: "employees").isEmpty && !ops.isDeleted)
        #expect(newcomer.managedObjectContext == nil)
        try graph.context.save()
        #expect(try graph.storedCount("Employee") == 1)
    }

    @Test func resetForgetsEveryObject() throws {
        graph.insert("Department", ["name": "A"])
        try graph.context.save()
        let unsaved = graph.insert("Department", ["name": "B"])
        #expect(graph.context.registeredObjects.count == 2)
        graph.context.reset()
        #expect(graph.context.registeredObjects.isEmpty && !graph.context.hasChanges)
        #expect(unsaved.managedObjectContext == nil)
        #expect(try graph.context.fetch(FetchRequest(entityName: "Department")).map(\.label) == ["A"])
    }

    @Test func refreshDiscardsOrMergesLocalChanges() throws {
        let dept = graph.insert("Department", ["name": "A", "budget": .decimal(1)])
        try graph.context.save()

        dept["name"] = "Local"
        graph.context.refresh(dept, mergeChanges: false)
        #expect(dept.isFault && !graph.context.hasChanges)
        #expect(dept.string(forKey: "name") == "A")

        // Another context changes the budget; ours changes the name, then merges.
        let other = graph.makeContext()
        try other.existingObject(with: dept.objectID)["budget"] = .decimal(99)
        try other.save()
        dept["name"] = "Mine"
        graph.context.refresh(dept, mergeChanges: true)
        #expect(dept.string(forKey: "name") == "Mine")
        #expect(dept.decimal(forKey: "budget") == 99)
        try graph.context.save()
        let stored = try graph.makeContext().existingObject(with: dept.objectID)
        #expect(stored.string(forKey: "name") == "Mine" && stored.decimal(forKey: "budget") == 99)
    }

    @Test func aStaleUpdateIsAConflict() throws {
        let dept = graph.insert("Department", ["name": "A"])
        try graph.context.save()
        let other = graph.makeContext()
        try other.existingObject(with: dept.objectID)["name"] = "Theirs"
        try other.save()
        dept["name"] = "Ours"
        // Found by the context before writing (the store's own version check is the backstop).
        let error = try #require(throws: MergeError.self) { try graph.context.save() }
        #expect(error.conflicts.map(\.objectID) == [dept.objectID])
        #expect(try graph.makeContext().existingObject(with: dept.objectID).string(forKey: "name") == "Theirs")
    }

    @Test func privateQueueContextRunsWorkOnItsQueue() async throws {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: graph.coordinator)
        let name = try context.performAndWait {
            let d = context.insertNewObject(forEntityName: "Department")
            d["name"] = "Queued"
            try context.save()
            return d.string(forKey: "name")
        }
        #expect(name == "Queued")
        let count = try await context.perform {
            try context.count(for: FetchRequest(entityName: "Department"))
        }
        #expect(count == 1)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            context.perform { done.resume() }
        }
    }

    @Test func didSaveNotificationListsTheChangedIDs() throws {
        let dept = graph.insert("Department", ["name": "A"])
        nonisolated(unsafe) var received: [String: [ManagedObjectID]] = [:]
        let token = NotificationCenter.default.addObserver(
            forName: .managedObjectContextDidSave, object: graph.context, queue: nil
        ) { note in
            for key in ["inserted", "updated", "deleted"] { received[key] = note.userInfo?[key] as? [ManagedObjectID] }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try graph.context.save()
        #expect(received["inserted"] == [dept.objectID] && received["updated"] == [] && received["deleted"] == [])
    }

    @Test func unknownStoreTypeAndIncompatibleModelAreClearErrors() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try CompanyModel.make())
        let unknown = try #require(throws: StoreError.self) { try coordinator.addPersistentStore(type: "Nope") }
        #expect(unknown.code == .unknownStoreType && unknown.message.contains("InMemory"))

        PersistentStoreCoordinator.registerStoreType(StaleStore.self, named: "Stale")
        let stale = try #require(throws: StoreError.self) { try coordinator.addPersistentStore(type: "Stale") }
        #expect(stale.code == .incompatibleModel)
        #expect(stale.message.contains("entities only in the store: Legacy"))
        #expect(coordinator.persistentStores.isEmpty)
    }
}

/// A store whose metadata says another model wrote it.
final class StaleStore: PersistentStore {
    var metadata = StoreMetadata(storeType: "Stale", modelVersionHash: "0000", entityVersionHashes: ["Legacy": "1"])
    let url: URL? = nil
    let configurationName: String? = nil
    init(coordinator: PersistentStoreCoordinator, configurationName: String?, url: URL?, options: [String: String]) {}
    func load() throws {}
    func fetchRows(_ request: StoreFetchRequest) throws -> [StoreRow] { [] }
    func row(for objectID: ManagedObjectID) throws -> StoreRow? { nil }
    func destinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID] { [] }
    func newReferences(for entity: EntityDescription, count: Int) throws -> [ManagedObjectID.Reference] { [] }
    func save(_ request: SaveChangesRequest) throws {}
}
