import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 34, point 6: a re-run compares its records with the stored rows before they become objects
/// — orders that find their customer by key, order lines keyed by two attributes. Whatever it
/// skips or updates directly, the store it leaves is the one a first load of the same files makes,
/// and the counts say what changed.
@Suite struct RerunShortcutTests {
    /// Customers, orders (each with its customer, or none) and lines, as the night's files hold them.
    struct Night {
        var customers: [(id: Int, name: String)]
        var orders: [(id: Int, customer: Int?, quantity: Int, note: String)]
        var lines: [(order: Int, line: Int, sku: String, quantity: Int)]

        /// `count` orders, two lines for each of the first third.
        static func first(_ count: Int) -> Night {
            Night(
                customers: (1...50).map { ($0, "customer \($0)") },
                orders: (1...count).map {
                    ($0, $0 % 37 == 0 ? nil : $0 % 50 + 1, $0 % 7 + 1, $0 % 3 == 0 ? "" : "note \($0)")
                },
                lines: (1...count / 3).flatMap { order in (1...2).map { (order, $0, "sku-\(order * $0 % 17)", $0) } })
        }

        /// The next night: quantities changed, orders moved to another customer, given one they had
        /// none of, or left without theirs; 20 new orders; the lines of every tenth order changed.
        func next() -> Night {
            var night = self
            for index in night.orders.indices {
                let id = night.orders[index].id
                if id % 10 == 0 { night.orders[index].quantity += 100 }
                if id % 15 == 0 { night.orders[index].customer = (id + 7) % 50 + 1 }
                if id % 37 == 0 { night.orders[index].customer = 3 }
                if id % 41 == 0 { night.orders[index].customer = nil }
            }
            let last = orders.count
            night.orders += (last + 1...last + 20).map { ($0, $0 % 50 + 1, 1, "new") }
            for index in night.lines.indices where night.lines[index].order % 10 == 1 {
                night.lines[index].quantity = 9
            }
            return night
        }

        func write(to directory: TemporaryDirectory) throws {
            _ = try directory.file(
                "customers.csv",
                contents: "id,code,name\n" + customers.map { "\($0.id),C\($0.id),\($0.name)\n" }.joined())
            _ = try directory.file(
                "orders.csv",
                contents: "id,customer_id,customer_code,quantity,note\n"
                    + orders.map { order in
                        let customer = order.customer.map(String.init) ?? ""
                        let code = order.customer.map { "C\($0)" } ?? ""
                        return "\(order.id),\(customer),\(code),\(order.quantity),\(order.note)\n"
                    }.joined())
            _ = try directory.file(
                "lines.csv",
                contents: "order_no,line_no,sku,quantity\n"
                    + lines.map { "\($0.order),\($0.line),\($0.sku),\($0.quantity)\n" }.joined())
        }
    }

