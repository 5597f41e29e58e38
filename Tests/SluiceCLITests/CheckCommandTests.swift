import Foundation
import TestSupport
import Testing

@Suite struct CheckCommandTests {
    static let root = repositoryRoot

    @Test func theExamplePipelineChecksClean() throws {
        let result = try runSluice(["check", "Pipelines/shop.yaml"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("Pipelines/shop.yaml: OK\n"))
        #expect(
            result.stdout.contains(
                "source orders: xml \(Self.root.path)/SampleData/orders.xml → Order (3 fields; key number; customer → "
                    + "Customer by id); children line → OrderLine"
            ))
        #expect(result.stderr.isEmpty)
    }

    @Test func mistakesExitWith2AndNameFileLineAndColumn() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try directory.file(
            "bad.yaml",
            contents: """
                version: 1
                model: \(Self.root.path)/SampleData/shop.model.yaml
                target: { store: sqlite, path: out.sqlite }
                sources:
                  - name: customers
                    format: csv
                    path: \(Self.root.path)/SampleData/customers.csv
                    entity: Customer
                    fields: { id: customer_id, nickname: name }
                """)
        let result = try runSluice(["check", pipeline.path])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("bad.yaml:9:32: source customers.nickname: Customer has no attribute \"nickname\""),
            "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aMissingInputExitsWith3() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                model: \(Self.root.path)/SampleData/shop.model.yaml
                target: { store: in-memory }
                sources:
                  - { name: customers, format: csv, path: nowhere.csv, entity: Customer,
                      fields: { id: customer_id, name: name, email: email } }
                """)
        let result = try runSluice(["check", pipeline.path])
        #expect(result.status == 3)
        #expect(
            result.stderr.contains(
                "source customers: the input \(directory.url.standardizedFileURL.path)/nowhere.csv does not exist"),
            "\(result.stderr)")
    }
}
