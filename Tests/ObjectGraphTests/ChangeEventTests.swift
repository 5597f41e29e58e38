import Foundation
import ObjectGraph
import TestSupport
import Testing

/// An employee class that records its save hooks and computes a transient when fetched.
final class AuditedEmployee: ManagedObject {
    nonisolated(unsafe) static var log: [String] = []

    override func willSave() {
        super.willSave()
        Self.log.append(
            "willSave \(string(forKey: "name") ?? "?") \(isDeleted ? "deleted" : isInserted ? "inserted" : "updated")")
        // Changes made here are saved (set only when different, or the hook would loop).
        if !isDeleted, string(forKey: "scratch") != "stamped" { self["scratch"] = "stamped" }
        if !isDeleted, let badge = relatedObject(forKey: "badge"), badge.string(forKey: "code") == nil {
            badge["code"] = .string("B-\(string(forKey: "name") ?? "")")
        }
    }

    override func didSave() {
        super.didSave()
        Self.log.append("didSave \(string(forKey: "name") ?? "?") hasChanges=\(hasChanges)")
    }

    override func awakeFromFetch() {
        super.awakeFromFetch()
        self["scratch"] = .string("awake")  // a transient computed from stored values
    }
}

/// An employee class that records deletion and faulting hooks, and the values it can still read.
final class FaultingEmployee: ManagedObject {
    nonisolated(unsafe) static var log: [String] = []
    override func prepareForDeletion() {
        super.prepareForDeletion()
        Self.log.append(
            "prepareForDeletion department=\(relatedObject(forKey: "department")?.string(forKey: "name") ?? "-")")
    }
    override func willTurnIntoFault() {
        super.willTurnIntoFault()
        Self.log.append("willTurnIntoFault \(string(forKey: "name") ?? "?")")
    }
    override func didTurnIntoFault() {
        super.didTurnIntoFault()
        Self.log.append("didTurnIntoFault")
    }
}

/// An employee that stamps its age once saved (a change made in `didSave`).
final class StampingEmployee: ManagedObject {
    override func didSave() {
        super.didSave()
        if !isDeleted, integer(forKey: "age") == nil { self["age"] = .integer(1) }
    }
}

@Suite(.serialized) struct ChangeEventTests {
    static func graph() throws -> TestGraph {
        try TestGraph(model: try CompanyModel.make(employeeClass: AuditedEmployee.self))
    }

