import Drivers
import Foundation
import TestSupport

@testable import Pipeline

/// Inputs of every reader in a temporary folder, with their model, for runs of the pipeline in this
/// process (`PipelineRunnerTests`). Five sources in this order:
///
/// - `products.sql` (SQL dump): 12 products; a 13th with a negative price (rejected: `minValue`), and
///   a row repeating `P-3` (rejected: `duplicate`, naming line 4).
/// - `orders.xml`: 40 orders with 1 to 3 nested lines each (80 lines), every one before its
///   customer (a later source): they all wait. Order 17's customer 999 never comes, order 22's
///   customer 5 is rejected: both rejected with their lines. Order 9's only line has quantity `x`.
/// - `customers.csv`: 30 customers; 5 has a bad email, and a repeat of id 3 after the 12th.
/// - `employees.csv`: 60 employees, most managed by someone later in the file; 20 and 21 manage each
///   other (a cycle); 33's manager 999 never comes, so 33 and everyone whose chain of managers
///   reaches it are rejected (22, 24, 25, 27, 28, 30, 31). Ids 1000 and 1001 are left out by `where`.
/// - `events.csv`: 50 events of an entity without a key (a batch imported twice shows as extra rows).
struct RunnerFixture {
    let directory: TemporaryDirectory

    static let customers = 30
    static let orders = 40
    static let employees = 60

    /// The customer each order names.
    static func customer(ofOrder number: Int) -> Int { number == 17 ? 999 : (number * 7) % customers + 1 }
    /// The lines of each order: (line number, product SKU, quantity as written).
    static func lines(ofOrder number: Int) -> [(number: Int, sku: String, quantity: String)] {
        (1...(number % 3 + 1)).map { line in
            (line, "P-\((number + line) % 12 + 1)", number == 9 ? "x" : "\(line + number % 4)")
        }
    }
    /// The manager each employee names (`nil`: none).
    static func manager(ofEmployee id: Int) -> Int? {
        switch id {
        case 20: return 21
        case 21: return 20
        case 33: return 999
        case 58...: return nil
        default: return id + 1 + id % 3
        }
    }
    /// The employees rejected: 33 and everyone whose chain of managers reaches it.
    static let rejectedEmployees: Set<Int> = [22, 24, 25, 27, 28, 30, 31, 33]

    init() throws {
        directory = try TemporaryDirectory()
        try write()
    }

    func path(_ name: String) -> String { directory.url.appendingPathComponent(name).path }

    /// A pipeline `<name>.yaml` over the inputs into `<name>.sqlite` (rejects: `<name>.rejects.jsonl`),
    /// loaded as `sluice run` loads it.
    func pipeline(
        _ name: String, size: Int, contexts: Int, commit: PipelineConfig.Commit = .atomic, maxErrors: Int = 100
    ) throws -> PipelineConfig {
        let file = try directory.file(
            "\(name).yaml",
            contents: """
                version: 1
                model: model.yaml
                target: { store: sqlite, path: \(name).sqlite, commit: \(commit.rawValue) }
                batch: { size: \(size), contexts: \(contexts) }
                merge: object-trumps
                errors: { max: \(maxErrors), rejects: \(name).rejects.jsonl }
                sources:
                  - { name: products, format: sqldump, path: products.sql, table: products, entity: Product,
                      key: [sku], fields: { sku: sku, title: title, price: price } }
                  - name: orders
                    format: xml
                    path: orders.xml
                    record: /orders/order
                    entity: Order
                    key: [number]
                    fields: { number: "@id", placedAt: { path: placed, date: iso8601 } }
                    relationships:
                      customer: { entity: Customer, key: { id: "@customer" }, missing: reject }
                    children:
                      - record: line
                        entity: OrderLine
                        parent: order
                        fields: { lineNo: "@no", quantity: "@qty" }
                        relationships:
                          product: { entity: Product, key: { sku: "@sku" }, missing: reject }
                  - { name: customers, path: customers.csv, entity: Customer, key: [id],
                      fields: { id: id, name: name, email: email } }
                  - name: employees
                    path: employees.csv
                    entity: Employee
                    key: [id]
                    fields: { id: id, name: name }
                    where: "id < 1000"
                    relationships:
                      manager: { entity: Employee, key: { id: manager_id }, missing: reject }
                  - { name: events, path: events.csv, entity: Event, mode: append, fields: { at: at, text: text } }
                """)
        return try PipelineFile.load(contentsOf: file, environment: [:])
    }

    /// Runs `config` in this process; the runner keeps the counts and rejects however it ends.
    @discardableResult
    static func run(
        _ config: PipelineConfig, dryRun: Bool = false, resume: Bool = false
    ) throws -> (PipelineRunner, RunReport) {
        let runner = PipelineRunner(config: config)
        var options = PipelineRunner.Options()
        options.dryRun = dryRun
        options.resume = resume
        return (runner, try runner.run(options))
    }

    /// The tables whose rows are kept under an internal key (`id`), not under a key attribute: the
    /// entities without one (`OrderLine`'s key is its order and number).
    static let internallyKeyed: Set<String> = ["OrderLine", "Event"]

