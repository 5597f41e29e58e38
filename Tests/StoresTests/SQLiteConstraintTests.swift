import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// How the SQLite store finds uniqueness-constraint conflicts (the behaviour itself is checked on every
/// store by `StoreConformanceTests`).
@Suite struct SQLiteConstraintTests {
    /// Graph layout: the constraint's own unique index; plain: the table's primary key, which the
    /// department's name is (its automatic index).
    @Test(arguments: [("graph", "Department_unique_name"), ("plain", "sqlite_autoindex_Department_1")])
    func theLookupUsesTheConstraintsUniqueIndex(layout: String, index: String) throws {
        let file = try SQLiteFile(model: try CompanyModel.make(), options: ["layout": layout])
        let store = try #require(file.graph.store as? SQLiteStore)
        let department = try #require(file.model.entity(named: "Department"))
        let plan = try store.keyLookupPlan(of: department, on: [department.attribute(named: "name")!], keys: 500)
        #expect(
            plan.contains { $0.contains("USING INDEX \(index)") || $0.contains("USING COVERING INDEX \(index)") },
            "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(plan)")
    }
}
