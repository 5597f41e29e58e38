import Foundation
import ObjectGraph
import TestSupport
import Testing

@Suite struct DeleteRuleTests {
    let graph: TestGraph
    init() throws { graph = try TestGraph(model: try CompanyModel.make()) }

    @Test func nullifyClearsTheInverseOnEachDestination() throws {
        let sales = graph.insert("Department", ["name": "Sales"])
        let ada = graph.insert("Employee", ["name": "Ada"]), bob = graph.insert("Employee", ["name": "Bob"])
        ada.setRelatedObject(sales, forKey: "department")
        bob.setRelatedObject(sales, forKey: "department")
        try graph.context.save()
        graph.context.delete(sales)
        #expect(ada.relatedObject(forKey: "department") == nil && bob.relatedObject(forKey: "department") == nil)
        #expect(graph.context.updatedObjects == [ada, bob])
        try graph.context.save()
        let fresh = graph.makeContext()
        #expect(try fresh.existingObject(with: ada.objectID).relatedObject(forKey: "department") == nil)
        #expect(try graph.storedCount("Department") == 0)
        #expect(try graph.storedCount("Employee") == 2)
    }

    @Test func cascadeDeletesDestinationsRecursively() throws {
        let sales = graph.insert("Department", ["name": "Sales"])
        let room = graph.insert("Room", ["number": "101"])
        room.setRelatedObject(sales, forKey: "department")
        for label in ["d1", "d2"] {
            graph.insert("Desk", ["label": .string(label)]).setRelatedObject(room, forKey: "room")
        }
        try graph.context.save()
        #expect(try graph.storedCount("Desk") == 2)

        graph.context.delete(sales)
        #expect(room.isDeleted)
        #expect(graph.context.deletedObjects.count == 4)
        try graph.context.save()
        #expect(try graph.storedCount("Room") == 0)
        #expect(try graph.storedCount("Desk") == 0)
    }

    @Test func denyFailsTheSaveNamingTheObjectAndRelationshipAndChangesNothing() throws {
        let sales = graph.insert("Department", ["name": "Sales"])
        graph.insert("Contract", ["code": "C-1"]).setRelatedObject(sales, forKey: "department")
        try graph.context.save()
        graph.context.delete(sales)
        let error = try #require(throws: ValidationError.self) { try graph.context.save() }
        #expect(error.failures.count == 1)
        let failure = error.failures[0]
        #expect(failure.rule == .deny && failure.key == "contracts" && failure.entityName == "Department")
        #expect(failure.objectID == sales.objectID)
        #expect(failure.message.contains("still has 1 object"))
        #expect(try graph.storedCount("Department") == 1)
        #expect(graph.context.hasChanges, "the failed save keeps the context's changes")
    }

    @Test func denyAllowsTheDeleteOnceDestinationsAreDeletedToo() throws {
        let sales = graph.insert("Department", ["name": "Sales"])
        let contract = graph.insert("Contract", ["code": "C-1"])
        contract.setRelatedObject(sales, forKey: "department")
        try graph.context.save()
        graph.context.delete(contract)
        graph.context.delete(sales)
        try graph.context.save()
        #expect(try graph.storedCount("Department") == 0)
    }

    @Test func noActionLeavesDestinationsPointingAtTheDeletedObject() throws {
        let sales = graph.insert("Department", ["name": "Sales"])
        let box = graph.insert("ArchiveBox", ["label": "2019"])
        box.setRelatedObject(sales, forKey: "department")
        try graph.context.save()
        let deletedID = sales.objectID
        graph.context.delete(sales)
        #expect(box.relatedObject(forKey: "department") === sales, "No Action does not touch the destination")
        #expect(!box.isUpdated)
        try graph.context.save()

        let fresh = graph.makeContext()
        let reloaded = try fresh.existingObject(with: box.objectID)
        let dangling = try #require(reloaded.relatedObject(forKey: "department"))
        #expect(dangling.objectID == deletedID, "the stored box still refers to the deleted department")
        #expect(throws: StoreError.self) { try fresh.existingObject(with: deletedID) }
    }

    @Test func unidirectionalRelationshipIsNotUpdatedWhenItsDestinationIsDeleted() throws {
        // The documented trap: with no inverse, deleting the destination neither clears the reference
        // nor marks the source changed, so the store keeps a reference to a row that is gone.
        let ada = graph.insert("Employee", ["name": "Ada"])
        let badge = graph.insert("Badge", ["code": "B-7"])
        ada.setRelatedObject(badge, forKey: "badge")
        try graph.context.save()
        let badgeID = badge.objectID

        graph.context.delete(badge)
        #expect(ada.relatedObject(forKey: "badge") === badge)
        #expect(!ada.hasChanges && !graph.context.updatedObjects.contains(ada))
        try graph.context.save()

        let fresh = graph.makeContext()
        let stored = try fresh.existingObject(with: ada.objectID)
        #expect(stored.relatedObject(forKey: "badge")?.objectID == badgeID)
        #expect(throws: StoreError.self) { try fresh.existingObject(with: badgeID) }
    }

    @Test func deletingAnUnsavedObjectJustForgetsIt() throws {
        let sales = graph.insert("Department", ["name": "Sales"])
        let ada = graph.insert("Employee", ["name": "Ada"])
        ada.setRelatedObject(sales, forKey: "department")
        graph.context.delete(ada)
        #expect(
            ada.isDeleted && !graph.context.insertedObjects.contains(ada) && !graph.context.deletedObjects.contains(ada)
        )
        #expect(sales.relatedObjects(forKey: "employees").isEmpty)
        try graph.context.save()
        #expect(try graph.storedCount("Employee") == 0)
        #expect(try graph.storedCount("Department") == 1)
    }

    @Test func aReferenceToAnObjectDeletedBeforeItWasSavedFailsValidation() throws {
        let ada = graph.insert("Employee", ["name": "Ada"])
        let badge = graph.insert("Badge", ["code": "B-1"])
        ada.setRelatedObject(badge, forKey: "badge")
        graph.context.delete(badge)
        let error = try #require(throws: ValidationError.self) { try graph.context.save() }
        #expect(error.failures.map(\.rule) == [.danglingReference])
        #expect(error.failures[0].key == "badge")
    }
}
