import Foundation
import ObjectGraph
import TestSupport
import Testing

@Suite struct FetchTests {
    let graph: TestGraph
    init() throws {
        graph = try TestGraph(model: try CompanyModel.make())
        insertPeople(graph)
        try graph.context.save()
    }

    @Test func sortLimitAndOffset() throws {
        var request = FetchRequest(
            entityName: "Employee", sortDescriptors: [FetchSortDescriptor("age", ascending: false)])
        #expect(
            try graph.context.fetch(request).map(\.label) == ["élodie", "Ada", "Çelik", "Zoë", "Bob"],
            "nulls sort first ascending, last descending")
        request.fetchOffset = 1
        request.fetchLimit = 2
        #expect(try graph.context.fetch(request).map(\.label) == ["Ada", "Çelik"])
        let byDepartment = FetchRequest(
            entityName: "Employee",
            sortDescriptors: [
                FetchSortDescriptor("department.name"), FetchSortDescriptor("name", caseInsensitive: true),
            ])
        #expect(try graph.makeContext().fetch(byDepartment).map(\.label) == ["Çelik", "Bob", "Zoë", "Ada", "élodie"])
    }

    @Test func resultTypes() throws {
        var request = FetchRequest(
            entityName: "Employee", predicate: try FetchPredicate(format: "department.name == 'Sales'"),
            sortDescriptors: [FetchSortDescriptor("name")])
        request.resultType = .count
        guard case .count(let count) = try graph.context.execute(request) else {
            Issue.record("not a count")
            return
        }
        #expect(count == 2)
        request.resultType = .objectIDs
        guard case .objectIDs(let ids) = try graph.context.execute(request) else {
            Issue.record("not IDs")
            return
        }
        #expect(ids.count == 2 && ids.allSatisfy { !$0.isTemporaryID })
        request.resultType = .dictionaries
        request.propertiesToFetch = ["name", "age", "department"]
        guard case .dictionaries(let rows) = try graph.context.execute(request) else {
            Issue.record("not dictionaries")
            return
        }
        #expect(rows.map { $0["name"] } == [.attribute(.string("Ada")), .attribute(.string("élodie"))])
        #expect(rows[0]["age"] == .attribute(.integer(36)))
        if case .objectID(let id) = rows[0]["department"] {
            #expect(id?.entityName == "Department")
        } else {
            Issue.record("no department")
        }
        request.propertiesToFetch = ["projects"]
        #expect(throws: FetchRequestError.self) { try graph.context.fetchDictionaries(request) }
    }

    @Test func pendingChangesAreIncluded() throws {
        let context = graph.context
        let over30 = FetchRequest(
            entityName: "Employee", predicate: try FetchPredicate(format: "age > 30"),
            sortDescriptors: [FetchSortDescriptor("name")])
        #expect(try context.fetch(over30).map(\.label) == ["Ada", "élodie"])
        let newcomer = graph.insert("Employee", ["name": "Moe", "age": 50])
        let ada = try #require(try context.fetch(over30).first)
        ada["age"] = 20
        let zoe = try #require(
            try context.fetch(
                FetchRequest(entityName: "Employee", predicate: try FetchPredicate(format: "name == 'Zoë'"))
            ).first)
        zoe["age"] = 31
        let elodie = try #require(
            try context.fetch(
                FetchRequest(entityName: "Employee", predicate: try FetchPredicate(format: "name == 'élodie'"))
            ).first)
        context.delete(elodie)
        #expect(try context.fetch(over30).map(\.label) == ["Moe", "Zoë"])
        #expect(try context.count(for: over30) == 2)
        var storeOnly = over30
        storeOnly.includesPendingChanges = false
        #expect(
            try context.fetch(storeOnly).map(\.label) == ["Ada", "élodie"],
            "without pending changes the store's rows decide: Ada (changed here) and élodie (deleted here) match"
        )
        _ = newcomer
    }

    @Test func subentitiesCanBeExcluded() throws {
        var request = FetchRequest(entityName: "Person")
        #expect(try graph.context.count(for: request) == 8)
        request.includesSubentities = false
        #expect(Set(try graph.context.fetch(request).map(\.label)) == ["Ame\u{301}lie", "Pat", "\u{212A}elvin"])
    }

    @Test func unknownEntityAndSortThroughToManyAreErrors() throws {
        #expect(throws: FetchRequestError.self) { try graph.context.fetch(FetchRequest(entityName: "Nope")) }
        let request = FetchRequest(entityName: "Department", sortDescriptors: [FetchSortDescriptor("employees.name")])
        #expect(throws: FetchRequestError.self) { try graph.context.fetch(request) }
    }
}
