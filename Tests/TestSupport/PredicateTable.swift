import Foundation
import ObjectGraph
import Testing

/// One predicate, its arguments, and the names it must select from the `people` data set.
public struct PredicateCase: CustomTestStringConvertible, Sendable {
    public let format: String
    public let arguments: [PredicateArgument]
    public let variables: [String: PredicateArgument]
    public let expected: [String]
    public let entity: String

    public init(
        _ format: String, args arguments: [PredicateArgument] = [], variables: [String: PredicateArgument] = [:],
        entity: String = "Employee", _ expected: [String]
    ) {
        self.format = format
        self.arguments = arguments
        self.variables = variables
        self.expected = expected.sorted()
        self.entity = entity
    }

    public var testDescription: String { format }

    /// The fetch request of this case; `people` supplies object arguments (`department == %@` gets Sales).
    public func request(people: [String: ManagedObject]) throws -> FetchRequest {
        var arguments = self.arguments
        if format.contains("%@"), arguments.isEmpty { arguments = [.objectID(people["Sales"]!.objectID)] }
        var predicate = try FetchPredicate(format: format, argumentArray: arguments)
        if !variables.isEmpty { predicate = try predicate.substituting(variables) }
        return FetchRequest(entityName: entity, predicate: predicate)
    }
}

/// Builds the data set: five employees, one plain person, two departments, two projects.
/// Objects whose IDs a case needs as arguments are found by name afterwards.
@discardableResult
public func insertPeople(_ graph: TestGraph) -> [String: ManagedObject] {
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
        let e = graph.insert(
            "Employee",
            [
                "name": .string(name), "age": age.map { .integer($0) } ?? .null,
                "salary": salary.map { .decimal($0) } ?? .null,
            ])
        e.setRelatedObject(department, forKey: "department")
        for project in projects { e.addRelatedObject(project, forKey: "projects") }
        byName[name] = e
    }
    byName["Pat"] = graph.insert("Person", ["name": "Pat", "age": 60])
    // Unicode traps: a decomposed é, and the Kelvin sign (canonically equivalent to K).
    byName["Amelie"] = graph.insert("Person", ["name": "Ame\u{301}lie"])
    byName["Kelvin"] = graph.insert("Person", ["name": "\u{212A}elvin"])
    return byName
}

public let predicateCases: [PredicateCase] = [
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
    PredicateCase("department == %@", ["Ada", "élodie"]),  // argument filled in by the test
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
    PredicateCase(
        "age >= $min AND age <= $max", variables: ["min": .value(.integer(20)), "max": .value(.integer(40))],
        ["Ada", "Çelik"]),
    PredicateCase("%K == %@", args: [.value(.string("age")), .value(.integer(19))], ["Zoë"]),
    PredicateCase("age > 50", entity: "Person", ["Pat"]),
    PredicateCase("age >= 36", entity: "Person", ["Ada", "élodie", "Pat"]),
    PredicateCase("name BEGINSWITH 'P' OR name BEGINSWITH 'B'", entity: "Person", ["Bob", "Pat"]),
    // Strings compare literally (by code point) without options, folded and composed with [c]/[d].
    PredicateCase("name == 'Am\u{E9}lie'", entity: "Person", []),
    PredicateCase("name ==[d] 'Amelie'", entity: "Person", ["Ame\u{301}lie"]),
    PredicateCase("name ==[cd] 'AM\u{C9}LIE'", entity: "Person", ["Ame\u{301}lie"]),
    PredicateCase("name LIKE[cd] 'amelie'", entity: "Person", ["Ame\u{301}lie"]),
    PredicateCase("name MATCHES 'Am.*'", entity: "Person", ["Ame\u{301}lie"]),
    PredicateCase("name BEGINSWITH 'K'", entity: "Person", []),
    PredicateCase("name BEGINSWITH[c] 'k'", entity: "Person", ["\u{212A}elvin"]),
    PredicateCase("name < 'B'", entity: "Person", ["Ada", "Ame\u{301}lie"]),
    PredicateCase("name > 'Z'", entity: "Person", ["Zo\u{EB}", "\u{C7}elik", "\u{E9}lodie", "\u{212A}elvin"]),
    PredicateCase("name IN[cd] {'amelie', 'ZOE'}", entity: "Person", ["Ame\u{301}lie", "Zo\u{EB}"]),
    // NULL under NOT: a comparison with a null side is false, so its negation holds.
    PredicateCase(
        "NOT (age > 30)", entity: "Person", ["Bob", "\u{C7}elik", "Zo\u{EB}", "Ame\u{301}lie", "\u{212A}elvin"]),
    PredicateCase("NOT (age != 36)", entity: "Person", ["Ada"]),
    PredicateCase(
        "NOT (name BEGINSWITH 'A')", entity: "Person",
        ["Bob", "\u{C7}elik", "\u{E9}lodie", "Zo\u{EB}", "Pat", "\u{212A}elvin"]),
    PredicateCase("age != nil AND NOT (age < 30)", entity: "Person", ["Ada", "\u{E9}lodie", "Pat"]),
    PredicateCase("NOT (department.name == 'Sales')", ["Bob", "\u{C7}elik", "Zo\u{EB}"]),
    PredicateCase("NOT (ANY projects.title == 'Gemini')", ["\u{C7}elik", "\u{E9}lodie", "Zo\u{EB}"]),
    PredicateCase("NOT (salary > 1000)", ["Bob", "\u{C7}elik", "Zo\u{EB}"]),
    PredicateCase("NOT (name LIKE[c] '*E*')", ["Ada", "Bob", "Zo\u{EB}"]),
    PredicateCase("department.budget == nil", ["Ada", "Bob", "\u{C7}elik", "\u{E9}lodie", "Zo\u{EB}"]),
    // Decimals compare numerically, with numbers of every kind.
    PredicateCase("salary == 1200.5", ["Ada"]),
    PredicateCase("salary == 900", ["Bob"]),
    PredicateCase("salary < 1000", ["Bob"]),
    PredicateCase("salary IN {900, 3000}", ["Bob", "\u{E9}lodie"]),
    PredicateCase("salary BETWEEN {900, 1200.5}", ["Ada", "Bob"]),
    // Aggregates and nested to-many paths.
    PredicateCase("projects.@count == 2", ["Ada"]),
    PredicateCase("department.employees.@max.age > 40", ["Ada", "\u{E9}lodie"]),
    PredicateCase("projects.members.@count >= 3", ["Ada"]),
    PredicateCase("ALL projects.members.age > 20", ["\u{C7}elik", "\u{E9}lodie", "Zo\u{EB}"]),
]
