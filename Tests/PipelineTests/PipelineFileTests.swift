import Foundation
import ModelFiles
import ObjectGraph
import Pipeline
import Readers
import TestSupport
import Testing

@Suite struct PipelineFileTests {
    static let root = repositoryRoot
    /// Pipelines written by a test live in Pipelines/ so `../SampleData/...` resolves as in the examples.
    static let file = root.appendingPathComponent("Pipelines/test.yaml").path

    /// A minimal valid pipeline with `extra` added to its one source.
    static func pipeline(source extra: String = "", top: String = "") -> String {
        """
        version: 1
        model: ../SampleData/shop.model.yaml
        target: { store: sqlite, path: out.sqlite }
        \(top)
        sources:
          - name: customers
            path: ../SampleData/customers.csv
            entity: Customer
            key: [id]
            fields: { id: customer_id, name: name, email: email }
        \(extra)
        """
    }

    private func issues(_ text: String, environment: [String: String] = [:]) -> [String] {
        do {
            _ = try PipelineFile.load(text: text, file: Self.file, environment: environment)
            return []
        } catch let error as PipelineFileError {
            return error.issues.map(\.description)
        } catch {
            return ["unexpected \(error)"]
        }
    }

    @Test func theExamplePipelineLoadsWithEveryPart() throws {
        let config = try PipelineFile.load(
            contentsOf: Self.root.appendingPathComponent("Pipelines/shop.yaml"),
            environment: ["SLUICE_OUT": "/tmp/sluice-out"])
        #expect(
            config.targetPath == "/tmp/sluice-out/shop.sqlite"
                && config.rejectsPath == "/tmp/sluice-out/shop.rejects.jsonl")
        #expect(config.modelPath == Self.root.appendingPathComponent("SampleData/shop.model.yaml").path)
        #expect(
            config.merge == .objectTrumps && config.commit == .atomic && config.batchSize == 5000
                && config.contexts == 2)
        #expect(config.sources.map(\.name) == ["customers", "products", "orders"])
        #expect(config.sources.map(\.format) == [.csv, .sqldump, .xml])
        let customers = config.sources[0]
        #expect(customers.csv.nullMarkers == [""] && customers.mapping.key == ["id"])
        let email = try #require(customers.mapping.fields.first { $0.attribute == "email" })
        #expect(email.from == "email" && email.transforms == [.lowercase])
        #expect(customers.mapping.fields.first { $0.attribute == "signedUp" }?.date == .pattern("yyyy-MM-dd"))
        #expect(customers.mapping.fields.first { $0.attribute == "balance" }?.defaultValue == .decimal(0))
        let orders = config.sources[2]
        #expect(
            orders.record == "/orders/order" && orders.mapping.relationships.first?.key.map(\.from) == ["@customer"])
        #expect(orders.mapping.relationships.first?.createsMissing == false)
        let lines = try #require(orders.mapping.children.first)
        #expect(lines.record == "line" && lines.parent == "order" && lines.mapping.entity == "OrderLine")
        #expect(lines.mapping.relationships.first?.entity == "Product")
    }

    @Test func variablesComeFromTheEnvironmentWithDefaults() throws {
        let text = Self.pipeline().replacingOccurrences(
            of: "path: out.sqlite", with: "path: \"${DIR}/${NAME:-shop}.sqlite\"")
        let config = try PipelineFile.load(text: text, file: Self.file, environment: ["DIR": "/data"])
        #expect(config.targetPath == "/data/shop.sqlite")
        let missing = issues(text)
        #expect(
            missing.count == 1 && missing[0].contains("test.yaml:3:")
                && missing[0].contains("environment variable DIR is not set"))
    }

    @Test func relativePathsAreResolvedAgainstThePipelineFile() throws {
        let config = try PipelineFile.load(text: Self.pipeline(), file: Self.file)
        #expect(config.targetPath == Self.root.appendingPathComponent("Pipelines/out.sqlite").path)
        #expect(config.sources[0].path == Self.root.appendingPathComponent("SampleData/customers.csv").path)
        #expect(config.sources[0].format == .csv, "detected from the file name")
    }

    struct Mistake: Sendable, CustomTestStringConvertible {
        let what: String
        let text: String
        /// `line:column` and a part of the message the issue must have.
        let position: String
        let message: String
        var testDescription: String { what }
    }

    static let mistakes = [
        Mistake(
            what: "unknown top-level key", text: pipeline(top: "batches: { size: 10 }"), position: "4:1",
            message: "unknown key \"batches\""),
        Mistake(
            what: "wrong type", text: pipeline(top: "batch: { size: many }"), position: "4:16",
            message: "batch.size must be a whole number"),
        Mistake(
            what: "unknown merge policy", text: pipeline(top: "merge: objects-win"), position: "4:8",
            message: "unknown merge policy"),
        Mistake(
            what: "missing entity",
            text: pipeline().replacingOccurrences(of: "entity: Customer", with: "entity: Client"),
            position: "8:13", message: "the model has no entity \"Client\""),
        Mistake(
            what: "missing attribute", text: pipeline().replacingOccurrences(of: "name: name", with: "fullName: name"),
            position: "10:32", message: "Customer has no attribute \"fullName\""),
        Mistake(
            what: "attribute mapped twice",
            text: pipeline().replacingOccurrences(of: "email: email }", with: "email: email, name: title }"),
            position: "10:", message: "name"),
        Mistake(
            what: "key not mapped",
            text: pipeline().replacingOccurrences(of: "key: [id]", with: "key: [email, country]"),
            position: "9:", message: "\"country\" is not mapped"),
        Mistake(
            what: "lookup through a to-many relationship",
            text: pipeline(source: "    relationships: { orders: { key: { number: x } } }"),
            position: "11:22", message: "orders is to-many"),
        Mistake(
            what: "lookup key not in the destination",
            text: pipeline(source: "    relationships: { orders: { key: { number: x } } }")
                .replacingOccurrences(of: "entity: Customer", with: "entity: Order").replacingOccurrences(
                    of: "key: [id]", with: "key: []"
                )
                .replacingOccurrences(
                    of: "fields: { id: customer_id, name: name, email: email }", with: "fields: { number: n }"
                )
                .replacingOccurrences(of: "orders: {", with: "customer: {").replacingOccurrences(
                    of: "number: x", with: "code: x"),
            position: "11:", message: "Customer has no attribute \"code\""),
        Mistake(
            what: "date format on a string",
            text: pipeline().replacingOccurrences(of: "name: name", with: "name: { column: name, date: iso8601 }"),
            position: "10:", message: "`date` applies to date attributes"),
        Mistake(
            what: "unknown transform",
            text: pipeline().replacingOccurrences(
                of: "name: name", with: "name: { column: name, transform: capitalize }"),
            position: "10:", message: "unknown transform \"capitalize\""),
        Mistake(
            what: "bad regular expression",
            text: pipeline().replacingOccurrences(
                of: "name: name", with: "name: { column: name, transform: { capture: \"(\" } }"),
            position: "10:", message: "not a valid regular expression"),
        Mistake(
            what: "where that does not parse", text: pipeline(source: "    where: \"country ==\""), position: "11:12",
            message: "where:"),
        Mistake(
            what: "where naming an unknown attribute", text: pipeline(source: "    where: \"planet == 'Mars'\""),
            position: "11:12", message: "planet"),
        Mistake(
            what: "children on a csv source",
            text: pipeline(
                source: "    children: [ { record: x, entity: Order, parent: customer, fields: { number: n } } ]"),
            position: "11:15", message: "children (nested records) apply to xml, json and jsonl sources only"),
        Mistake(
            what: "an xml source without record",
            text: pipeline().replacingOccurrences(of: "customers.csv", with: "orders.xml"),
            position: "6:5", message: "an xml source needs `record`"),
        Mistake(
            what: "a json field path with an empty name",
            text: pipeline().replacingOccurrences(of: "customers.csv", with: "customers.json").replacingOccurrences(
                of: "email: email }", with: "email: contact..email }"),
            position: "10:13", message: "the JSON path \"contact..email\" has an empty name"),
        Mistake(
            what: "a json record path not from the root",
            text: pipeline(source: "    record: data/items").replacingOccurrences(
                of: "customers.csv", with: "customers.json"),
            position: "11:13", message: "a JSON record path starts at the root with /"),
        Mistake(
            what: "json options on a csv source", text: pipeline(source: "    json: { repeated_members: last-wins }"),
            position: "11:11", message: "`json` options apply to json and jsonl sources only"),
        Mistake(
            what: "csv options: bad delimiter", text: pipeline(source: "    csv: { delimiter: \";;\" }"),
            position: "11:23", message: "csv.delimiter must be one ASCII character"),
        Mistake(
            what: "YAML syntax", text: pipeline(top: "batch: { size: [ }"), position: "4:", message: "YAML syntax error"
        ),
    ]

    @Test(arguments: mistakes)
    func eachMistakeIsReportedWithItsPosition(_ mistake: Mistake) {
        let found = issues(mistake.text)
        #expect(
            found.contains { $0.contains("test.yaml:\(mistake.position)") && $0.contains(mistake.message) }, "\(found)")
    }

    @Test func everyMistakeIsReportedNotOnlyTheFirst() {
        let text = Self.pipeline(top: "merge: nope\nbatch: { contexts: 0 }").replacingOccurrences(
            of: "name: name", with: "nickname: name")
        #expect(issues(text).count == 3)
    }

    @Test func modelFileErrorsNameTheModelFile() {
        let text = Self.pipeline().replacingOccurrences(of: "shop.model.yaml", with: "missing.model.yaml")
        let found = issues(text)
        #expect(
            found.count == 1
                && found[0].contains("SampleData/missing.model.yaml: cannot read the model file: no such file"),
            "\(found)")
    }

    /// A pipeline may name an Xcode model (`.xcdatamodeld`) like a YAML one.
    @Test func aPipelineNamesAnXcodeModel() throws {
        let file = Self.root.appendingPathComponent("SampleData/pipeline.yaml").path
        let config = try PipelineFile.load(
            text: """
                model: xcode/Notes.xcdatamodeld
                target: { store: in-memory }
                sources:
                  - { name: folders, path: customers.csv, entity: Folder, key: [name], fields: { name: name, \
                createdAt: { column: signup, date: "yyyy-MM-dd" } } }
                """, file: file)
        #expect(config.model.entity(named: "Note") != nil)
        #expect(config.sources.first?.mapping.key == ["name"])
    }
}
