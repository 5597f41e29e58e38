import Drivers
import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// Uniqueness constraints holding a to-one relationship: an order line is known by its order and its
/// number (`unique: [[order, no]]`), in the SQLite store (a unique index on the foreign-key column
/// and the number) and in the in-memory store.
@Suite struct RelationshipKeyTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Order", attributes: [AttributeDescription(name: "number", type: .integer64, isOptional: false)],
                relationships: [
                    RelationshipDescription(
                        name: "lines", destination: "Line", inverse: "order", isToMany: true, deleteRule: .cascade)
                ],
                uniquenessConstraints: [["number"]]),
            EntityDescription(
                name: "Line",
                attributes: [
                    AttributeDescription(name: "no", type: .integer32, isOptional: false),
                    AttributeDescription(name: "quantity", type: .integer32),
                ],
                relationships: [
                    RelationshipDescription(name: "order", destination: "Order", inverse: "lines", isOptional: false)
                ],
                uniquenessConstraints: [["order", "no"]]),
        ])
    }

    static let stores = ["sqlite", "memory"]

    static func graph(_ kind: String, in directory: TemporaryDirectory) throws -> TestGraph {
        SQLiteStore.register()
        return kind == "sqlite"
            ? try TestGraph(
                model: try model(), storeType: SQLiteStore.storeType,
                url: directory.url.appendingPathComponent("k.sqlite"))
            : try TestGraph(model: try model())
    }

    /// Order `number` with lines `1...count` of `quantity`, inserted into `context`.
    @discardableResult
    static func insertOrder(
        _ graph: TestGraph, _ number: Int64, lines: Int, quantity: Int64, into context: ManagedObjectContext
    ) -> ManagedObject {
        let order = graph.insert("Order", ["number": .integer(number)], into: context)
        for no in 1...lines {
            graph.insert("Line", ["no": .integer(Int64(no)), "quantity": .integer(quantity)], into: context)
                .setRelatedObject(order, forKey: "order")
        }
        return order
    }

    @Test(arguments: stores)
    func theSameLineTwiceInOneSaveIsAConflictNamingOrderAndNumber(_ kind: String) throws {
        let directory = try TemporaryDirectory()
        let graph = try Self.graph(kind, in: directory)
        let order = Self.insertOrder(graph, 7, lines: 1, quantity: 1, into: graph.context)
        graph.insert("Line", ["no": 1, "quantity": 2]).setRelatedObject(order, forKey: "order")
        #expect { try graph.context.save() } throws: { error in
            guard let error = error as? MergeError, let conflict = error.constraintConflicts.first else { return false }
            return conflict.keyNames == ["order", "no"] && conflict.otherObjectIDs.count == 1
        }
        // Another order's line 1 is no conflict.
        graph.context.rollback()
        Self.insertOrder(graph, 7, lines: 1, quantity: 1, into: graph.context)
        Self.insertOrder(graph, 8, lines: 1, quantity: 1, into: graph.context)
        try graph.context.save()
        #expect(try graph.storedCount("Line") == 2)
    }

    /// A re-import under object-trumps: the order meets its stored row by number, then its lines meet
    /// theirs by (stored order, number). Unchanged lines are not written; a changed one is updated; a
    /// new one is inserted.
    @Test(arguments: stores)
    func reImportingAnOrderWithItsLinesUpdatesInPlace(_ kind: String) throws {
        let directory = try TemporaryDirectory()
        let graph = try Self.graph(kind, in: directory)
        Self.insertOrder(graph, 7, lines: 2, quantity: 1, into: graph.context)
        try graph.context.save()

        let context = graph.makeContext()
        context.mergePolicy = .objectTrumps
        let saves = Saves()
        let observation = context.observeDidSave { saves.append($0) }
        defer { observation.cancel() }
        let order = Self.insertOrder(graph, 7, lines: 3, quantity: 1, into: context)
        let second = try #require(order.relatedObjects(forKey: "lines").first { $0["no"] == .integer(2) })
        second["quantity"] = .integer(5)
        try context.save()
        #expect(try graph.storedCount("Order") == 1)
        #expect(try graph.storedCount("Line") == 3)
        let save = try #require(saves.last)
        #expect(save.inserted.count == 1, "line 3 only")
        #expect(save.updated.count == 2, "line 2 (quantity) and the order (it gained line 3); line 1 is unchanged")

        var request = FetchRequest(entityName: "Line")
        request.sortDescriptors = [FetchSortDescriptor("no")]
        let lines = try graph.makeContext().fetch(request)
        #expect(lines.map { $0["quantity"] } == [.integer(1), .integer(5), .integer(1)])
        #expect(Set(lines.compactMap { $0.relatedObject(forKey: "order")?.objectID }).count == 1)
    }

    @Test func theSQLiteStoreKeepsOneUniqueIndexAndNoSeparateForeignKeyIndex() throws {
        let directory = try TemporaryDirectory()
        let graph = try Self.graph("sqlite", in: directory)
        Self.insertOrder(graph, 1, lines: 1, quantity: 1, into: graph.context)
        try graph.context.save()
        let connection = try SQLiteConnection(path: directory.url.appendingPathComponent("k.sqlite").path)
        let statement = try connection.makeStatement(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Line' ORDER BY name")
        var names: [String] = []
        while try statement.step() { names.append(statement.string(0) ?? "") }
        #expect(names == ["Line_unique_order_id_no"])
        // Each key one search of that index, never a scan of the table or of the index.
        let store = try #require(graph.store as? SQLiteStore)
        let line = try #require(graph.model.entity(named: "Line"))
        let plan = try store.keyLookupPlan(
            of: line, on: [line.relationship(named: "order")!, line.attribute(named: "no")!], keys: 500)
        #expect(plan.contains { $0.hasPrefix("SEARCH t0 USING") && $0.contains("Line_unique_order_id_no") }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN t0") }, "\(plan)")
    }

    final class Saves: @unchecked Sendable {
        private let lock = NSLock()
        private var saves: [ContextDidSave] = []
        var last: ContextDidSave? { lock.withLock { saves.last } }
        func append(_ save: ContextDidSave) { lock.withLock { saves.append(save) } }
    }
}
