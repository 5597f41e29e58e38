import Foundation
import Testing

@testable import Pipeline

/// Which sources are read together in one pass over their file (`PipelineRunner.passes`).
@Suite struct SourcePassTests {
    static let file = PipelineFileTests.file

    /// Pipelines over the sample model whose sources are `sources` (YAML lines of flow mappings).
    static func config(_ sources: [String], commit: String = "atomic") throws -> PipelineConfig {
        try PipelineFile.load(
            text: """
                version: 1
                model: ../SampleData/shop.model.yaml
                target: { store: sqlite, path: out.sqlite, commit: \(commit) }
                sources:
                \(sources.map { "  - " + $0 }.joined(separator: "\n"))
                """, file: Self.file)
    }

    static func dump(_ name: String, table: String, path: String = "../SampleData/legacy-orders.sql") -> String {
        "{ name: \(name), format: sqldump, path: \(path), table: \(table), entity: Customer, fields: { id: id } }"
    }
    static func xml(_ name: String, record: String, path: String = "../SampleData/orders.xml") -> String {
        "{ name: \(name), format: xml, path: \(path), record: \(record), entity: Customer, fields: { id: \"@id\" } }"
    }

    @Test func consecutiveSourcesOfOneDumpOrDocumentShareAPass() throws {
        let dumps = try Self.config([
            Self.dump("a", table: "customers"), Self.dump("b", table: "orders"), Self.dump("c", table: "order_lines"),
        ])
        #expect(SourcePass.plan(dumps, commit: .atomic) == [0..<3])
        let documents = try Self.config([
            Self.xml("a", record: "/shop/customers/customer"), Self.xml("b", record: "/shop/orders/order"),
            Self.dump("c", table: "orders"), Self.xml("d", record: "/shop/products/product"),
        ])
        #expect(
            SourcePass.plan(documents, commit: .atomic) == [0..<2, 2..<3, 3..<4], "only neighbours go together"
        )
    }

    @Test func sourcesThatWouldTakeTheSameRecordsReadAlone() throws {
        let sameTable = try Self.config([Self.dump("a", table: "customers"), Self.dump("b", table: "customers")])
        #expect(SourcePass.plan(sameTable, commit: .atomic) == [0..<1, 1..<2])
        let nested = try Self.config([
            Self.xml("a", record: "/shop/orders"), Self.xml("b", record: "/shop/orders/order"),
            Self.xml("c", record: "/shop/orders/order"),
        ])
        #expect(SourcePass.plan(nested, commit: .atomic) == [0..<1, 1..<2, 2..<3])
        let otherFiles = try Self.config([
            Self.dump("a", table: "customers"), Self.dump("b", table: "orders", path: "../SampleData/legacy.sql"),
        ])
        #expect(SourcePass.plan(otherFiles, commit: .atomic) == [0..<1, 1..<2])
        let csv = try Self.config([
            "{ name: a, path: ../SampleData/customers.csv, entity: Customer, fields: { id: customer_id } }",
            "{ name: b, path: ../SampleData/customers.csv, entity: Customer, fields: { id: customer_id } }",
        ])
        #expect(
            SourcePass.plan(csv, commit: .atomic) == [0..<1, 1..<2], "a CSV file holds one kind of record")
    }

    /// `commit: batches` checkpoints count one source's batches: each source is read alone.
    @Test func batchCommitsReadEachSourceAlone() throws {
        let dumps = try Self.config(
            [Self.dump("a", table: "customers"), Self.dump("b", table: "orders")], commit: "batches")
        #expect(SourcePass.plan(dumps, commit: .batches) == [0..<1, 1..<2])
    }
}
