import Foundation
import ObjectGraph
import Pipeline
import Readers
import TestSupport
import Testing

@Suite struct RecordMapperTests {
    static let root = repositoryRoot

    static func shop() throws -> PipelineConfig {
        try PipelineFile.load(contentsOf: root.appendingPathComponent("Pipelines/shop.yaml"), environment: [:])
    }

    /// Every record of `reader` mapped by `mapper`: values by attribute name, or the reject.
    static func mapAll(
        _ reader: some RecordReader, _ mapper: RecordMapper
    ) throws -> [Result<[String: AttributeValue], RecordReject>] {
        var reader = reader
        var results: [Result<[String: AttributeValue], RecordReject>] = []
        while let record = try reader.next() {
            do {
                guard let mapped = try mapper.map(record) else { continue }
                results.append(
                    .success(
                        Dictionary(
                            uniqueKeysWithValues: mapper.attributeValues(of: mapped).map {
                                (mapper.entity.attributes[$0.attribute].name, $0.value)
                            })))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    @Test func theSampleCustomersMapThroughTheExamplePipeline() throws {
        let config = try Self.shop()
        let customers = config.sources[0]
        let reader = try CSVReader(path: customers.path, dialect: customers.csv)
        let mapper = try RecordMapper(
            mapping: customers.mapping, model: config.model, fieldNames: reader.schema?.names ?? [],
            source: customers.name, sourceNulls: customers.csv.nullMarkers)
        let rows = try Self.mapAll(reader, mapper).map { try $0.get() }
        #expect(rows.count == 3)
        #expect(rows[0]["email"] == "ada@example.com", "lowercased")
        #expect(
            rows[0]["balance"] == .decimal(Decimal(string: "120.50")!) && rows[1]["balance"] == .decimal(0),
            "an empty balance takes the default")
        #expect(rows[2]["name"] == "\"Best\" Widgets, Ltd" && rows[1]["name"] == "Бори́с Пастерна́к")
        #expect(rows[0]["signedUp"] == .date(ISO8601DateFormatter().date(from: "2024-01-15T00:00:00Z")!))
    }

    @Test func aBadRecordIsRejectedWithEveryFailureAndWhereItIs() throws {
        let config = try Self.shop()
        let directory = try TemporaryDirectory()
        let file = try directory.file(
            "customers.csv",
            contents: """
                customer_id,name,email,country,signup,balance
                7,Bo,bo@example.com,SE,2024-02-30,1.5
                x8,Cy,cy@example.com,NO,2024-03-01,1.5.0

                """)
        let reader = try CSVReader(path: file.path, dialect: config.sources[0].csv)
        let mapper = try RecordMapper(
            mapping: config.sources[0].mapping, model: config.model, fieldNames: reader.schema?.names ?? [],
            source: "customers")
        let results = try Self.mapAll(reader, mapper)
        guard case .failure(let first) = results[0], case .failure(let second) = results[1] else {
            Issue.record("both records must be rejected: \(results)")
            return
        }
        #expect(
            first.failures.map(\.property) == ["signedUp"] && first.failures[0].raw == "2024-02-30"
                && first.failures[0].rule == "date")
        #expect(
            first.failures[0].position.line == 2 && first.failures[0].position.column == 24 && first.position.line == 2,
            "\(first.failures[0].position)")
        #expect(second.failures.map(\.property) == ["id", "balance"], "every failure of the record")
        #expect(
            second.failures[0].message == "id: \"x8\" is not a whole number" && second.source == "customers"
                && second.entity == "Customer")
        #expect(
            second.failures[1].raw == "1.5.0" && second.failures[1].position.column == 36,
            "\(second.failures[1].position)")
    }

    @Test func aFieldTheInputDoesNotHaveIsAConfigError() throws {
        let config = try Self.shop()
        #expect {
            try RecordMapper(
                mapping: config.sources[0].mapping, model: config.model, fieldNames: ["customer_id", "mail"],
                source: "customers")
        } throws: { "\($0)".contains("the input has no field \"name\" (it has: customer_id, mail)") }
    }

    @Test func xmlOrdersAndTheirLinesMapWithLookupKeys() throws {
        let config = try Self.shop()
        let orders = config.sources[2]
        let spec = orders.mapping.recordSpec(path: orders.record!)
        let reader = try XMLReader(path: orders.path, spec: spec)
        let orderMapper = try RecordMapper(
            mapping: orders.mapping, model: config.model, fieldNames: spec.fields.map(\.name), source: "orders")
        let lineMapping = orders.mapping.children[0].mapping
        let lineMapper = try RecordMapper(
            mapping: lineMapping, model: config.model, fieldNames: spec.children[0].fields.map(\.name),
            source: "orders > line")
        var orderKeys: [[AttributeValue]?] = [], lineKeys: [[AttributeValue]?] = [], quantities: [AttributeValue] = []
        while let record = try reader.next() {
            if record.kind == "line" {
                let mapped = try #require(try lineMapper.map(record))
                lineKeys += lineMapper.lookupKeys(of: mapped)
                quantities += lineMapper.attributeValues(of: mapped).filter {
                    lineMapper.entity.attributes[$0.attribute].name == "quantity"
                }.map(\.value)
            } else {
                let mapped = try #require(try orderMapper.map(record))
                orderKeys += orderMapper.lookupKeys(of: mapped)
            }
        }
        #expect(orderKeys == [[.integer(1)], [.integer(2)], [.integer(1)]], "customer ids, typed as Customer.id")
        #expect(lineKeys == [["W-100"], ["S-300"], ["G-200"], ["W-100"]])
        #expect(quantities == [.integer(3), .integer(100), .integer(1), .integer(2)])
    }

    @Test func whereSkipsRecords() throws {
        var config = try Self.shop()
        var customers = config.sources[0]
        customers.mapping.filter = try FetchPredicate(format: "country IN {'IE', 'GB'} AND balance > 0")
        config.sources[0] = customers
        let reader = try CSVReader(path: customers.path, dialect: customers.csv)
        let mapper = try RecordMapper(
            mapping: customers.mapping, model: config.model, fieldNames: reader.schema?.names ?? [],
            source: customers.name, sourceNulls: customers.csv.nullMarkers)
        let rows = try Self.mapAll(reader, mapper).map { try $0.get() }
        #expect(rows.map { $0["id"] } == [.integer(1), .integer(3)])
    }
}
