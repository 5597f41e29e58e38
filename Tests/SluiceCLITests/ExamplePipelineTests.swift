import Drivers
import Foundation
import TestSupport
import Testing

/// The example pipelines after `shop.yaml`: an XML feed with nested lines and a legacy SQL dump with
/// foreign keys (children before parents), both into the store `shop.yaml` made; then `inspect`
/// and `validate` over the result.
@Suite struct ExamplePipelineTests {
    @Test func theFeedAndTheLegacyDumpGoIntoTheShop() throws {
        let directory = try TemporaryDirectory()
        let environment = ["SLUICE_OUT": directory.url.path]
        let store = directory.url.appendingPathComponent("shop.sqlite").path
        #expect(try runSluice(["run", "Pipelines/shop.yaml"], environment: environment).status == 0)

        let feed = try runSluice(
            ["run", "Pipelines/orders-feed.yaml", "--report", directory.url.appendingPathComponent("feed.json").path],
            environment: environment)
        #expect(feed.status == 0, "\(feed.stderr)")
        // 1004 and 1005 are new; 1001 comes again with a changed note (1 update) and the same lines.
        #expect(feed.stdout.contains("Order: 3 read, 2 inserted, 1 updated, 0 unchanged, 0 rejected"))
        #expect(feed.stdout.contains("OrderLine: 5 read, 3 inserted, 0 updated, 2 unchanged, 0 rejected"))
        let report =
            try JSONSerialization.jsonObject(with: Data(contentsOf: directory.url.appendingPathComponent("feed.json")))
            as? [String: Any]
        #expect(((report?["entities"] as? [String: Any])?["Order"] as? [String: Int])?["updated"] == 1)
        #expect(
            try sqliteRows(store, "SELECT note FROM orders WHERE order_number = 1005") == [
                [.text("gift wrap & card: \"Happy birthday\"")]
            ])
        // +02:00 is kept as the instant it names: 12:00 UTC, as text SQLite's date functions read.
        #expect(
            try sqliteRows(store, "SELECT placed_at, unixepoch(placed_at) FROM orders WHERE order_number = 1005") == [
                [.text("2024-08-15 12:00:00"), .integer(745_416_000 + 978_307_200)]
            ])

        let legacy = try runSluice(["run", "Pipelines/legacy-orders.yaml"], environment: environment)
        #expect(legacy.status == 0, "\(legacy.stderr)")
        #expect(legacy.stdout.contains("OrderLine: 4 read, 4 inserted, 0 updated, 0 unchanged, 0 rejected"))
        #expect(legacy.stdout.contains("Customer: 2 read, 2 inserted"))
        let orders = try sqliteRows(
            store,
            """
            SELECT o.order_number, c.name, count(l.rowid), sum(l.quantity) FROM orders o
            JOIN customers c USING (customer_id)
            LEFT JOIN order_lines l ON l.order_id = o.order_number WHERE o.order_number > 9000 GROUP BY 1 ORDER BY 1
            """)
        #expect(
            orders == [
                [.integer(9001), .text("Grace Hopper"), .integer(2), .integer(6)],
                [.integer(9002), .text("Édouard Manet"), .integer(1), .integer(1000)],
                [.integer(9003), .text("Ada O'Brien"), .integer(1), .integer(2)],
            ])
        #expect(try sqliteRows(store, "SELECT count(*) FROM customers") == [[.integer(5)]])  // 3 + 2, Ada not twice

        // Again: the keys meet every stored object; nothing changes.
        let again = try runSluice(["run", "Pipelines/legacy-orders.yaml"], environment: environment)
        #expect(again.stdout.contains("OrderLine: 4 read, 0 inserted, 0 updated, 4 unchanged, 0 rejected"))

        let inspect = try runSluice(["inspect", store, "--json"])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(inspect.stdout.utf8)) as? [String: Any]
        #expect(summary?["model"] as? String == "stored")
        #expect(
            (summary?["entities"] as? [String: Int]) == [
                "Customer": 5, "Order": 8, "OrderLine": 11, "Product": 3, "Tag": 0,
            ])
        let validate = try runSluice(["validate", store])
        #expect(validate.status == 0 && validate.stdout.contains("valid"), "\(validate.stdout)\(validate.stderr)")
    }

    /// A line whose order never arrives is rejected at the end with its key; the rest is imported.
    @Test func aParentThatNeverArrivesRejectsWithTheKey() throws {
        let directory = try TemporaryDirectory()
        let dump = try String(
            contentsOf: repositoryRoot.appendingPathComponent("SampleData/legacy-orders.sql"), encoding: .utf8
        )
        .replacingOccurrences(
            of: "INSERT INTO order_lines VALUES (9003, 1, 'W-100', 2, 19.99);",
            with: "INSERT INTO order_lines VALUES (9003, 1, 'W-100', 2, 19.99), (9999, 1, 'W-100', 1, 1.00);")
        _ = try directory.file("legacy-orders.sql", contents: dump)
        var pipeline = try String(
            contentsOf: repositoryRoot.appendingPathComponent("Pipelines/legacy-orders.yaml"), encoding: .utf8
        )
        .replacingOccurrences(of: "../SampleData/legacy-orders.sql", with: "legacy-orders.sql")
        .replacingOccurrences(
            of: "../SampleData/shop.model.yaml", with: repositoryRoot.path + "/SampleData/shop.model.yaml"
        )
        .replacingOccurrences(of: "errors: { max: 0,", with: "errors: { max: 1,")
        // The products the lines need, from the shop's own dump, first.
        pipeline = pipeline.replacingOccurrences(
            of: "sources:\n",
            with: """
                sources:
                  - { name: products, format: sqldump, path: \(repositoryRoot.path)/SampleData/legacy.sql, \
                table: products, entity: Product, key: [sku], fields: { sku: code, title: name, price: price } }

                """)
        let file = try directory.file("p.yaml", contents: pipeline)
        // Customer 1 (of order 9003) is not in this store: order 9003 and its line are rejected too.
        let result = try runSluice(["run", file.path], environment: ["SLUICE_OUT": directory.url.path])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("more than errors.max (1)"))
        let rejects = try String(
            contentsOf: directory.url.appendingPathComponent("legacy-orders.rejects.jsonl"), encoding: .utf8)
        #expect(rejects.contains("no Order with number = 9999"), "\(rejects)")
        #expect(rejects.contains("no Customer with id = 1"), "\(rejects)")
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("shop.sqlite").path))
    }

    /// The JSON examples of the README: an API export with nested lines into the shop, found again on
    /// a re-run; a JSON Lines event log with nested members and an array of scalars.
    @Test func theJSONExamplesRun() throws {
        let directory = try TemporaryDirectory()
        let environment = ["SLUICE_OUT": directory.url.path]
        let store = directory.url.appendingPathComponent("shop.sqlite").path
        #expect(try runSluice(["run", "Pipelines/shop.yaml"], environment: environment).status == 0)
        let api = try runSluice(["run", "Pipelines/orders-api.yaml"], environment: environment)
        #expect(api.status == 0, "\(api.stderr)")
        #expect(api.stdout.contains("OrderLine: 3 read, 3 inserted, 0 updated, 0 unchanged, 0 rejected"))
        #expect(
            try sqliteRows(store, "SELECT note, placed_at FROM orders WHERE order_number = 1007") == [
                [.text("call first ☎, then \"ring twice\""), .text("2024-09-03 15:45:00")]
            ])
        let again = try runSluice(["run", "Pipelines/orders-api.yaml"], environment: environment)
        #expect(again.stdout.contains("Order: 2 read, 0 inserted, 0 updated, 2 unchanged, 0 rejected"))
        #expect(again.stdout.contains("OrderLine: 3 read, 0 inserted, 0 updated, 3 unchanged, 0 rejected"))
        #expect(try runSluice(["validate", store]).status == 0)

        let events = directory.url.appendingPathComponent("events.sqlite").path
        let first = try runSluice(["import", "SampleData/events.jsonl", "--to", events, "--key", "event_id"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            try sqliteRows(events, "SELECT event_id, user_country, amount FROM events ORDER BY 1") == [
                [.text("e-0001"), .text("NL"), .null], [.text("e-0002"), .text("NL"), .real(19.99)],
                [.text("e-0003"), .text("PL"), .integer(239)], [.text("e-0004"), .text("PL"), .null],
            ])
        #expect(
            try sqliteRows(events, "SELECT value, event_id FROM items ORDER BY 1") == [
                [.text("G-200"), .text("e-0003")], [.text("S-300"), .text("e-0003")],
                [.text("W-100"), .text("e-0002")],
            ])
        let rerun = try runSluice(["import", "SampleData/events.jsonl", "--to", events, "--key", "event_id"])
        #expect(rerun.stdout.contains("Event: 4 read, 0 inserted, 0 updated, 4 unchanged"), "\(rerun.stdout)")
        #expect(rerun.stdout.contains("Item: 3 read, 0 inserted, 0 updated, 3 unchanged"), "\(rerun.stdout)")
    }
}
