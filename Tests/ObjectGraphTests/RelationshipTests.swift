import Foundation
import ObjectGraph
import TestSupport
import Testing

@Suite struct RelationshipTests {
    let graph: TestGraph
    init() throws { graph = try TestGraph(model: try CompanyModel.make()) }

    private func labels(_ objects: [ManagedObject]) -> [String] { objects.map(\.label).sorted() }

    @Test func settingToOneMovesTheObjectBetweenInverseToManys() {
        let sales = graph.insert("Department", ["name": "Sales"]), ops = graph.insert("Department", ["name": "Ops"])
        let ada = graph.insert("Employee", ["name": "Ada"])
        ada.setRelatedObject(sales, forKey: "department")
        #expect(labels(sales.relatedObjects(forKey: "employees")) == ["Ada"])
        ada.setRelatedObject(ops, forKey: "department")
        #expect(sales.relatedObjects(forKey: "employees").isEmpty)
        #expect(labels(ops.relatedObjects(forKey: "employees")) == ["Ada"])
        ada.setRelatedObject(nil, forKey: "department")
        #expect(ops.relatedObjects(forKey: "employees").isEmpty)
    }

    @Test func addingToToManySetsTheInverseToOneAndLeavesTheOldOwner() {
        let sales = graph.insert("Department", ["name": "Sales"]), ops = graph.insert("Department", ["name": "Ops"])
        let ada = graph.insert("Employee", ["name": "Ada"])
        sales.addRelatedObject(ada, forKey: "employees")
        #expect(ada.relatedObject(forKey: "department") === sales)
        ops.addRelatedObject(ada, forKey: "employees")
        #expect(ada.relatedObject(forKey: "department") === ops)
        #expect(sales.relatedObjects(forKey: "employees").isEmpty)
        ops.removeRelatedObject(ada, forKey: "employees")
        #expect(ada.relatedObject(forKey: "department") == nil)
    }

    @Test func manyToManyEditsUpdateBothSides() {
        let ada = graph.insert("Employee", ["name": "Ada"]), bob = graph.insert("Employee", ["name": "Bob"])
        let apollo = graph.insert("Project", ["title": "Apollo"]), gemini = graph.insert("Project", ["title": "Gemini"])
        ada.addRelatedObject(apollo, forKey: "projects")
        ada.addRelatedObject(gemini, forKey: "projects")
        gemini.addRelatedObject(bob, forKey: "members")
        #expect(labels(apollo.relatedObjects(forKey: "members")) == ["Ada"])
        #expect(labels(gemini.relatedObjects(forKey: "members")) == ["Ada", "Bob"])
        #expect(labels(bob.relatedObjects(forKey: "projects")) == ["Gemini"])
        gemini.setRelatedObjects([bob], forKey: "members")
        #expect(labels(ada.relatedObjects(forKey: "projects")) == ["Apollo"])
    }

    @Test func reflexiveOneToManyKeepsManagerAndReportsInStep() {
        let boss = graph.insert("Employee", ["name": "Boss"]), ada = graph.insert("Employee", ["name": "Ada"]),
            bob = graph.insert("Employee", ["name": "Bob"])
        ada.setRelatedObject(boss, forKey: "manager")
        boss.addRelatedObject(bob, forKey: "reports")
        #expect(labels(boss.relatedObjects(forKey: "reports")) == ["Ada", "Bob"])
        #expect(bob.relatedObject(forKey: "manager") === boss)
        bob.setRelatedObject(ada, forKey: "manager")
        #expect(labels(boss.relatedObjects(forKey: "reports")) == ["Ada"])
        #expect(labels(ada.relatedObjects(forKey: "reports")) == ["Bob"])
    }

    @Test func selfInverseToManyIsSymmetric() {
        let ada = graph.insert("Employee", ["name": "Ada"]), bob = graph.insert("Employee", ["name": "Bob"]),
            cy = graph.insert("Employee", ["name": "Cy"])
        ada.addRelatedObject(bob, forKey: "cousins")
        cy.addRelatedObject(ada, forKey: "cousins")
        #expect(labels(ada.relatedObjects(forKey: "cousins")) == ["Bob", "Cy"])
        #expect(labels(bob.relatedObjects(forKey: "cousins")) == ["Ada"])
        bob.removeRelatedObject(ada, forKey: "cousins")
        #expect(labels(ada.relatedObjects(forKey: "cousins")) == ["Cy"])
    }

    @Test func selfInverseToOneRepairsBothOldPartners() {
        let ada = graph.insert("Employee", ["name": "Ada"]), bob = graph.insert("Employee", ["name": "Bob"])
        let cy = graph.insert("Employee", ["name": "Cy"]), di = graph.insert("Employee", ["name": "Di"])
        ada.setRelatedObject(bob, forKey: "spouse")
        cy.setRelatedObject(di, forKey: "spouse")
        #expect(bob.relatedObject(forKey: "spouse") === ada)
        ada.setRelatedObject(di, forKey: "spouse")
        #expect(ada.relatedObject(forKey: "spouse") === di && di.relatedObject(forKey: "spouse") === ada)
        #expect(bob.relatedObject(forKey: "spouse") == nil, "Ada's old spouse is released")
        #expect(cy.relatedObject(forKey: "spouse") == nil, "Di's old spouse is released")
    }

