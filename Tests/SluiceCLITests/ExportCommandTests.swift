import Drivers
import Foundation
import TestSupport
import Testing

/// What other tools see of an import (the plain layout), and `sluice export` back out: CSV, JSON
/// Lines, SQL; from every store type and layout; and a CSV export imported again.
@Suite struct ExportCommandTests {
    /// Customers keyed by `customer_id`, orders by `order_id` pointing at them, with a datetime,
    /// decimals (one beyond a double's digits), quoted and multi-line text, an empty note.
    struct Shop {
        var customers: [(id: Int, name: String, signedUp: String, limit: String)] = []
        var orders: [(id: Int, customer: Int, placedAt: String, total: String, note: String?)] = []

        init() {
            for n in 1...40 {
                let limit = n == 7 ? "12345678901234567890.123456789" : "\(n * 37 % 1000).\(n % 10)5"
                customers.append(
                    (
                        n * 10, n == 3 ? "Zoë \"Z\" O'Neil, Jr." : "Customer \(n)",
                        "2023-\(String(format: "%02d", n % 12 + 1))-1\(n % 9)T0\(n % 10):30:00Z", limit
                    ))
            }
            for n in 1...300 {
                let note: String? = n % 50 == 0 ? "line one\nline two, \"quoted\"" : n % 7 == 0 ? "fragile" : nil
                orders.append(
                    (
                        5000 + n, (n * 13 % 40 + 1) * 10,
                        "2024-\(String(format: "%02d", n % 12 + 1))-2\(n % 8)T1\(n % 10):0\(n % 6):00Z",
                        "\(n * 7919 % 100000 / 100).\(String(format: "%02d", n % 100))", note
                    ))
            }
        }

        func csv(_ field: String?) -> String {
            guard let field else { return "" }
            guard field.contains(where: { ",\"\n".contains($0) }) else { return field }
            return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }

        var customersCSV: String {
            "customer_id,name,signed_up,credit_limit\n"
                + customers.map { "\($0.id),\(csv($0.name)),\($0.signedUp),\($0.limit)\n" }.joined()
        }

        var ordersCSV: String {
            "order_id,customer_id,placed_at,total,note\n"
                + orders.map { "\($0.id),\($0.customer),\($0.placedAt),\($0.total),\(csv($0.note))\n" }.joined()
        }
    }

