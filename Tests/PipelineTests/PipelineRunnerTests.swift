import Drivers
import Foundation
import TestSupport
import Testing

@testable import Pipeline

#if canImport(Glibc)
import Glibc
#endif

/// Runs of the pipeline in this process (`PipelineRunner`, as `sluice run` calls it) over CSV, XML
/// and a SQL dump (`RunnerFixture`): the reading threads and the `batch.contexts` contexts are this
/// process's, so `make tsan` instruments them. One run at a time: a stop asked for in process
/// (`RunStop.stopForTesting`) would stop any run going.
@Suite(.serialized) struct PipelineRunnerTests {
    /// Every table, row and column (internal keys included) of runs with 2, 3 and 4 contexts equals
    /// the run with one, and so does the rejects file, byte for byte: batches are mapped in parallel
    /// but linked and written in input order. Small batches, so many are in flight at once.
    @Test(arguments: [1, 2, 3])
    func severalContextsMakeTheStoreOneContextMakes(batchSize: Int) throws {
        let fixture = try RunnerFixture()
        let (_, single) = try RunnerFixture.run(fixture.pipeline("one", size: batchSize, contexts: 1))
        let expected = try RunnerFixture.rows(of: fixture.path("one.sqlite"))
        #expect(expected["Order"]?.count == 38 && expected["OrderLine"]?.count == 74)
        #expect(expected["Employee"]?.count == 52 && expected["Event"]?.count == 50)
        let rejects = try String(contentsOfFile: fixture.path("one.rejects.jsonl"), encoding: .utf8)
        for contexts in 2...4 {
            let name = "contexts-\(contexts)"
            let (_, report) = try RunnerFixture.run(fixture.pipeline(name, size: batchSize, contexts: contexts))
            #expect(report.entities == single.entities, "\(contexts) contexts, batches of \(batchSize)")
            let rows = try RunnerFixture.rows(of: fixture.path("\(name).sqlite"))
            #expect(rows.keys.sorted() == expected.keys.sorted())
            for table in expected.keys.sorted() {
                #expect(rows[table] == expected[table], "\(table): \(contexts) contexts, batches of \(batchSize)")
            }
            let lines = try String(contentsOfFile: fixture.path("\(name).rejects.jsonl"), encoding: .utf8)
            #expect(lines == rejects, "the rejects file: \(contexts) contexts, batches of \(batchSize)")
        }
    }

