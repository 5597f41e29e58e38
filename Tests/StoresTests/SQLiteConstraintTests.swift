import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// How the SQLite store finds uniqueness-constraint conflicts (the behaviour itself is checked on every
/// store by `StoreConformanceTests`).
@Suite struct SQLiteConstraintTests {
    @Test func theLookupUsesTheConstraintsUniqueIndex() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let store = try #require(file.graph.store as? SQLiteStore)
        let department = try #require(file.model.entity(named: "Department"))
        let plan = try store.keyLookupPlan(of: department, on: [department.attribute(named: "name")!], keys: 500)
        #expect(
            plan.contains {
                $0.contains("USING INDEX Department_unique_name")
                    || $0.contains("USING COVERING INDEX Department_unique_name")
            }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(plan)")
    }
}
