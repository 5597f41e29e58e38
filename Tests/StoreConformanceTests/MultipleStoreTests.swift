import Drivers
import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// One coordinator with a SQLite store and an in-memory store under two configurations of a model:
/// objects routed by entity, fetches across both, saves that write both, `assign(_:to:)`.
@Suite struct MultipleStoreTests {
    /// `Customer` and `Invoice` are kept (configuration `Kept`), `Draft` is scratch (`Scratch`), and
    /// `Note` may live in either.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(
            entities: [
                EntityDescription(
                    name: "Customer", attributes: [AttributeDescription(name: "name", type: .string)],
                    relationships: [
                        RelationshipDescription(
                            name: "invoices", destination: "Invoice", inverse: "customer", isToMany: true)
                    ]),
                EntityDescription(
                    name: "Invoice", attributes: [AttributeDescription(name: "amount", type: .integer64)],
                    relationships: [
                        RelationshipDescription(name: "customer", destination: "Customer", inverse: "invoices")
                    ]),
                EntityDescription(name: "Draft", attributes: [AttributeDescription(name: "text", type: .string)]),
                EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)]),
            ],
            configurations: ["Kept": ["Customer", "Invoice", "Note"], "Scratch": ["Draft", "Note"]])
    }

    struct Setup {
        let directory: TemporaryDirectory
        let coordinator: PersistentStoreCoordinator
        let scratch: any PersistentStore
        let kept: any PersistentStore
        let context: ManagedObjectContext
        var path: String { directory.url.appendingPathComponent("kept.sqlite").path }

        init(keptOptions: [String: String] = [:], directory: TemporaryDirectory? = nil) throws {
            SQLiteStore.register()
            self.directory = try directory ?? TemporaryDirectory()
            coordinator = PersistentStoreCoordinator(managedObjectModel: try MultipleStoreTests.model())
            scratch = try coordinator.addPersistentStore(type: InMemoryStore.storeType, configurationName: "Scratch")
            kept = try coordinator.addPersistentStore(
                type: SQLiteStore.storeType, configurationName: "Kept",
                at: self.directory.url.appendingPathComponent("kept.sqlite"), options: keptOptions)
            context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
        }

        @discardableResult
        func insert(_ entity: String, _ key: String, _ value: AttributeValue) -> ManagedObject {
            let object = context.insertNewObject(forEntityName: entity)
            object[key] = value
            return object
        }
    }

    static func tables(_ path: String) throws -> [String] {
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        let statement = try connection.makeStatement(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_sluice%' ESCAPE '\\' ORDER BY 1")
        var names: [String] = []
        while try statement.step() { if case .text(let name) = statement.value(0) { names.append(name) } }
        return names
    }

    @Test func objectsAreRoutedByEntityAndTheSQLiteStoreMakesOnlyItsConfigurationsTables() throws {
        let setup = try Setup()
        let ann = setup.insert("Customer", "name", "Ann")
        let invoice = setup.insert("Invoice", "amount", .integer(120))
        invoice.setRelatedObject(ann, forKey: "customer")
        let draft = setup.insert("Draft", "text", "unsent")
        try setup.context.save()
        #expect(ann.objectID.storeIdentifier == setup.kept.identifier)
        #expect(invoice.objectID.storeIdentifier == setup.kept.identifier)
        #expect(draft.objectID.storeIdentifier == setup.scratch.identifier)
        let tables = try Self.tables(setup.path)
        #expect(tables == ["Customer", "Invoice", "Note"], "\(tables)")
        #expect((setup.scratch as? InMemoryStore)?.rowCount == 1)
        // Another coordinator reading the file alone finds the kept objects and their link.
        let reader = try Setup(directory: setup.directory)
        let customers = try reader.context.fetch(FetchRequest(entityName: "Customer"))
        #expect(customers.map { $0.relatedObjects(forKey: "invoices").count } == [1])
        #expect(try reader.context.count(for: FetchRequest(entityName: "Draft")) == 0, "drafts were never in the file")
    }

    @Test func aFetchOfAnEntityInBothStoresMergesTheirObjectsAndAssignChoosesTheStore() throws {
        let setup = try Setup()
        let first = setup.insert("Note", "text", "b in the file")  // the first store that holds Note: Scratch
        let second = setup.insert("Note", "text", "a in memory")
        setup.context.assign(first, to: setup.kept)
        try setup.context.save()
        #expect(first.objectID.storeIdentifier == setup.kept.identifier)
        #expect(second.objectID.storeIdentifier == setup.scratch.identifier)
        var request = FetchRequest(entityName: "Note", sortDescriptors: [FetchSortDescriptor("text")])
        let reader = ManagedObjectContext(concurrencyType: .confinement, coordinator: setup.coordinator)
        #expect(try reader.fetch(request).map { $0.string(forKey: "text") } == ["a in memory", "b in the file"])
        request.predicate = try FetchPredicate(format: "text BEGINSWITH 'b'")
        #expect(try reader.count(for: request) == 1)
        // An update and a delete each go to the object's own store.
        try reader.existingObject(with: first.objectID)["text"] = "b changed"
        reader.delete(try reader.existingObject(with: second.objectID))
        try reader.save()
        #expect((setup.scratch as? InMemoryStore)?.rowCount == 0)
        let file = try Setup(directory: setup.directory)
        #expect(
            try file.context.fetch(FetchRequest(entityName: "Note")).map { $0.string(forKey: "text") } == ["b changed"])
    }

    @Test func whenTheSecondStoreFailsTheFirstKeepsWhatItWrote() throws {
        let made = try Setup()
        made.insert("Customer", "name", "Ann")
        try made.context.save()
        // The same file opened read-only: its part of a save fails; the in-memory store, added first,
        // has written its part by then (no transaction spans two stores).
        let setup = try Setup(keptOptions: ["read_only": "true"], directory: made.directory)
        setup.insert("Draft", "text", "written")
        setup.insert("Customer", "name", "Bob")
        #expect(throws: StoreError.self) { try setup.context.save() }
        #expect((setup.scratch as? InMemoryStore)?.rowCount == 1)
        let file = try Setup(directory: made.directory)
        #expect(
            try file.context.fetch(FetchRequest(entityName: "Customer")).map { $0.string(forKey: "name") } == ["Ann"])
        #expect(setup.context.hasChanges, "the context keeps its changes")
    }

    @Test func aPostgreSQLStoreWithAConfigurationMakesOnlyItsTables() throws {
        PostgresStore.register()
        let url = PostgresTestServer.freshSchemaURL()
        defer { PostgresTestServer.dropSchema(of: url) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(type: InMemoryStore.storeType, configurationName: "Scratch")
        let kept = try coordinator.addPersistentStore(type: PostgresStore.storeType, configurationName: "Kept", at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
        let ann = context.insertNewObject(forEntityName: "Customer")
        ann["name"] = "Ann"
        context.insertNewObject(forEntityName: "Draft")["text"] = "scratch"
        try context.save()
        #expect(ann.objectID.storeIdentifier == kept.identifier)
        let reader = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try reader.addPersistentStore(type: PostgresStore.storeType, configurationName: "Kept", at: url)
        let names = try ManagedObjectContext(concurrencyType: .confinement, coordinator: reader)
            .fetch(FetchRequest(entityName: "Customer")).map { $0.string(forKey: "name") }
        #expect(names == ["Ann"])
    }
}