    /// - Parameter lookup: the orders' lookup key: `id: customer_id` (the key customers are stored
    ///   under, which a foreign key holds) or `code: customer_code` (another unique attribute).
    static func pipeline(
        _ directory: TemporaryDirectory, store: String, size: Int, contexts: Int, lookup: String
    ) throws -> URL {
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Customer:
                    attributes: { id: integer64!, code: string!, name: string! }
                    relationships: { orders: { destination: Order, toMany: true, inverse: customer } }
                    unique: [[id], [code]]
                  Order:
                    attributes: { id: integer64!, quantity: integer32!, note: string }
                    relationships: { customer: { destination: Customer, inverse: orders } }
                    unique: [[id]]
                  Line:
                    attributes: { orderNo: integer64!, lineNo: integer32!, sku: string!, quantity: integer32! }
                    unique: [[orderNo, lineNo]]
                """)
        return try directory.file(
            "\(store).yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { store: sqlite, path: \(store) }
                merge: object-trumps
                batch: { size: \(size), contexts: \(contexts) }
                sources:
                  - { name: customers, path: customers.csv, entity: Customer, key: [id],
                      fields: { id: id, code: code, name: name } }
                  - name: orders
                    path: orders.csv
                    entity: Order
                    key: [id]
                    fields: { id: id, quantity: quantity, note: note }
                    relationships: { customer: { entity: Customer, key: { \(lookup) } } }
                  - name: lines
                    path: lines.csv
                    entity: Line
                    key: [order_no, line_no]
                    fields: { orderNo: order_no, lineNo: line_no, sku: sku, quantity: quantity }
                """)
    }

    /// Every table by its keys (a line's own `id` differs between a re-run and a first load).
    static func tables(_ store: String) throws -> [[SQLiteValue]] {
        try sqliteRows(store, "SELECT id, code, name FROM Customer ORDER BY id")
            + sqliteRows(store, "SELECT id, quantity, note, customer_id FROM \"Order\" ORDER BY id")
            + sqliteRows(store, "SELECT orderNo, lineNo, sku, quantity FROM Line ORDER BY orderNo, lineNo")
    }

    /// Batches of 1 and 100 over 600 orders, of 5,000 over 12,000: the comparison starts once
    /// batch inserts have met stored keys, and applies to every batch after.
    /// Orders find their customers by the key the customers are stored under (the foreign key holds
    /// the very value) or by another unique attribute (the key is turned into the object first); an
    /// order without a customer has an empty field, an integer's or a text's alike.
    @Test(arguments: [
        (1, 1, "id: customer_id"), (100, 2, "code: customer_code"), (5000, 1, "code: customer_code"),
        (5000, 2, "id: customer_id"),
    ])
    func aReRunLeavesWhatAFirstLoadOfTheSameFilesLeaves(size: Int, contexts: Int, lookup: String) throws {
        let directory = try TemporaryDirectory()
        let nightly = try Self.pipeline(
            directory, store: "nightly.sqlite", size: size, contexts: contexts, lookup: lookup)
        let fresh = try Self.pipeline(directory, store: "fresh.sqlite", size: size, contexts: contexts, lookup: lookup)
        let first = Night.first(size == 5000 ? 12_000 : 600), second = first.next()
        let orders = first.orders.count, lines = first.lines.count
        try first.write(to: directory)
        let load = try runSluice(["run", nightly.path])
        #expect(load.status == 0, "\(load.stderr) \(load.stdout)")

        let same = try runSluice(["run", nightly.path])
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stdout.contains("Customer: 50 read, 0 inserted, 0 updated, 50 unchanged"), "\(same.stdout)")
        #expect(
            same.stdout.contains("Order: \(orders) read, 0 inserted, 0 updated, \(orders) unchanged"), "\(same.stdout)")
        #expect(
            same.stdout.contains("Line: \(lines) read, 0 inserted, 0 updated, \(lines) unchanged"), "\(same.stdout)")

        try second.write(to: directory)
        let rerun = try runSluice(["run", nightly.path])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        // The orders changed one way or another (an order moved and given more is one update).
        let changed = zip(first.orders, second.orders).filter { $0 != $1 }.count
        let changedLines = zip(first.lines, second.lines).filter { $0 != $1 }.count
        #expect(changed > orders / 10 && changedLines == lines / 10)
        #expect(
            rerun.stdout.contains(
                "Order: \(orders + 20) read, 20 inserted, \(changed) updated, \(orders - changed) unchanged"),
            "\(rerun.stdout)")
        #expect(
            rerun.stdout.contains(
                "Line: \(lines) read, 0 inserted, \(changedLines) updated, \(lines - changedLines) unchanged"),
            "\(rerun.stdout)")
        let fromScratch = try runSluice(["run", fresh.path])
        #expect(fromScratch.status == 0, "\(fromScratch.stderr)")
        let nightlyTables = try Self.tables(directory.url.appendingPathComponent("nightly.sqlite").path)
        #expect(nightlyTables == (try Self.tables(directory.url.appendingPathComponent("fresh.sqlite").path)))
        #expect(nightlyTables.count == 50 + orders + 20 + lines)
    }
}
