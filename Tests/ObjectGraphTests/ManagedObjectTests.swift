import Foundation
import ObjectGraph
import TestSupport
import Testing

final class TrackedEmployee: ManagedObject {
    nonisolated(unsafe) static var events: [String] = []

    override func awakeFromInsert() {
        super.awakeFromInsert()
        Self.events.append("insert")
        self["hiredAt"] = .date(Date(timeIntervalSinceReferenceDate: 1000))
    }
    override func awakeFromFetch() {
        super.awakeFromFetch()
        Self.events.append("fetch:\(string(forKey: "name") ?? "?")")
    }
    override func didTurnIntoFault() {
        super.didTurnIntoFault()
        Self.events.append("fault")
    }

    var name: String? {
        get { string(forKey: "name") }
        set { self["name"] = newValue.map { .string($0) } ?? .null }
    }
}

@Suite(.serialized) struct ManagedObjectTests {
    @Test func valuesAreReadAndWrittenByNameIndexAndKeyValueCoding() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let e = graph.insert("Employee")
        let nameIndex = try #require(e.entity.attributeIndex(named: "name"))
        e["name"] = "Ada"
        #expect(e[attributeAt: nameIndex] == .string("Ada"))
        e[attributeAt: nameIndex] = .string("Grace")
        #expect(e.string(forKey: "name") == "Grace")
        e.setValue(Decimal(string: "1234.56")!, forKey: "salary")
        #expect(e.decimal(forKey: "salary") == Decimal(string: "1234.56"))
        e.setValue(Int16(42), forKey: "age")
        #expect(e.value(forKey: "age") as? Int64 == 42)
        #expect(e.integer(forKey: "age") == 42)
        e.setValue(nil, forKey: "age")
        #expect(e["age"] == .null && e.value(forKey: "age") == nil)
        let d = graph.insert("Department", ["name": "R&D"])
        e.setValue(d, forKey: "department")
        #expect(e.value(forKey: "department") as? ManagedObject === d)
        #expect((d.value(forKey: "employees") as? [ManagedObject])?.first === e)
    }

    @Test func lifeCycleHooksRunAtInsertFetchAndFault() throws {
        TrackedEmployee.events = []
        let graph = try TestGraph(model: try CompanyModel.make(employeeClass: TrackedEmployee.self))
        let e = graph.context.insertNewObject(TrackedEmployee.self, forEntityName: "Employee")
        e.name = "Ada"
        #expect(e.date(forKey: "hiredAt") == Date(timeIntervalSinceReferenceDate: 1000))
        try graph.context.save()
        #expect(TrackedEmployee.events == ["insert"], "awakeFromInsert runs once, not again at save")

        let other = graph.makeContext()
        let fetched = try other.fetch(FetchRequest(entityName: "Employee"))
        #expect(fetched.first is TrackedEmployee)
        #expect(TrackedEmployee.events == ["insert", "fetch:Ada"])
        other.refresh(fetched[0], mergeChanges: false)
        #expect(fetched[0].isFault)
        #expect(TrackedEmployee.events.last == "fault")
        _ = fetched[0]["name"]
        #expect(TrackedEmployee.events.last == "fetch:Ada")
    }

    @Test func objectIDsAreTemporaryUntilSaveThenPermanent() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let d = graph.insert("Department", ["name": "Ops"])
        let temporary = d.objectID
        #expect(temporary.isTemporaryID && temporary.storeIdentifier == nil)
        #expect(graph.context.registeredObject(for: temporary) === d)
        try graph.context.save()
        #expect(!d.objectID.isTemporaryID)
        #expect(d.objectID.storeIdentifier == graph.store.identifier)
        #expect(graph.context.registeredObject(for: temporary) == nil)
        #expect(graph.context.registeredObject(for: d.objectID) === d)
    }

    @Test func obtainPermanentIDsBeforeSave() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let a = graph.insert("Department", ["name": "A"]), b = graph.insert("Badge")
        try graph.context.obtainPermanentIDs(for: [a, b])
        #expect(!a.objectID.isTemporaryID && !b.objectID.isTemporaryID && a.objectID != b.objectID)
        let id = a.objectID
        try graph.context.save()
        #expect(a.objectID == id, "a permanent ID does not change at save")
    }

    @Test func objectIDEqualityDoesNotDependOnHowTheIDWasMade() {
        let made = ManagedObjectID(entityName: "Department", storeIdentifier: "S1", reference: .integer(7))
        let derived = ManagedObjectID(entityName: "Department", storeIdentifier: "S1", reference: .integer(1))
            .withReference(.integer(7))
        #expect(made == derived)
        #expect(Set([made, derived]).count == 1)
        #expect(derived.entityName == "Department" && derived.storeIdentifier == "S1")
        #expect(made != made.withReference(.integer(8)))
        #expect(made != ManagedObjectID(entityName: "Employee", storeIdentifier: "S1", reference: .integer(7)))
        #expect(made != ManagedObjectID(entityName: "Department", storeIdentifier: "S2", reference: .integer(7)))
        #expect(made != ManagedObjectID(entityName: "Department", storeIdentifier: nil, reference: .integer(7)))
    }

    @Test func uriRepresentationRoundTrips() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let d = graph.insert("Department", ["name": "Ops"])
        let temporaryURI = d.objectID.uriRepresentation
        #expect(ManagedObjectID(uriRepresentation: temporaryURI) == d.objectID)
        try graph.context.save()
        let uri = d.objectID.uriRepresentation
        #expect(uri.absoluteString.hasPrefix("x-sluice://\(graph.store.identifier)/Department/p"))
        let parsed = try #require(graph.coordinator.managedObjectID(forURIRepresentation: uri))
        #expect(parsed == d.objectID)
        let restored = try graph.makeContext().existingObject(with: parsed)
        #expect(restored.string(forKey: "name") == "Ops")
        #expect(
            graph.coordinator.managedObjectID(
                forURIRepresentation: URL(string: "x-sluice://other-store/Department/p1")!) == nil)
        #expect(ManagedObjectID(uriRepresentation: URL(string: "https://example.com/x")!) == nil)
        let stringID = ManagedObjectID(entityName: "Badge", storeIdentifier: "S", reference: .string("a b/c"))
        #expect(ManagedObjectID(uriRepresentation: stringID.uriRepresentation) == stringID)
    }

    @Test func transientAttributesAreNeverStored() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let e = graph.insert("Employee", ["name": "Ada", "scratch": "temp"])
        try graph.context.save()
        #expect(e.string(forKey: "scratch") == "temp", "the object keeps its transient value")
        let fetched = try graph.makeContext().fetch(FetchRequest(entityName: "Employee"))
        #expect(fetched.first?["scratch"] == .null)
    }

    @Test func changedAndCommittedValues() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let d = graph.insert("Department", ["name": "Ops", "budget": .decimal(10)])
        try graph.context.save()
        d["budget"] = .decimal(20)
        #expect(d.changedValues() == ["budget": .decimal(20)])
        #expect(d.committedValues()?["budget"] == .decimal(10))
        #expect(d.isUpdated)
    }
}