    @Test func anImportIsReadRightByOtherToolsAndExportsBackTheSameRows() throws {
        let directory = try TemporaryDirectory()
        let shop = Shop()
        let customers = try directory.file("customers.csv", contents: shop.customersCSV)
        let orders = try directory.file("orders.csv", contents: shop.ordersCSV)
        let store = directory.url.appendingPathComponent("p.db").path
        let imported = try runSluice(["import", customers.path, orders.path, "--to", store])
        #expect(imported.status == 0, "\(imported.stderr)")

        // Tables and columns as the files name them; the source's keys join them; no internal columns
        // (SQLite's own `sqlite_` tables, such as the planner's statistics, aside).
        let ownTables = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        #expect(
            try sqliteRows(store, ownTables + " ORDER BY 1") == [
                [.text("_sluice_metadata")], [.text("customers")], [.text("orders")],
            ])
        let columns = try sqliteRows(
            store,
            "SELECT p.name FROM (\(ownTables)) m, pragma_table_info(m.name) p WHERE m.name NOT LIKE '\\_%' ESCAPE '\\'")
        #expect(
            Set(columns.map { $0[0] })
                == Set(
                    ["customer_id", "name", "signed_up", "credit_limit", "order_id", "placed_at", "total", "note"].map {
                        SQLiteValue.text($0)
                    }))
        #expect(
            try sqliteRows(store, "SELECT count(*) FROM orders o JOIN customers c ON c.customer_id = o.customer_id")
                == [[.integer(Int64(shop.orders.count))]])
        #expect(
            try sqliteRows(
                store, "SELECT count(*) FROM orders WHERE date(placed_at) IS NULL OR datetime(placed_at) IS NULL")
                == [[.integer(0)]])
        #expect(
            try sqliteRows(
                store,
                "SELECT count(*) FROM customers WHERE datetime(signed_up) = signed_up AND typeof(signed_up) = 'text'")
                == [[.integer(Int64(shop.customers.count))]])
        let over = shop.orders.filter { Decimal(string: $0.total)! > 500 }.count
        #expect(try sqliteRows(store, "SELECT count(*) FROM orders WHERE total > 500") == [[.integer(Int64(over))]])
        let largest = shop.orders.max { Decimal(string: $0.total)! < Decimal(string: $1.total)! }!
        #expect(
            try sqliteRows(store, "SELECT order_id FROM orders ORDER BY total DESC LIMIT 1") == [
                [.integer(Int64(largest.id))]
            ])

        // Exported: the same rows and values (decimals with every digit, dates in ISO 8601, UTC).
        let out = directory.url.appendingPathComponent("export").path
        let exported = try runSluice(["export", store, "--to", out])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout.contains("orders: 300 rows"), "\(exported.stdout)")
        let customerRows = try String(contentsOfFile: out + "/customers.csv", encoding: .utf8)
        let expectedCustomers =
            "customer_id,name,signed_up,credit_limit\n"
            + shop.customers.map { customer in
                "\(customer.id),\(shop.csv(customer.name)),\(customer.signedUp),\(Decimal(string: customer.limit)!)\n"
            }.joined()
        #expect(customerRows == expectedCustomers)
        let orderRows = try String(contentsOfFile: out + "/orders.csv", encoding: .utf8)
        // The source's own columns, in its order, and values as it wrote them (totals with their scale).
        #expect(orderRows == shop.ordersCSV)

        // The export imports back into an equal store: exported again, the files are the same.
        let again = directory.url.appendingPathComponent("q.db").path
        let reimported = try runSluice(["import", out + "/customers.csv", out + "/orders.csv", "--to", again])
        #expect(reimported.status == 0, "\(reimported.stderr)")
        let out2 = directory.url.appendingPathComponent("export2").path
        #expect(try runSluice(["export", again, "--to", out2]).status == 0)
        for table in ["customers", "orders"] {
            #expect(
                try String(contentsOfFile: "\(out2)/\(table).csv", encoding: .utf8)
                    == (try String(contentsOfFile: "\(out)/\(table).csv", encoding: .utf8)), "\(table)")
        }
    }

    /// The example shop (string keys, a compound key, a many-to-many) exported from SQLite in both
    /// layouts, XML and binary: the same files from each, and a SQL export sqlite3 reads.
    @Test func everyStoreTypeAndLayoutExportsTheSameData() throws {
        let directory = try TemporaryDirectory()
        #expect(
            try runSluice(["run", "Pipelines/shop.yaml"], environment: ["SLUICE_OUT": directory.url.path]).status == 0)
        let original = directory.url.appendingPathComponent("shop.sqlite").path
        func path(_ name: String) -> String { directory.url.appendingPathComponent(name).path }
        #expect(try runSluice(["convert", original, path("graph.sqlite"), "--layout", "graph"]).status == 0)
        #expect(
            try sqliteRows(path("graph.sqlite"), "SELECT count(*) FROM \"Customer\" WHERE _pk > 0") == [[.integer(3)]])
        #expect(try runSluice(["convert", path("graph.sqlite"), path("shop.xml")]).status == 0)
        #expect(try runSluice(["convert", path("shop.xml"), path("shop.bin")]).status == 0)
        #expect(try runSluice(["convert", path("shop.bin"), path("back.sqlite")]).status == 0)
        #expect(try ConvertCommandTests.contents(path("back.sqlite")) == (try ConvertCommandTests.contents(original)))

        let reference = path("out-original")
        #expect(try runSluice(["export", original, "--to", reference]).status == 0)
        let tables = ["customers", "orders", "order_lines", "products", "tags", "products_tags"]
        let lines = try String(contentsOfFile: reference + "/order_lines.csv", encoding: .utf8)
        // Lines have no key and nothing refers to them: no key column of the store's own.
        #expect(lines.hasPrefix("line_no,quantity,price,order_id,product_id\n1,3,19.99,1001,W-100\n"), "\(lines)")
        for store in ["graph.sqlite", "shop.xml", "shop.bin", "back.sqlite"] {
            let out = path("out-" + store)
            let result = try runSluice(["export", path(store), "--to", out + "/"])
            #expect(result.status == 0, "\(store): \(result.stderr)")
            for table in tables {
                #expect(
                    try String(contentsOfFile: "\(out)/\(table).csv", encoding: .utf8)
                        == (try String(contentsOfFile: "\(reference)/\(table).csv", encoding: .utf8)),
                    "\(store) \(table)")
            }
        }

        // One SQL script any sqlite3 runs: the same tables, joined on the same keys.
        let script = path("shop.sql")
        #expect(try runSluice(["export", original, "--to", script]).status == 0)
        let copy = path("copy.db")
        try SQLiteConnection(path: copy, mode: .readWriteCreate).execute(
            try String(contentsOfFile: script, encoding: .utf8))
        let joined = """
            SELECT o.order_number, c.name, p.sku, l.quantity, l.price FROM order_lines l
            JOIN orders o ON o.order_number = l.order_id JOIN customers c USING (customer_id)
            JOIN products p ON p.sku = l.product_id ORDER BY 1, 3
            """
        let storeJoin = """
            SELECT o.order_number, c.name, p.sku, l.quantity, l.price FROM order_lines l
            JOIN orders o ON o.order_number = l.order_id JOIN customers c USING (customer_id)
            JOIN products p ON p.sku = l.product_id ORDER BY 1, 3
            """
        #expect(try sqliteRows(copy, joined) == (try sqliteRows(original, storeJoin)))
        #expect(try sqliteRows(copy, joined).count == 4)

        // JSON Lines in one file: every line an object naming its table, decimals exact.
        let jsonl = path("shop.jsonl")
        #expect(try runSluice(["export", original, "--to", jsonl, "--entity", "Product"]).status == 0)
        let objects = try String(contentsOfFile: jsonl, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.count == 3 && objects.allSatisfy { $0?["table"] as? String == "products" })
        #expect(
            try String(contentsOfFile: jsonl, encoding: .utf8).contains(
                "\"sku\":\"W-100\",\"title\":\"Widget\",\"price\":19.99"))
    }

    @Test func mistakesAreUsageErrorsAndNothingIsOverwritten() throws {
        let directory = try TemporaryDirectory()
        #expect(
            try runSluice(["run", "Pipelines/shop.yaml"], environment: ["SLUICE_OUT": directory.url.path]).status == 0)
        let store = directory.url.appendingPathComponent("shop.sqlite").path
        let oneFile = try runSluice(["export", store, "--to", directory.url.appendingPathComponent("all.csv").path])
        #expect(oneFile.status == 2 && oneFile.stderr.contains("a CSV file holds one table"), "\(oneFile.stderr)")
        let unknown = try runSluice(["export", store, "--to", directory.url.path + "/x/", "--entity", "Invoice"])
        #expect(unknown.status == 2 && unknown.stderr.contains("no entity \"Invoice\""), "\(unknown.stderr)")
        let over = try runSluice(["export", store, "--to", store, "--format", "csv", "--entity", "Customer"])
        #expect(over.status == 2 && over.stderr.contains("overwrite the store"), "\(over.stderr)")
        #expect(try sqliteRows(store, "SELECT count(*) FROM customers") == [[.integer(3)]])
        let missing = try runSluice(["export", directory.url.path + "/none.sqlite", "--to", directory.url.path + "/y/"])
        #expect(missing.status == 3, "\(missing.stderr)")
    }
}