    @Test func willSaveRunsBeforeValidationForEveryChangedObjectAndDidSaveAfterTheWrite() throws {
        AuditedEmployee.log = []
        let graph = try Self.graph()
        let ada = graph.insert("Employee", ["name": "Ada"])
        let badge = graph.insert("Badge")
        ada.setRelatedObject(badge, forKey: "badge")
        try graph.context.save()
        #expect(AuditedEmployee.log == ["willSave Ada inserted", "didSave Ada hasChanges=false"])
        let stored = try graph.withNewContext().context.fetch(FetchRequest(entityName: "Badge"))
        #expect(stored.map { $0.string(forKey: "code") } == ["B-Ada"], "an object changed in willSave is saved too")
        AuditedEmployee.log = []
        ada["age"] = .integer(36)
        try graph.context.save()
        graph.context.delete(ada)
        try graph.context.save()
        #expect(
            AuditedEmployee.log == [
                "willSave Ada updated", "didSave Ada hasChanges=false", "willSave Ada deleted",
                "didSave Ada hasChanges=true",
            ])
        AuditedEmployee.log = []
        try graph.context.save()
        #expect(AuditedEmployee.log.isEmpty, "a save with nothing to write calls no hook")
    }

    @Test func prepareForDeletionSeesTheRelationshipsBeforeDeleteRulesAndFaultingHooksFrame() throws {
        FaultingEmployee.log = []
        let graph = try TestGraph(model: try CompanyModel.make(employeeClass: FaultingEmployee.self))
        let sales = graph.insert("Department", ["name": "Sales"])
        let ada = graph.insert("Employee", ["name": "Ada"])
        let bob = graph.insert("Employee", ["name": "Bob"])
        ada.setRelatedObject(sales, forKey: "department")
        bob.setRelatedObject(sales, forKey: "department")
        try graph.context.save()
        graph.context.delete(ada)
        #expect(FaultingEmployee.log == ["prepareForDeletion department=Sales"])
        FaultingEmployee.log = []
        graph.context.refresh(bob, mergeChanges: false)
        #expect(FaultingEmployee.log == ["willTurnIntoFault Bob", "didTurnIntoFault"])
    }

    @Test func refreshAllObjectsFaultsUnchangedObjectsAndKeepsChanges() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let sales = graph.insert("Department", ["name": "Sales"])
        let ada = graph.insert("Employee", ["name": "Ada"])
        let gone = graph.insert("Badge", ["code": "x"])
        try graph.context.save()
        let other = graph.makeContext()
        try other.existingObject(with: sales.objectID)["budget"] = .decimal(5)
        try other.existingObject(with: ada.objectID)["age"] = .integer(40)
        try other.save()
        ada["name"] = "Ada L."
        graph.context.delete(gone)
        graph.context.refreshAllObjects()
        #expect(sales.isFault && sales.decimal(forKey: "budget") == 5, "reloaded on access")
        #expect(ada.string(forKey: "name") == "Ada L." && ada.integer(forKey: "age") == 40, "merged")
        #expect(gone.isDeleted, "a delete is a change kept")
    }

    @Test func awakeFromFetchRunsWithChangeTrackingOff() throws {
        let graph = try Self.graph()
        graph.insert("Employee", ["name": "Ada"])
        try graph.context.save()
        let context = graph.withNewContext().context
        let ada = try #require(try context.fetch(FetchRequest(entityName: "Employee")).first)
        #expect(ada.string(forKey: "scratch") == "awake")
        #expect(!ada.hasChanges && !context.hasChanges, "setting a transient in awakeFromFetch changes nothing")
    }

    @Test func objectsDidChangeTellsEachEventsInsertsUpdatesDeletesAndRefreshes() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let context = graph.context
        var events: [ObjectsDidChange] = []
        let observation = context.observeObjectsDidChange { events.append($0) }
        let sales = graph.insert("Department", ["name": "Sales"])
        let ada = graph.insert("Employee", ["name": "Ada"])
        ada.setRelatedObject(sales, forKey: "department")
        context.processPendingChanges()
        #expect(events.count == 1)
        #expect(Set(events[0].inserted) == [sales, ada] && events[0].updated.isEmpty && events[0].deleted.isEmpty)
        try context.save()
        #expect(events.count == 1, "the save's own event had nothing new")
        ada["age"] = .integer(36)
        let temp = graph.insert("Badge")
        context.delete(temp)  // inserted and deleted in one event: nothing to tell
        context.delete(sales)
        context.processPendingChanges()
        #expect(events.count == 2)
        #expect(events[1].inserted.isEmpty && events[1].deleted == [sales] && events[1].updated == [ada])
        context.processPendingChanges()
        #expect(events.count == 2, "nothing changed, nothing posted")
        context.rollback()
        context.refresh(ada, mergeChanges: false)
        context.processPendingChanges()
        #expect(events.last?.refreshed == [ada])
        context.reset()
        context.processPendingChanges()
        #expect(events.last?.invalidatedAll == true)
        observation.cancel()
        graph.insert("Badge")
        context.processPendingChanges()
        #expect(events.count == 4, "a cancelled observer hears nothing")
    }

    @Test func anotherContextsDeleteInvalidatesTheObjectAndTheNotificationCenterHearsIt() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        graph.insert("Badge", ["code": "A"])
        try graph.context.save()
        let other = graph.makeContext()
        let badge = try #require(try other.fetch(FetchRequest(entityName: "Badge")).first)
        other.postsObjectsDidChangeNotifications = true
        let received = Received()
        let token = NotificationCenter.default.addObserver(
            forName: .managedObjectContextObjectsDidChange, object: other, queue: nil
        ) { note in
            let change = note.userInfo?["objectsDidChange"] as? ObjectsDidChange
            received.invalidated += change?.invalidated.count ?? 0
        }
        defer { NotificationCenter.default.removeObserver(token) }
        graph.context.delete(try #require(try graph.context.fetch(FetchRequest(entityName: "Badge")).first))
        let saved = graph.context.observeDidSave { save in received.save = save }
        defer { saved.cancel() }
        try graph.context.save()
        other.mergeChanges(fromContextDidSave: try #require(received.save))
        other.processPendingChanges()
        #expect(badge.managedObjectContext == nil, "the object left the context")
        #expect(received.invalidated == 1)
    }

    @Test func observersHearEachChangeOfTheirPropertyWithOldAndNewValues() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let ada = graph.insert("Employee", ["name": "Ada"])
        let sales = graph.insert("Department", ["name": "Sales"])
        var heard: [String] = []
        let names = ada.observe("name") { change in
            if case .attribute(let old, let new) = change.kind { heard.append("name \(old) -> \(new)") }
        }
        let all = sales.observe(nil) { change in
            if case .toMany(let added, let removed) = change.kind {
                heard.append("\(change.key) +\(added.count) -\(removed.count)")
            }
        }
        ada["name"] = "Ada L."
        ada["age"] = .integer(36)  // not observed
        ada.setRelatedObject(sales, forKey: "department")  // sales hears it as the inverse side
        ada.setRelatedObject(nil, forKey: "department")
        #expect(heard == ["name \"Ada\" -> \"Ada L.\"", "employees +1 -0", "employees +0 -1"])
        names.cancel()
        all.cancel()
        ada["name"] = "Lovelace"
        #expect(heard.count == 3)
    }

    @Test func primitiveAccessorsReadAndWriteWithoutObserversOrInverses() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let ada = graph.insert("Employee", ["name": "Ada"])
        let sales = graph.insert("Department", ["name": "Sales"])
        try graph.context.save()
        var heard = 0
        let observation = ada.observe(nil) { _ in heard += 1 }
        ada.setPrimitiveValue("Ada L.", forKey: "name")
        ada.setPrimitiveValue(sales, forKey: "department")
        #expect(ada.primitiveValue(forKey: "name") as? String == "Ada L.")
        #expect(ada.primitiveValue(forKey: "department") as? ManagedObject === sales)
        #expect(heard == 0 && ada.isUpdated, "no observer, but a change to save")
        #expect(sales.relatedObjects(forKey: "employees").isEmpty, "no inverse maintenance")
        observation.cancel()
    }

    @Test func aChangeMadeInDidSaveIsSavedByTheNextSave() throws {
        let graph = try TestGraph(model: try CompanyModel.make(employeeClass: StampingEmployee.self))
        let ada = graph.insert("Employee", ["name": "Ada"])
        try graph.context.save()
        #expect(ada.isUpdated && graph.context.hasChanges)
        try graph.context.save()
        ada["name"] = "Ada L."
        try graph.context.save()
        let stored = try graph.withNewContext().context.existingObject(with: ada.objectID)
        #expect(stored.integer(forKey: "age") == 1 && stored.string(forKey: "name") == "Ada L.")
    }

    @Test func aChildsSaveLeavesTheParentsTransientRelationshipsAlone() throws {
        let graph = try TestGraph(model: try ComputedModel.make())
        let parent = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: graph.coordinator)
        let ids = try parent.performAndWait {
            let customer = parent.insertNewObject(forEntityName: "Customer")
            customer["name"] = "Ann"
            let order = parent.insertNewObject(forEntityName: "Order")
            order["number"] = 1
            try parent.save()
            customer.setRelatedObject(order, forKey: "favorite")
            return (customer.objectID, order.objectID)
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        try child.performAndWait {
            try child.existingObject(with: ids.0)["name"] = "Anne"
            try child.save()
        }
        let favorite = try parent.performAndWait {
            try parent.existingObject(with: ids.0).relatedObject(forKey: "favorite")?.objectID
        }
        #expect(favorite == ids.1)
    }
}

/// What the notification blocks saw (they run on the test's thread, synchronously).
private final class Received: @unchecked Sendable {
    var invalidated = 0
    var save: ContextDidSave?
}
