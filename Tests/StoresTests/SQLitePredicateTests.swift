import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// The predicate table of the object graph, run against the SQLite store: SQL must give the answers
/// the in-memory evaluator gives, NULLs and Unicode folding included.
@Suite struct SQLitePredicateTests {
    @Test(arguments: predicateCases)
    func sqlAnswersLikeMemory(_ testCase: PredicateCase) throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let people = insertPeople(file.graph)
        try file.context.save()
        let request = try testCase.request(people: people)

        let memory = try TestGraph(model: file.model)
        let memoryPeople = insertPeople(memory)
        try memory.context.save()
        let inMemory = try memory.makeContext().fetch(try testCase.request(people: memoryPeople)).map(\.label).sorted()

        let context = file.graph.makeContext()
        let fetched = try context.fetch(request).map(\.label).sorted()
        #expect(fetched == testCase.expected)
        #expect(fetched == inMemory)
        #expect(try context.count(for: request) == testCase.expected.count)
        #expect(try context.fetchObjectIDs(request).count == testCase.expected.count)
    }

    @Test func unsavedChangesAreMergedIntoSQLResults() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let people = insertPeople(file.graph)
        try file.context.save()
        people["Ada"]!["age"] = 20
        file.graph.insert("Employee", ["name": "Yan", "age": 50])
        file.context.delete(people["élodie"]!)
        let request = FetchRequest(
            entityName: "Employee", predicate: try FetchPredicate(format: "age > 30"),
            sortDescriptors: [FetchSortDescriptor("name")])
        #expect(try file.context.fetch(request).map(\.label) == ["Yan"])
        #expect(try file.context.count(for: request) == 1)
    }

    static let sorts: [[FetchSortDescriptor]] = [
        [FetchSortDescriptor("name")],
        [FetchSortDescriptor("name", ascending: false)],
        [FetchSortDescriptor("name", caseInsensitive: true)],
        [FetchSortDescriptor("salary"), FetchSortDescriptor("name")],
        [FetchSortDescriptor("salary", ascending: false)],
        [FetchSortDescriptor("department.name"), FetchSortDescriptor("age", ascending: false)],
        [FetchSortDescriptor("age")],
    ]

    @Test(arguments: sorts)
    func sortingAndPagingMatchMemory(_ sorts: [FetchSortDescriptor]) throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        insertPeople(file.graph)
        file.graph.insert("Employee", ["name": "ada", "salary": .decimal(Decimal(string: "1200.5")!)])
        try file.context.save()
        let memory = try TestGraph(model: file.model)
        insertPeople(memory)
        memory.insert("Employee", ["name": "ada", "salary": .decimal(Decimal(string: "1200.5")!)])
        try memory.context.save()

        for (offset, limit) in [(0, 0), (1, 3), (4, 10), (10, 1)] {
            var request = FetchRequest(entityName: "Employee", sortDescriptors: sorts)
            request.fetchOffset = offset
            request.fetchLimit = limit
            let expected = try memory.makeContext().fetch(request).map(\.label)
            #expect(
                try file.graph.makeContext().fetch(request).map(\.label) == expected, "offset \(offset) limit \(limit)")
        }
    }
}