    @Test func orderedToManyKeepsOrderThroughSave() throws {
        let list = graph.insert("Playlist", ["title": "Mix"])
        let tracks = ["c", "a", "b"].map { graph.insert("Track", ["title": .string($0)]) }
        list.setRelatedObjects(tracks, forKey: "tracks")
        #expect(list.relatedObjects(forKey: "tracks").map(\.label) == ["c", "a", "b"])
        list.setRelatedObjects([tracks[1], tracks[2], tracks[0]], forKey: "tracks")
        #expect(list.relatedObjects(forKey: "tracks").map(\.label) == ["a", "b", "c"])
        try graph.context.save()
        let reader = graph.makeContext()
        let fresh = try reader.existingObject(with: list.objectID)
        #expect(fresh.relatedObjects(forKey: "tracks").map(\.label) == ["a", "b", "c"])
    }

    @Test func relationshipsOfEveryKindSurviveSaveAndReload() throws {
        let sales = graph.insert("Department", ["name": "Sales"])
        let ada = graph.insert("Employee", ["name": "Ada"]), bob = graph.insert("Employee", ["name": "Bob"])
        let apollo = graph.insert("Project", ["title": "Apollo"])
        ada.setRelatedObject(sales, forKey: "department")
        bob.setRelatedObject(ada, forKey: "manager")
        ada.addRelatedObject(apollo, forKey: "projects")
        bob.addRelatedObject(apollo, forKey: "projects")
        ada.addRelatedObject(bob, forKey: "cousins")
        ada.setRelatedObject(bob, forKey: "spouse")
        try graph.context.save()

        let other = graph.makeContext()
        let a = try other.existingObject(with: ada.objectID)
        #expect(a.relatedObject(forKey: "department")?.label == "Sales")
        #expect(labels(a.relatedObjects(forKey: "reports")) == ["Bob"])
        #expect(
            labels(try other.existingObject(with: apollo.objectID).relatedObjects(forKey: "members")) == ["Ada", "Bob"])
        #expect(labels(try other.existingObject(with: bob.objectID).relatedObjects(forKey: "cousins")) == ["Ada"])
        #expect(a.relatedObject(forKey: "spouse")?.label == "Bob")

        // Edits to saved objects reach the store as well.
        ada.removeRelatedObject(apollo, forKey: "projects")
        bob.setRelatedObject(nil, forKey: "manager")
        try graph.context.save()
        let third = graph.makeContext()
        #expect(labels(try third.existingObject(with: apollo.objectID).relatedObjects(forKey: "members")) == ["Bob"])
        #expect(try third.existingObject(with: ada.objectID).relatedObjects(forKey: "reports").isEmpty)
    }

    @Test func addingToAFaultedToManyDoesNotLoseStoredMembers() throws {
        let sales = graph.insert("Department", ["name": "Sales"])
        for name in ["A", "B"] {
            graph.insert("Employee", ["name": .string(name)]).setRelatedObject(sales, forKey: "department")
        }
        try graph.context.save()
        let other = graph.makeContext()
        let dept = try other.existingObject(with: sales.objectID)
        #expect(dept.hasFault(forRelationshipNamed: "employees"))
        let c = graph.insert("Employee", ["name": "C"], into: other)
        c.setRelatedObject(dept, forKey: "department")
        #expect(dept.hasFault(forRelationshipNamed: "employees"), "linking does not load the whole collection")
        #expect(labels(dept.relatedObjects(forKey: "employees")) == ["A", "B", "C"])
        try other.save()
        let reader = graph.makeContext()
        #expect(
            labels(try reader.existingObject(with: sales.objectID).relatedObjects(forKey: "employees")) == [
                "A", "B", "C",
            ])
    }

    @Test func linkingChildrenToAFaultedParentNeitherLoadsNorRewritesIt() throws {
        let sales = graph.insert("Department", ["name": "Sales"])
        try graph.context.save()
        let other = graph.makeContext()
        let dept = other.object(with: sales.objectID)
        #expect(dept.isFault)
        let child = graph.insert("Employee", ["name": "A"], into: other)
        child.setRelatedObject(dept, forKey: "department")
        #expect(dept.isFault, "the parent's values were not needed")
        #expect(dept.isUpdated && other.updatedObjects.contains(dept))
        let staleContext = graph.makeContext()
        let stale = try staleContext.existingObject(with: sales.objectID)
        try other.save()
        #expect(dept.isFault)
        // The parent's row was not rewritten, so a context that read it before the save can still save it.
        let reader = graph.makeContext()
        #expect(labels(try reader.existingObject(with: sales.objectID).relatedObjects(forKey: "employees")) == ["A"])
        stale["budget"] = .decimal(5)
        try staleContext.save()

        // Rollback drops edits made while a fault.
        let third = graph.makeContext()
        let faulted = third.object(with: sales.objectID)
        graph.insert("Employee", ["name": "B"], into: third).setRelatedObject(faulted, forKey: "department")
        third.rollback()
        #expect(labels(faulted.relatedObjects(forKey: "employees")) == ["A"])
    }
}