    /// Bad values and repeated keys go to the rejects file, each with its place in its input, and
    /// stay out of the store; per entity every record read is inserted, updated, unchanged, rejected
    /// or left out by `where` — on a first run and on a second one over its result.
    @Test func rejectsGoToTheFileWithTheirPlacesAndTheCountsBalance() throws {
        let fixture = try RunnerFixture()
        let config = try fixture.pipeline("shop", size: 2, contexts: 3)
        let (runner, report) = try RunnerFixture.run(config)
        typealias Counts = RunReport.Counts
        #expect(
            report.entities == [
                "Product": Counts(read: 14, inserted: 12, rejected: 2),
                "Order": Counts(read: 40, inserted: 38, rejected: 2),
                "OrderLine": Counts(read: 80, inserted: 74, rejected: 6),
                "Customer": Counts(read: 31, inserted: 29, rejected: 2),
                "Employee": Counts(read: 62, inserted: 52, rejected: 8, filtered: 2),
                "Event": Counts(read: 50, inserted: 50),
            ])
        Self.expectBalanced(report)
        let path = fixture.path("shop.rejects.jsonl")
        #expect(runner.rejectsFile == path && report.rejected == 20)
        let rejects = try Self.rejects(in: path)
        #expect(rejects.count == 20)
        func first(_ entity: String, line: Int) -> Reject? {
            rejects.first { $0.entity == entity && $0.line == line }
        }
        // products.sql: line 14, a negative price; line 15 repeats P-3 (line 4).
        #expect(first("Product", line: 14)?.failures == ["price minValue -1"])
        #expect(first("Product", line: 15)?.failures == ["sku duplicate"])
        #expect(first("Product", line: 15)?.messages.first?.contains("products.sql:4:1") == true)
        // customers.csv: line 6, a bad email; line 14 repeats id 3 (line 4).
        #expect(first("Customer", line: 6)?.failures == ["email pattern not-an-email"])
        #expect(first("Customer", line: 14)?.messages.first?.contains("customers.csv:4:1") == true)
        // orders.xml: order 9 (line 11) has quantity x; order 17 (line 19) names customer 999, and
        // order 22 (line 24) customer 5, which was rejected: both go with their lines.
        #expect(first("OrderLine", line: 11)?.failures == ["quantity integer x"])
        #expect(first("Order", line: 19)?.messages == ["no Customer with id = 999"])
        #expect(first("Order", line: 24)?.messages == ["no Customer with id = 5"])
        #expect(rejects.filter { $0.entity == "OrderLine" && [19, 24].contains($0.line) }.count == 5)
        // employees.csv: 33 names manager 999; those whose chain of managers reaches 33 go too.
        #expect(
            Set(rejects.filter { $0.entity == "Employee" }.map(\.line))
                == Set(RunnerFixture.rejectedEmployees.map { $0 + 1 }))
        #expect(rejects.allSatisfy { $0.line > 0 && $0.column > 0 && $0.file.hasPrefix(fixture.directory.url.path) })
        for file in Set(rejects.map(\.file)) {
            let records = rejects.filter { $0.file == file }.map(\.record)
            #expect(records == records.sorted(), "in input order: \(file)")
        }

        let store = fixture.path("shop.sqlite")
        #expect(try sqliteRows(store, "SELECT sku FROM Product WHERE sku = 'P-13' OR title = 'Again'").isEmpty)
        #expect(try sqliteRows(store, "SELECT name FROM Customer WHERE id IN (3, 5)") == [[.text("Customer 3")]])
        #expect(try sqliteRows(store, "SELECT number FROM \"Order\" WHERE number IN (9, 17, 22)") == [[.integer(9)]])
        #expect(try sqliteRows(store, "SELECT count(*) FROM OrderLine WHERE order_id = 9") == [[.integer(0)]])
        #expect(try sqliteRows(store, "SELECT count(*) FROM Employee WHERE id >= 1000 OR id = 33") == [[.integer(0)]])

        // Again over its own result: what is stored is unchanged, the same records are rejected,
        // and the events (no key) are added again.
        let before = try RunnerFixture.rows(of: store)
        let (_, again) = try RunnerFixture.run(config)
        Self.expectBalanced(again)
        #expect(again.entities["Product"] == Counts(read: 14, unchanged: 12, rejected: 2))
        #expect(again.entities["OrderLine"] == Counts(read: 80, unchanged: 74, rejected: 6))
        #expect(again.entities["Employee"] == Counts(read: 62, unchanged: 52, rejected: 8, filtered: 2))
        #expect(again.entities["Event"] == Counts(read: 50, inserted: 50))
        let after = try RunnerFixture.rows(of: store)
        for table in ["Product", "Order", "OrderLine", "Customer", "Employee"] {
            #expect(after[table] == before[table], "\(table)")
        }
        #expect(after["Event"]?.count == 100)
    }

    /// Orders come before their customers (a later source) and employees before their managers
    /// (later in the file; 20 and 21 manage each other): each waits, and with several contexts
    /// every one ends linked to the object its record names. What never finds its parent is
    /// rejected, and what waited on it.
    @Test(arguments: [1, 4])
    func recordsWaitForParentsThatComeLater(batchSize: Int) throws {
        let fixture = try RunnerFixture()
        let (_, report) = try RunnerFixture.run(fixture.pipeline("shop", size: batchSize, contexts: 3))
        #expect(report.entities["Order"]?.inserted == 38 && report.entities["Employee"]?.inserted == 52)
        let store = fixture.path("shop.sqlite")
        let orders = (1...RunnerFixture.orders).filter { $0 != 17 && $0 != 22 }
        #expect(
            try sqliteRows(store, "SELECT number, customer_id FROM \"Order\" ORDER BY 1")
                == orders.map { [.integer(Int64($0)), .integer(Int64(RunnerFixture.customer(ofOrder: $0)))] })
        let lines = orders.flatMap { order in
            RunnerFixture.lines(ofOrder: order).compactMap { line -> [SQLiteValue]? in
                guard let quantity = Int64(line.quantity) else { return nil }
                return [.integer(Int64(order)), .integer(Int64(line.number)), .text(line.sku), .integer(quantity)]
            }
        }
        #expect(
            try sqliteRows(store, "SELECT order_id, lineNo, product_id, quantity FROM OrderLine ORDER BY 1, 2")
                == lines)
        let employees = (1...RunnerFixture.employees).filter { !RunnerFixture.rejectedEmployees.contains($0) }
        let managed = employees.map { id -> [SQLiteValue] in
            [.integer(Int64(id)), RunnerFixture.manager(ofEmployee: id).map { .integer(Int64($0)) } ?? .null]
        }
        #expect(try sqliteRows(store, "SELECT id, manager_id FROM Employee ORDER BY 1") == managed)
        #expect(
            try sqliteRows(store, "SELECT id, manager_id FROM Employee WHERE id IN (20, 21) ORDER BY 1")
                == [[.integer(20), .integer(21)], [.integer(21), .integer(20)]], "the cycle")
        let rejects = try Self.rejects(in: fixture.path("shop.rejects.jsonl")).filter { $0.entity == "Employee" }
        #expect(
            rejects.map(\.messages)
                == RunnerFixture.rejectedEmployees.sorted().map {
                    ["no Employee with id = \(RunnerFixture.manager(ofEmployee: $0)!)"]
                })
    }

    /// A dry run counts what the real run does (lookups find the stored objects) and leaves the
    /// target as it was, byte for byte: no rejects file, no work copy, no folder of its own left.
    @Test func aDryRunLeavesTheTargetUnchanged() throws {
        let fixture = try RunnerFixture()
        var products = try fixture.pipeline("t", size: 3, contexts: 3)
        products.sources = [products.sources[0]]
        try RunnerFixture.run(products)
        let target = fixture.path("t.sqlite")
        let (rows, bytes) = (try RunnerFixture.rows(of: target), try Data(contentsOf: URL(fileURLWithPath: target)))
        try FileManager.default.copyItem(atPath: target, toPath: fixture.path("real.sqlite"))
        try FileManager.default.removeItem(atPath: fixture.path("t.rejects.jsonl"))  // the first run's

        let (dry, report) = try RunnerFixture.run(fixture.pipeline("t", size: 3, contexts: 3), dryRun: true)
        let (_, real) = try RunnerFixture.run(fixture.pipeline("real", size: 3, contexts: 3))
        #expect(report.entities == real.entities, "the real run's counts")
        #expect(report.entities["Product"]?.unchanged == 12 && report.entities["Order"]?.inserted == 38)
        #expect(try RunnerFixture.rows(of: target) == rows)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == bytes)
        #expect(dry.rejectsFile == nil && !FileManager.default.fileExists(atPath: fixture.path("t.rejects.jsonl")))
        #expect(leftovers(beside: target).isEmpty)
        let temporary = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())
        #expect(!temporary.contains { $0.hasPrefix("sluice-dry-run-\(getpid())-") })

        // Into a target that does not exist: none is made.
        let (_, none) = try RunnerFixture.run(fixture.pipeline("none", size: 3, contexts: 2), dryRun: true)
        #expect(none.entities["Product"] == RunReport.Counts(read: 14, inserted: 12, rejected: 2))
        #expect(none.entities["Employee"] == real.entities["Employee"])
        #expect(!FileManager.default.fileExists(atPath: fixture.path("none.sqlite")))
    }
}

