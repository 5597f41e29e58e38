import Foundation
import ObjectGraph
import TestSupport
import Testing

/// Uniqueness constraints on the in-memory store, whose key lookups use hash indexes it keeps itself.
@Suite struct InMemoryConstraintTests {
    @Test func reImportsUpdateTheStoredObjectsUnderObjectTrumps() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        graph.context.mergePolicy = .objectTrumps
        for round in 0..<3 {
            for n in 0..<50 {
                graph.insert("Department", ["name": .string("D\(n)"), "budget": .decimal(Decimal(round))])
            }
            try graph.context.save()
            graph.context.reset()
        }
        let stored = try graph.makeContext().fetch(FetchRequest(entityName: "Department"))
        #expect(stored.count == 50 && stored.allSatisfy { $0.decimal(forKey: "budget") == 2 })
    }

    @Test func indexesFollowRenamesAndDeletes() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let sales = graph.insert("Department", ["name": "Sales"])
        try graph.context.save()
        graph.insert("Department", ["name": "Research"])
        try graph.context.save()  // the first lookup builds the index
        sales["name"] = "Marketing"
        try graph.context.save()
        graph.insert("Department", ["name": "Sales"])
        try graph.context.save()  // "Sales" is free again
        graph.insert("Department", ["name": "Marketing"])
        #expect { try graph.context.save() } throws: {
            ($0 as? MergeError)?.constraintConflicts.first?.existingObjectID == sales.objectID
        }
        graph.context.rollback()
        graph.context.delete(sales)
        try graph.context.save()
        graph.insert("Department", ["name": "Marketing"])
        try graph.context.save()  // deleted rows leave the index
        #expect(try graph.storedCount("Department") == 3)
    }
}
