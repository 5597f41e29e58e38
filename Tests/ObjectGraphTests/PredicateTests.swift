import Foundation
import ObjectGraph
import Testing
import TestSupport

/// One predicate, its arguments, and the names it must select from the `people` data set.
struct PredicateCase: CustomTestStringConvertible, Sendable {
    let format: String
    let arguments: [PredicateArgument]
    let variables: [String: PredicateArgument]
    let expected: [String]
    let entity: String

    init(_ format: String, args arguments: [PredicateArgument] = [], variables: [String: PredicateArgument] = [:], entity: String = "Employee", _ expected: [String]) {
        self.format = format
        self.arguments = arguments
        self.variables = variables
        self.expected = expected.sorted()
        self.entity = entity
    }

    var testDescription: String { format }
}

/// Builds the data set: five employees, one plain person, two departments, two projects.
/// Objects whose IDs a case needs as arguments are found by name afterwards.
@discardableResult
func insertPeople(_ graph: TestGraph) -> [String: ManagedObject] {
    var byName: [String: ManagedObject] = [:]
    let sales = graph.insert("Department", ["name": "Sales"]), ops = graph.insert("Department", ["name": "Ops"])
    let apollo = graph.insert("Project", ["title": "Apollo"]), gemini = graph.insert("Project", ["title": "Gemini"])
    byName["Sales"] = sales
    let people: [(String, Int64?, Decimal?, ManagedObject?, [ManagedObject])] = [
        ("Ada", 36, Decimal(string: "1200.50"), sales, [apollo, gemini]),
        ("Bob", nil, 900, ops, [gemini]),
        ("Çelik", 28, nil, nil, []),
        ("élodie", 45, 3000, sales, [apollo]),
        ("Zoë", 19, nil, ops, []),
    ]
    for (name, age, salary, department, projects) in people {
        let e = graph.insert("Employee", ["name": .string(name), "age": age.map { .integer($0) } ?? .null, "salary": salary.map { .decimal($0) } ?? .null])
        e.setRelatedObject(department, forKey: "department")
        for project in projects { e.addRelatedObject(project, forKey: "projects") }
        byName[name] = e
    }
    byName["Pat"] = graph.insert("Person", ["name": "Pat", "age": 60])
    return byName
}