    /// Every row of every table of the SQLite file at `path` (the store's metadata but its random
    /// `identifier` too), by table, each table's rows in the order of all their columns.
    /// - Parameter internalKeys: with `false`, the tables of `internallyKeyed` without their key.
    static func rows(of path: String, internalKeys: Bool = true) throws -> [String: [[SQLiteValue]]] {
        func names(_ sql: String) throws -> [String] {
            try sqliteRows(path, sql).map { row in
                guard case .text(let name) = row[0] else { return "" }
                return name
            }
        }
        var rows: [String: [[SQLiteValue]]] = [:]
        for table in try names("SELECT name FROM sqlite_master WHERE type = 'table'") {
            var columns = try names("SELECT name FROM pragma_table_info('\(table)') ORDER BY cid").map { "\"\($0)\"" }
            if !internalKeys && internallyKeyed.contains(table) { columns.removeFirst() }
            let list = columns.joined(separator: ", ")
            let skip = table == "_sluice_metadata" ? " WHERE key <> 'identifier'" : ""
            rows[table] = try sqliteRows(path, "SELECT \(list) FROM \"\(table)\"\(skip) ORDER BY \(list)")
        }
        return rows
    }

    /// The checkpoint an interrupted `commit: batches` run left in the store at `path`.
    static func checkpoint(in path: String) throws -> String? {
        let rows = try sqliteRows(path, "SELECT value FROM _sluice_metadata WHERE key = 'user.sluice.checkpoint'")
        guard case .text(let value)? = rows.first?.first else { return nil }
        return value
    }

    private func write() throws {
        _ = try directory.file("model.yaml", contents: Self.model)
        var dump = "CREATE TABLE products (sku TEXT PRIMARY KEY, title TEXT NOT NULL, price NUMERIC NOT NULL);\n"
        for n in 1...12 { dump += "INSERT INTO products VALUES ('P-\(n)', 'Product \(n)', \(n).25);\n" }
        dump +=
            "INSERT INTO products VALUES ('P-13', 'Bad price', -1);\nINSERT INTO products VALUES ('P-3', 'Again', 9);\n"
        _ = try directory.file("products.sql", contents: dump)
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<orders>\n"
        for n in 1...Self.orders {
            let day = String(format: "%02d", n % 28 + 1)
            xml +=
                "  <order id=\"\(n)\" customer=\"\(Self.customer(ofOrder: n))\">"
                + "<placed>2024-01-\(day)T10:00:00Z</placed>"
            for line in Self.lines(ofOrder: n) {
                xml += "<line no=\"\(line.number)\" sku=\"\(line.sku)\" qty=\"\(line.quantity)\"/>"
            }
            xml += "</order>\n"
        }
        _ = try directory.file("orders.xml", contents: xml + "</orders>\n")
        var customers = "id,name,email\n"
        for n in 1...Self.customers {
            customers += "\(n),Customer \(n),\(n == 5 ? "not-an-email" : "c\(n)@example.com")\n"
            if n == 12 { customers += "3,Again,again@example.com\n" }
        }
        _ = try directory.file("customers.csv", contents: customers)
        var employees = "id,name,manager_id\n"
        for id in 1...Self.employees { employees += "\(id),Employee \(id),\(Self.manager(ofEmployee: id) ?? 0)\n" }
        employees = employees.replacingOccurrences(of: ",0\n", with: ",\n") + "1000,Left out,\n1001,Left out too,\n"
        _ = try directory.file("employees.csv", contents: employees)
        _ = try directory.file("events.csv", contents: "at,text\n" + (0..<50).map { "\($0),event \($0)\n" }.joined())
    }

    static let model = """
        version: 1
        entities:
          Customer:
            attributes:
              id: integer64!
              name: string!
              email: { type: string, regex: "[^@ ]+@[^@ ]+" }
            relationships:
              orders: { destination: Order, toMany: true, inverse: customer }
            unique: [[id]]
          Product:
            attributes:
              sku: string!
              title: string!
              price: { type: decimal, optional: false, min: "0" }
            relationships:
              lines: { destination: OrderLine, toMany: true, inverse: product }
            unique: [[sku]]
          Order:
            attributes:
              number: integer64!
              placedAt: date!
            relationships:
              customer: { destination: Customer, inverse: orders, optional: false }
              lines: { destination: OrderLine, toMany: true, inverse: order, deleteRule: cascade }
            unique: [[number]]
          OrderLine:
            attributes:
              lineNo: integer16!
              quantity: { type: integer32, optional: false, min: 1 }
            relationships:
              order: { destination: Order, inverse: lines, optional: false }
              product: { destination: Product, inverse: lines, optional: false }
            unique: [[order, lineNo]]
          Employee:
            attributes:
              id: integer64!
              name: string!
            relationships:
              manager: { destination: Employee, inverse: reports }
              reports: { destination: Employee, toMany: true, inverse: manager }
            unique: [[id]]
          Event:
            attributes:
              at: integer64!
              text: string!
        """
}
