import Drivers
import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// Issue 33, point 1: a calendar date is a day without a time, stored as `YYYY-MM-DD` in a `DATE`
/// column of the plain layout; predicates compare it in SQL as the object graph does in memory,
/// against days and against timestamps; a value with a time of day is refused.
@Suite struct CalendarDateTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Person",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "born", type: .calendarDate),
                ])
        ])
    }

    static func day(_ text: String) -> Date { DateText.parseISO8601(text)! }

    static let people = [
        ("Ada", "1948-04-28"), ("Bob", "1951-02-02"), ("Cy", "1951-02-03"), ("Dee", "0999-12-31"), ("Eve", nil),
    ]

    static let predicates: [(String, Date)] = [
        ("born == %@", day("1948-04-28")), ("born != %@", day("1948-04-28")), ("born < %@", day("1951-02-02")),
        ("born <= %@", day("1951-02-02")), ("born > %@", day("1951-02-02")),
        // Against a timestamp: midnight is before any later time of its day.
        ("born < %@", day("1951-02-02T10:00:00Z")), ("born > %@", day("1951-02-02T10:00:00Z")),
        ("born == %@", day("1951-02-02T10:00:00Z")), ("born >= %@", day("1951-02-02T00:00:00Z")),
    ]

    @Test(arguments: ["plain", "graph"])
    func sqlComparesDaysAsMemoryDoes(layout: String) throws {
        let file = try SQLiteFile(model: try Self.model(), options: ["layout": layout])
        let memory = try TestGraph(model: file.model)
        for graph in [file.graph, memory] {
            for (name, born) in Self.people {
                graph.insert("Person", ["name": .string(name), "born": born.map { .date(Self.day($0)) } ?? .null])
            }
        }
        try file.context.save()
        try memory.context.save()
        for (format, date) in Self.predicates {
            var request = FetchRequest(entityName: "Person", predicate: try FetchPredicate(format: format, date))
            request.sortDescriptors = [FetchSortDescriptor("born"), FetchSortDescriptor("name")]
            let bySQL = try file.graph.makeContext().fetch(request).map { $0.string(forKey: "name")! }
            let inMemory = try memory.makeContext().fetch(request).map { $0.string(forKey: "name")! }
            #expect(bySQL == inMemory, "\(format) with \(date)")
            #expect(!inMemory.isEmpty || format.contains("=="), "\(format) finds someone")
        }
        if layout == "plain" {
            #expect(
                try file.query("SELECT name FROM Person WHERE born = '1948-04-28'") == [[.text("Ada")]],
                "the source's own SQL finds the day")
            #expect(
                try file.query("SELECT count(*) FROM Person WHERE born BETWEEN '1951-01-01' AND '1951-02-02'")
                    == [[.integer(1)]])
        }
    }

    @Test func aValueWithATimeOfDayIsRefused() throws {
        let file = try SQLiteFile(model: try Self.model())
        file.graph.insert("Person", ["name": "Zed", "born": .date(Self.day("2024-01-31T12:00:00Z"))])
        #expect {
            try file.context.save()
        } throws: { error in
            "\(error)".contains("born is a calendar date and") && "\(error)".contains("has a time of day")
        }
    }

    @Test func scaleRefusesMoreDigitsAndPrintsItsOwn() throws {
        let price = AttributeDescription(name: "price", type: .decimal, scale: 2)
        var broken: [String] = []
        price.checkRules(of: .decimal(Decimal(string: "1.234")!)) { broken.append($1) }
        #expect(broken == ["price: 1.234 has more than 2 digits after the point (scale 2)"])
        broken = []
        price.checkRules(of: .decimal(Decimal(string: "2684.1")!)) { broken.append($1) }
        #expect(broken.isEmpty)
        #expect(DecimalText.text(Decimal(string: "2684")!, scale: 2) == "2684.00")
        #expect(DecimalText.text(Decimal(string: "-0.5")!, scale: 2) == "-0.50")
        #expect(DecimalText.text(Decimal(string: "1.234")!, scale: 2) == "1.234", "never rounded")
        #expect(DecimalText.text(Decimal(string: "7")!, scale: nil) == "7")
    }
}
