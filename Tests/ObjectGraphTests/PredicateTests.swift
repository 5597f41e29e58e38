import Foundation
import ObjectGraph
import TestSupport
import Testing

@Suite struct PredicateTests {
    private func run(
        _ testCase: PredicateCase, in context: ManagedObjectContext, people: [String: ManagedObject]
    ) throws -> [String] {
        try context.fetch(testCase.request(people: people)).map(\.label).sorted()
    }

    @Test(arguments: predicateCases)
    func unsavedObjectsAreFilteredInMemory(_ testCase: PredicateCase) throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let people = insertPeople(graph)
        #expect(try run(testCase, in: graph.context, people: people) == testCase.expected)
    }

    @Test(arguments: predicateCases)
    func savedObjectsAreFilteredByTheStore(_ testCase: PredicateCase) throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let people = insertPeople(graph)
        try graph.context.save()
        #expect(try run(testCase, in: graph.makeContext(), people: people) == testCase.expected)
    }

    @Test func selfComparesByObjectID() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let people = insertPeople(graph)
        let predicate = try FetchPredicate(format: "SELF == %@ OR SELF IN %@", people["Ada"]!, [people["Bob"]!])
        #expect(
            try graph.context.fetch(FetchRequest(entityName: "Employee", predicate: predicate)).map(\.label).sorted()
                == ["Ada", "Bob"])
    }

    @Test func aggregatesSumAverageMinAndMax() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        insertPeople(graph)
        func names(_ format: String) throws -> [String] {
            try graph.context.fetch(
                FetchRequest(entityName: "Department", predicate: try FetchPredicate(format: format))
            ).map(\.label).sorted()
        }
        #expect(try names("employees.@sum.age == 81") == ["Sales"])
        #expect(try names("employees.@avg.age == 19") == ["Ops"], "nulls do not count in an average")
        #expect(try names("employees.@max.salary == 3000") == ["Sales"])
        #expect(try names("employees.@min.name == 'Bob'") == ["Ops"])
    }

    @Test(arguments: [
        ("age >", 6, "expected a key path, a value, a $variable or %@, found the end of the predicate"),
        ("name == 'abc", 9, "the string starting here is not closed with '"),
        ("age ~ 3", 5, "unexpected character '~'"),
        ("(age > 3", 9, "expected ')' to close '(', found the end of the predicate"),
        ("age > 3 extra", 9, "unexpected 'extra' after a complete predicate"),
        ("name BEGINSWITH[x] 'a'", 17, "unknown comparison option 'x' (use c, d or cd)"),
        ("ANY 3 > 1", 5, "ANY must be followed by a key path"),
        ("age BETWEEN 3", 13, "BETWEEN needs two bounds: {low, high}"),
        ("age >[c] 3", 5, "options [c]/[d] apply to string comparisons, not >"),
        ("age == %@", 8, "%@ has no matching argument"),
        ("a.@nope > 1", 3, "unknown collection operator @nope"),
    ])
    func syntaxErrorsPointAtTheColumn(_ format: String, _ column: Int, _ message: String) {
        do {
            _ = try FetchPredicate(format: format)
            Issue.record("\(format) parsed")
        } catch let error as PredicateSyntaxError {
            #expect(error.column == column)
            #expect(error.message == message)
            #expect(error.description.contains("column \(column)"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func unknownKeysAndMissingVariablesFailTheFetchNotTheProgram() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let bad = try FetchPredicate(format: "department.nmae == 'x'")
        let error = try #require(throws: FetchRequestError.self) {
            try graph.context.fetch(FetchRequest(entityName: "Employee", predicate: bad))
        }
        #expect(
            error.message
                == "key path 'department.nmae' is not valid for entity Employee: Department has no property nmae")
        let unbound = try FetchPredicate(format: "name == $who")
        #expect(unbound.variableNames == ["who"])
        #expect(throws: FetchRequestError.self) {
            try graph.context.fetch(FetchRequest(entityName: "Employee", predicate: unbound))
        }
        #expect(throws: PredicateSyntaxError.self) { try unbound.substituting([:]) }
        #expect(throws: PredicateSyntaxError.self) { try FetchPredicate(format: "age > 1", 5) }
    }

    @Test func parsedPredicatePrintsBackInFormatSyntax() throws {
        let predicate = try FetchPredicate(format: "ANY projects.title BEGINSWITH[cd] 'a' AND NOT age == nil")
        #expect(predicate.description == "(ANY projects.title BEGINSWITH[cd] 'a' AND NOT age == NULL)")
    }
}
