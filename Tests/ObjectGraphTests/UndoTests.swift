import Foundation
import ObjectGraph
import TestSupport
import Testing

/// The context's undo manager: groups, undo and redo of every kind of change, and what clears it.
@Suite struct UndoTests {
    static func graph() throws -> (TestGraph, ContextUndoManager) {
        let graph = try TestGraph(model: try CompanyModel.make())
        let undo = ContextUndoManager()
        graph.context.undoManager = undo
        return (graph, undo)
    }

    @Test func aContextHasNoUndoManagerUnlessOneIsSet() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        #expect(graph.context.undoManager == nil)
    }

    @Test func undoAndRedoAnAttributeChangeAsOneEvent() throws {
        let (graph, undo) = try Self.graph()
        let ada = graph.insert("Employee", ["name": "Ada"])
        try graph.context.save()
        ada["name"] = "Ada L."
        ada["age"] = .integer(36)
        graph.context.processPendingChanges()  // the event ends: one group
        ada["name"] = "Lovelace"
        #expect(undo.groupCount == 2)
        undo.undo()
        #expect(ada.string(forKey: "name") == "Ada L.")
        undo.undo()
        #expect(ada.string(forKey: "name") == "Ada" && ada["age"] == .null)
        #expect(ada.changedValues().isEmpty, "back at the committed values")
        #expect(!undo.canUndo && undo.canRedo)
        undo.redo()
        #expect(ada.string(forKey: "name") == "Ada L." && ada.integer(forKey: "age") == 36)
        undo.redo()
        #expect(ada.string(forKey: "name") == "Lovelace" && !undo.canRedo)
    }

    @Test func undoAnInsertTakesTheObjectOutOfTheSaveAndRedoPutsItBack() throws {
        let (graph, undo) = try Self.graph()
        let sales = graph.insert("Department", ["name": "Sales"])
        graph.context.processPendingChanges()
        let ada = graph.insert("Employee", ["name": "Ada"])
        ada.setRelatedObject(sales, forKey: "department")
        undo.undo()
        #expect(!ada.isInserted && ada.relatedObject(forKey: "department") == nil)
        #expect(sales.relatedObjects(forKey: "employees").isEmpty, "the inverse is undone too")
        try graph.context.save()
        let reader = graph.withNewContext().context
        #expect(try reader.count(for: FetchRequest(entityName: "Employee")) == 0)
        #expect(try reader.count(for: FetchRequest(entityName: "Department")) == 1)
        #expect(!undo.canUndo && !undo.canRedo, "a save removes every action")
    }

    @Test func undoADeleteRestoresTheObjectAndWhatItsDeleteRulesChanged() throws {
        let (graph, undo) = try Self.graph()
        let sales = graph.insert("Department", ["name": "Sales"])
        let ada = graph.insert("Employee", ["name": "Ada"])
        let room = graph.insert("Room", ["number": "101"])
        ada.setRelatedObject(sales, forKey: "department")
        room.setRelatedObject(sales, forKey: "department")
        try graph.context.save()
        graph.context.delete(sales)  // nullifies ada.department, cascades to the room
        #expect(sales.isDeleted && room.isDeleted && ada.relatedObject(forKey: "department") == nil)
        undo.undo()
        #expect(!sales.isDeleted && !room.isDeleted)
        #expect(ada.relatedObject(forKey: "department") === sales)
        #expect(Set(sales.relatedObjects(forKey: "employees")) == [ada])
        try graph.context.save()
        #expect(try graph.withNewContext().context.count(for: FetchRequest(entityName: "Room")) == 1)
        undo.redo()  // nothing: the save removed the actions
        #expect(!sales.isDeleted)
    }

    @Test func undoToManyEditsAndOrderedMoves() throws {
        let (graph, undo) = try Self.graph()
        let list = graph.insert("Playlist", ["title": "Mix"])
        let tracks = (1...3).map { graph.insert("Track", ["title": .string("t\($0)")]) }
        list.setRelatedObjects(tracks, forKey: "tracks")
        try graph.context.save()
        list.setRelatedObjects([tracks[2], tracks[0], tracks[1]], forKey: "tracks")
        graph.context.processPendingChanges()
        list.removeRelatedObject(tracks[0], forKey: "tracks")
        graph.context.processPendingChanges()
        undo.undo()
        #expect(list.relatedObjects(forKey: "tracks") == [tracks[2], tracks[0], tracks[1]])
        undo.undo()
        #expect(list.relatedObjects(forKey: "tracks") == tracks)
        undo.redo()
        #expect(list.relatedObjects(forKey: "tracks") == [tracks[2], tracks[0], tracks[1]])
    }

    @Test func explicitGroupsNestLevelsDropTheOldestAndRegistrationCanPause() throws {
        let (graph, undo) = try Self.graph()
        undo.levelsOfUndo = 2
        let ada = graph.insert("Employee", ["name": "Ada"])
        graph.context.processPendingChanges()
        undo.beginUndoGrouping()
        ada["name"] = "A1"
        undo.beginUndoGrouping()
        ada["age"] = .integer(1)
        undo.endUndoGrouping()
        graph.context.processPendingChanges()  // an event inside an explicit group does not close it
        ada["name"] = "A2"
        undo.endUndoGrouping()
        undo.disableUndoRegistration()
        ada["age"] = .integer(99)
        undo.enableUndoRegistration()
        ada["name"] = "A3"
        graph.context.processPendingChanges()
        #expect(undo.groupCount == 2, "three groups, the oldest (the insert) dropped")
        undo.undo()
        #expect(ada.string(forKey: "name") == "A2" && ada.integer(forKey: "age") == 99, "not registered: kept")
        undo.undo()
        #expect(ada.string(forKey: "name") == "Ada" && ada["age"] == .null, "the nested group went with its outer one")
        #expect(!undo.canUndo && ada.isInserted, "the insert is beyond the levels kept")
    }

    @Test func rollbackAndResetRemoveEveryAction() throws {
        let (graph, undo) = try Self.graph()
        graph.insert("Badge", ["code": "x"])
        #expect(undo.canUndo)
        graph.context.rollback()
        #expect(!undo.canUndo)
        graph.insert("Badge", ["code": "y"])
        graph.context.reset()
        #expect(!undo.canUndo && !undo.canRedo)
    }

    @Test func performAndWaitEndsAnEvent() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: graph.coordinator)
        let undo = ContextUndoManager()
        context.performAndWait { context.undoManager = undo }
        context.performAndWait { context.insertNewObject(forEntityName: "Badge")["code"] = "a" }
        context.performAndWait { context.insertNewObject(forEntityName: "Badge")["code"] = "b" }
        let groups = context.performAndWait { undo.groupCount }
        #expect(groups == 2)
    }

    @Test func undoAfterARefreshOrAnObjectLeavingTheContextDoesWhatIsLeft() throws {
        let (graph, undo) = try Self.graph()
        let ada = graph.insert("Employee", ["name": "Ada"])
        let badge = graph.insert("Badge", ["code": "b"])
        try graph.context.save()
        ada["name"] = "X"
        badge["code"] = "c"
        graph.context.processPendingChanges()
        graph.context.refresh(ada, mergeChanges: false)  // a fault now
        let other = graph.makeContext()
        other.delete(try other.existingObject(with: badge.objectID))
        let saved = Box<ContextDidSave>()
        let observation = other.observeDidSave { saved.value = $0 }
        try other.save()
        observation.cancel()
        graph.context.mergePolicy = .storeTrumps  // the other context's delete wins over the change here
        graph.context.mergeChanges(fromContextDidSave: try #require(saved.value))  // the badge leaves
        undo.undo()
        #expect(ada.string(forKey: "name") == "Ada", "the fault loads, the old value is set again")
        #expect(badge.managedObjectContext == nil)
    }
}

/// A value set from a notification block.
final class Box<T>: @unchecked Sendable {
    var value: T?
}
