import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// `storedEqual` in SQL (how a re-run tells its unchanged records) answers as reading the rows and
/// comparing values does, for every attribute type and both layouts: the very values are held, a
/// value equal by the model's rules (`1.50` and `1.5`) is held, any other value of any attribute
/// (null included) is not, and neither is a key nothing holds.
@Suite struct StoredEqualTests {
    /// The SQLite store in both layouts, and PostgreSQL.
    @Test(arguments: ["plain", "graph", "postgres"])
    func sqlAnswersAsComparingRowsDoes(layout: String) throws {
        let model = try SQLiteStoreTests.everyTypeModel()
        let samples = layout == "postgres" ? PostgresStoreTests.samples : SQLiteStoreTests.samples
        let file = layout == "postgres" ? nil : try SQLiteFile(model: model, options: ["layout": layout])
        let database = layout == "postgres" ? try PostgresSchema(model: model) : nil
        let written = file?.graph ?? database!.graph
        for (tag, values) in samples {
            let object = written.insert("Sample", ["tag": .string(tag)])
            for (key, value) in values { object[key] = value }
        }
        try written.context.save()
        let graph = try file?.reopen() ?? database!.reopen()
        let entity = graph.model.entity(named: "Sample")!
        let properties: [PropertyDescription] = entity.attributes
        // Other values of each attribute: none of them is a sample's.
        let others: [AttributeValue] = [
            .integer(7), .integer(8), .decimal(Decimal(string: "2.25")!), .decimal(3), .double(0.5), .double(-1),
            .float(0.25), .float(2), .string("other"), .string("more"), .boolean(true), .boolean(false),
            .date(Date(timeIntervalSinceReferenceDate: 86_400.5)), .date(Date(timeIntervalSinceReferenceDate: 0)),
            .date(Date(timeIntervalSince1970: 86_400)),
            .binary(Data([9])), .binary(Data([8])), .uuid(UUID(uuidString: "11111111-2222-3333-4444-555555555555")!),
            .uuid(UUID()), .uri(URL(string: "https://other")!), .uri(URL(string: "https://more")!),
        ]
        var states: [[AttributeValue]] = [], expected: [Bool] = []
        for (tag, values) in samples {
            let state = entity.attributes.map { $0.name == "tag" ? .string(tag) : values[$0.name] ?? .null }
            states.append(state)
            expected.append(true)
            for attribute in entity.attributes where attribute.name != "tag" {
                let other = others.first { $0.sameKind(as: attribute.type) && $0 != state[attribute.index] }!
                var changed = state
                changed[attribute.index] = other
                states.append(changed)
                expected.append(false)
                changed[attribute.index] = .null
                states.append(changed)
                expected.append(state[attribute.index] == .null)
            }
        }
        var odd = states[0]
        odd[0] = .string("odd")
        for (index, attribute) in entity.attributes.enumerated() where attribute.name != "tag" {
            odd[index] = samples["odd"]![attribute.name] ?? .null
        }
        odd[entity.attribute(named: "dec")!.index] = .decimal(Decimal(string: "1.5")!)
        states.append(odd)
        expected.append(true)
        var unknown = states[0]
        unknown[0] = .string("nobody")
        states.append(unknown)
        expected.append(false)

        let flat = states.flatMap { $0 }
        let bySQL = try graph.coordinator.storedEqual(entity, values: flat, properties: properties, keyCount: 1)
        let byRows = try graph.store.storedEqualByRows(entity, values: flat, properties: properties, keyCount: 1)
        // NaN: the model's `==` never finds it equal to itself, so comparing rows says "not held";
        // the store holds the very same NaN, and SQL says held — as `expected` does.
        func hasNaN(_ state: [AttributeValue]) -> Bool {
            state.contains {
                if case .double(let value) = $0 { return value.isNaN }
                if case .float(let value) = $0 { return value.isNaN }
                return false
            }
        }
        for (index, state) in states.enumerated() where !hasNaN(state) {
            #expect(byRows[index] == expected[index], "comparing rows says \(byRows[index]) for \(state)")
        }
        for (index, state) in states.enumerated() where bySQL[index] != expected[index] {
            Issue.record("SQL says \(bySQL[index]) for \(state)")
        }
    }
}

extension AttributeValue {
    /// Whether the value is of the kind an attribute of `type` holds.
    fileprivate func sameKind(as type: AttributeType) -> Bool {
        switch (self, type) {
        case (.integer, .integer16), (.integer, .integer32), (.integer, .integer64), (.decimal, .decimal),
            (.double, .double), (.float, .float), (.string, .string), (.boolean, .boolean), (.date, .date),
            (.date, .calendarDate), (.binary, .binary), (.uuid, .uuid), (.uri, .uri):
            return true
        default: return false
        }
    }
}