extension PipelineRunnerTests {
    /// Per entity, every record read is inserted, updated, unchanged, rejected or left out.
    static func expectBalanced(_ report: RunReport, sourceLocation: SourceLocation = #_sourceLocation) {
        for (entity, counts) in report.entities {
            let accounted = counts.inserted + counts.updated + counts.unchanged + counts.rejected + counts.filtered
            #expect(counts.read == accounted, "\(entity): \(counts)", sourceLocation: sourceLocation)
        }
        #expect(report.rejected == report.totals.rejected, sourceLocation: sourceLocation)
    }

    /// One line of a rejects file: the record's place, and each failure as `property rule raw`.
    struct Reject {
        var entity: String
        var file: String
        var line: Int
        var column: Int
        var record: Int
        var failures: [String]
        var messages: [String]
    }

    static func rejects(in path: String) throws -> [Reject] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            let position = object["position"] as? [String: Any] ?? [:]
            let failures = object["failures"] as? [[String: Any]] ?? []
            return Reject(
                entity: object["entity"] as? String ?? "", file: position["file"] as? String ?? "",
                line: position["line"] as? Int ?? 0, column: position["column"] as? Int ?? 0,
                record: position["record"] as? Int ?? 0,
                failures: failures.map { failure in
                    ["property", "rule", "raw"].compactMap { failure[$0] as? String }.joined(separator: " ")
                },
                messages: failures.compactMap { $0["message"] as? String })
        }
    }
}