let predicateCases: [PredicateCase] = [
    PredicateCase("age > 30", ["Ada", "élodie"]),
    PredicateCase("age == nil", ["Bob"]),
    PredicateCase("age != 36", ["Bob", "Çelik", "élodie", "Zoë"]),
    PredicateCase("age < 30", ["Çelik", "Zoë"]),
    PredicateCase("age =< 28 || age => 45", ["Çelik", "élodie", "Zoë"]),
    PredicateCase("age BETWEEN {19, 36}", ["Ada", "Çelik", "Zoë"]),
    PredicateCase("name IN {'Ada', 'Bob', 'nobody'}", ["Ada", "Bob"]),
    PredicateCase("name IN[c] {'ADA'}", ["Ada"]),
    PredicateCase("age IN %@", args: [.list([.value(.integer(19)), .value(.integer(28))])], ["Çelik", "Zoë"]),
    PredicateCase("name BEGINSWITH 'A'", ["Ada"]),
    PredicateCase("name BEGINSWITH[c] 'É'", ["élodie"]),
    PredicateCase("name BEGINSWITH[cd] 'E'", ["élodie"]),
    PredicateCase("name BEGINSWITH[d] 'C'", ["Çelik"]),
    PredicateCase("name CONTAINS[c] 'O'", ["Bob", "élodie", "Zoë"]),
    PredicateCase("name ==[cd] 'zoe'", ["Zoë"]),
    PredicateCase("name == 'zoe'", []),
    PredicateCase("name ENDSWITH 'k'", ["Çelik"]),
    PredicateCase("name LIKE 'A?a'", ["Ada"]),
    PredicateCase("name LIKE[c] '*E*'", ["Çelik", "élodie"]),
    PredicateCase("name LIKE[cd] '*E*'", ["Çelik", "élodie", "Zoë"]),
    PredicateCase("name MATCHES '[A-Z][a-z]+'", ["Ada", "Bob"]),
    PredicateCase("name MATCHES[c] 'z.*'", ["Zoë"]),
    PredicateCase("department.name == 'Sales'", ["Ada", "élodie"]),
    PredicateCase("department == nil", ["Çelik"]),
    PredicateCase("department == %@", ["Ada", "élodie"]),   // argument filled in by the test
    PredicateCase("ANY projects.title == 'Gemini'", ["Ada", "Bob"]),
    PredicateCase("ALL projects.title == 'Apollo'", ["Çelik", "élodie", "Zoë"]),
    PredicateCase("NONE projects.title == 'Apollo'", ["Bob", "Çelik", "Zoë"]),
    PredicateCase("SOME projects.members.name == 'Bob'", ["Ada", "Bob"]),
    PredicateCase("projects.@count >= 1", ["Ada", "Bob", "élodie"]),
    PredicateCase("projects.@count == 0", ["Çelik", "Zoë"]),
    PredicateCase("department.employees.@count > 1", ["Ada", "Bob", "élodie", "Zoë"]),
    PredicateCase("salary > 1000", ["Ada", "élodie"]),
    PredicateCase("salary >= 1200.5", ["Ada", "élodie"]),
    PredicateCase("salary == nil", ["Çelik", "Zoë"]),
    PredicateCase("NOT (age > 30) AND department != nil", ["Bob", "Zoë"]),
    PredicateCase("age > 40 OR name == \"Bob\"", ["Bob", "élodie"]),
    PredicateCase("!(name == 'Ada') && age > 30", ["élodie"]),
    PredicateCase("TRUEPREDICATE", ["Ada", "Bob", "Çelik", "élodie", "Zoë"]),
    PredicateCase("FALSEPREDICATE", []),
    PredicateCase("name == $who", variables: ["who": .value(.string("Bob"))], ["Bob"]),
    PredicateCase("age >= $min AND age <= $max", variables: ["min": .value(.integer(20)), "max": .value(.integer(40))], ["Ada", "Çelik"]),
    PredicateCase("%K == %@", args: [.value(.string("age")), .value(.integer(19))], ["Zoë"]),
    PredicateCase("age > 50", entity: "Person", ["Pat"]),
    PredicateCase("age >= 36", entity: "Person", ["Ada", "élodie", "Pat"]),
    PredicateCase("name BEGINSWITH 'P' OR name BEGINSWITH 'B'", entity: "Person", ["Bob", "Pat"]),
]

@Suite struct PredicateTests {
    private func run(_ testCase: PredicateCase, in context: ManagedObjectContext, people: [String: ManagedObject]) throws -> [String] {
        var arguments = testCase.arguments
        if testCase.format == "department == %@" { arguments = [.objectID(people["Sales"]!.objectID)] }
        var predicate = try FetchPredicate(format: testCase.format, argumentArray: arguments)
        if !testCase.variables.isEmpty { predicate = try predicate.substituting(testCase.variables) }
        let request = FetchRequest(entityName: testCase.entity, predicate: predicate)
        return try context.fetch(request).map(\.label).sorted()
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
        #expect(try graph.context.fetch(FetchRequest(entityName: "Employee", predicate: predicate)).map(\.label).sorted() == ["Ada", "Bob"])
    }

    @Test func aggregatesSumAverageMinAndMax() throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        insertPeople(graph)
        func names(_ format: String) throws -> [String] {
            try graph.context.fetch(FetchRequest(entityName: "Department", predicate: try FetchPredicate(format: format))).map(\.label).sorted()
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
        #expect(error.message == "key path 'department.nmae' is not valid for entity Employee: Department has no property nmae")
        let unbound = try FetchPredicate(format: "name == $who")
        #expect(unbound.variableNames == ["who"])
        #expect(throws: FetchRequestError.self) { try graph.context.fetch(FetchRequest(entityName: "Employee", predicate: unbound)) }
        #expect(throws: PredicateSyntaxError.self) { try unbound.substituting([:]) }
        #expect(throws: PredicateSyntaxError.self) { try FetchPredicate(format: "age > 1", 5) }
    }

    @Test func parsedPredicatePrintsBackInFormatSyntax() throws {
        let predicate = try FetchPredicate(format: "ANY projects.title BEGINSWITH[cd] 'a' AND NOT age == nil")
        #expect(predicate.description == "(ANY projects.title BEGINSWITH[cd] 'a' AND NOT age == NULL)")
    }
}
