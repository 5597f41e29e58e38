import Drivers
import Foundation
import TestSupport
import Testing

/// `sluice import`: inferred models, CSV flags, XML fields, legacy dumps with foreign keys, another
/// program's database; and `sluice validate` finding what a stricter model forbids.
@Suite struct ImportCommandTests {
    @Test func aCSVWithItsDialectAsFlagsKeepsEveryValue() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file(
            "codes.csv", contents: "# exported 2024-10-01\n007;Bond;1.50;NULL\n0123;Q;2;2024-01-02\n42;M;-3.25;NULL\n")
        let store = directory.url.appendingPathComponent("codes.sqlite").path
        let result = try runSluice([
            "import", input.path, "--to", store, "--delimiter", ";", "--no-header", "--null", "NULL", "--comment", "#",
            "--save-pipeline", directory.url.appendingPathComponent("codes.yaml").path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Code: 3 read, 3 inserted"))
        // `007` and `0123` stay text; 1.50 is a decimal; NULL is null; the comment line is skipped; a
        // date without a time stays a calendar date.
        #expect(
            try sqliteRows(store, "SELECT field1, field2, field3, field4 FROM codes ORDER BY rowid") == [
                [.text("007"), .text("Bond"), .real(1.5), .null],
                [.text("0123"), .text("Q"), .integer(2), .text("2024-01-02")],
                [.text("42"), .text("M"), .real(-3.25), .null],
            ])
        let model = try String(contentsOf: directory.url.appendingPathComponent("codes.model.yaml"), encoding: .utf8)
        #expect(model.contains("field1: {type: string, optional: false}"))
        let inspect = try runSluice(["inspect", store])
        #expect(inspect.stdout.contains("(entity Code): 3 rows"), "\(inspect.stdout)")
    }

    /// A first record whose double quote never closes: sniffed, the file is read with double quotes
    /// as part of the values — said in a warning naming line 1; with `--quote '"'` it is exit 3
    /// naming line 1. A quote that opens and closes is no warning.
    @Test func aQuoteThatNeverClosesInTheFirstRecordIsSaid() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file("parts.csv", contents: "\"name,qty\nWidget,3\nBolt,5\n")
        let sniffed = try runSluice([
            "import", input.path, "--to", directory.url.appendingPathComponent("a.sqlite").path,
        ])
        #expect(sniffed.status == 0, "\(sniffed.stderr)")
        #expect(
            sniffed.stderr.contains(
                "parts.csv: the double quote at line 1, column 1 opens a field that is never closed, so the file is "
                    + "read with double quotes as part of the values"), "\(sniffed.stderr)")
        let strict = try runSluice([
            "import", input.path, "--to", directory.url.appendingPathComponent("b.sqlite").path, "--quote", "\"",
        ])
        #expect(strict.status == 3 && strict.stderr.contains("parts.csv:1:1: the quoted field"), "\(strict.stderr)")
        let fine = try directory.file("fine.csv", contents: "\"name\",qty\n\"Widget, large\",3\nBolt,5\n")
        let quiet = try runSluice(["import", fine.path, "--to", directory.url.appendingPathComponent("c.sqlite").path])
        #expect(quiet.status == 0 && !quiet.stderr.contains("never closed"), "\(quiet.stderr)")
    }

    /// The target's name says its type: `.xml` an XML store, `.bin` a binary one, `.sqlite`/`.db`
    /// or none SQLite; another extension is refused (exit 2, nothing written) unless `--store-type`
    /// (`convert`: `--to`) names the type.
    @Test func aTargetsExtensionSaysItsStoreType() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file("parts.csv", contents: "id,name\n1,bolt\n2,nut\n")
        func path(_ name: String) -> String { directory.url.appendingPathComponent(name).path }
        func head(_ name: String) throws -> String {
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: path(name))).prefix(15), as: UTF8.self)
        }
        let json = try runSluice(["import", input.path, "--to", path("parts.json")])
        #expect(
            json.status == 2 && json.stderr.contains(".json is not a store type Sluice writes"), "\(json.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("parts.json")))
        #expect(try runSluice(["import", input.path, "--to", path("parts.xml"), "--key", "id"]).status == 0)
        #expect(try head("parts.xml") == "<?xml version=\"")
        let again = try runSluice(["import", input.path, "--to", path("parts.xml"), "--key", "id"])
        #expect(again.status == 0 && again.stdout.contains("2 unchanged"), "\(again.stderr)")
        let named = try runSluice(["import", input.path, "--to", path("parts.json"), "--store-type", "sqlite"])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try head("parts.json") == "SQLite format 3")
        let convert = try runSluice(["convert", path("parts.xml"), path("copy.json")])
        #expect(convert.status == 2 && convert.stderr.contains("name the type with --to"), "\(convert.stderr)")
        #expect(try runSluice(["convert", path("parts.xml"), path("copy.bin")]).status == 0)
        #expect(try head("copy.bin").hasPrefix("SLUICEBS"))
    }

    @Test func aKeyMakesReimportsUpdates() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file("people.csv", contents: "code,name\nA1,Ada\nB2,Boris\n")
        let store = directory.url.appendingPathComponent("people.sqlite").path
        #expect(try runSluice(["import", input.path, "--to", store, "--key", "code"]).status == 0)
        try "code,name\nA1,Ada L.\nB2,Boris\nC3,Cleo\n".write(to: input, atomically: true, encoding: .utf8)
        let again = try runSluice(["import", input.path, "--to", store])  // the stored model, with its key
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stdout.contains("People: 3 read, 1 inserted, 1 updated, 1 unchanged, 0 rejected"), "\(again.stdout)")
        #expect(
            try sqliteRows(store, "SELECT code, name FROM people ORDER BY code") == [
                [.text("A1"), .text("Ada L.")], [.text("B2"), .text("Boris")], [.text("C3"), .text("Cleo")],
            ])
    }

    @Test func anXMLFeedWithNamedFields() throws {
        let directory = try TemporaryDirectory()
        let store = directory.url.appendingPathComponent("orders.sqlite").path
        let result = try runSluice([
            "import", repositoryRoot.path + "/SampleData/orders.xml", "--record", "/orders/order", "--entity",
            "Purchase",
            "--field", "number=@id", "--field", "placed=placed", "--to", store,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        // The entity given names the table too (as for CSV).
        #expect(
            try sqliteRows(store, "SELECT number FROM purchase ORDER BY number") == [
                [.integer(1001)], [.integer(1002)], [.integer(1003)],
            ])
        let missing = try runSluice(["import", repositoryRoot.path + "/SampleData/orders.xml", "--to", store])
        #expect(missing.status == 2 && missing.stderr.contains("--record"))
    }

    /// A dump's tables with their foreign keys, children before parents, into another program's
    /// database: its table is untouched, ours go next to it.
    @Test func aLegacyDumpIntoAnotherProgramsDatabase() throws {
        let directory = try TemporaryDirectory()
        let store = directory.url.appendingPathComponent("app.db").path
        let app = try SQLiteConnection(path: store, mode: .readWriteCreate)
        try app.execute(
            "CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT); INSERT INTO settings VALUES ('theme', 'dark')")
        let dump = try String(
            contentsOf: repositoryRoot.appendingPathComponent("SampleData/legacy-orders.sql"), encoding: .utf8
        )
        .replacingOccurrences(of: "REFERENCES products(code)", with: "")
        let input = try directory.file("legacy.sql", contents: dump)
        let result = try runSluice([
            "import", input.path, "--to", store, "--max-errors", "2", "--save-pipeline",
            directory.url.appendingPathComponent("legacy.yaml").path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        // Order 9003's customer 1 is not in the dump: the order and its line are rejected.
        #expect(result.stdout.contains("2 rejected records"), "\(result.stdout)")
        #expect(try sqliteRows(store, "SELECT * FROM settings") == [[.text("theme"), .text("dark")]])
        let lines = try sqliteRows(
            store,
            """
            SELECT o.id, c.name, l.line_no FROM order_lines l JOIN orders o ON o.id = l.order_id JOIN customers c ON \
            c.id = o.customer_id ORDER BY 1, 3
            """)
        #expect(
            lines == [
                [.integer(9001), .text("Grace Hopper"), .integer(1)],
                [.integer(9001), .text("Grace Hopper"), .integer(2)],
                [.integer(9002), .text("Édouard Manet"), .integer(1)],
            ])
        let pipeline = try String(contentsOf: directory.url.appendingPathComponent("legacy.yaml"), encoding: .utf8)
        #expect(pipeline.contains("shared: true"))
        #expect(
            pipeline.contains("order: {entity: Order, key: {id: order_id}, missing: reject}"),
            "\(pipeline)")
        // Again: the stored model's keys (an order line by order and number) meet every row.
        let again = try runSluice(["import", input.path, "--to", store, "--max-errors", "2"])
        #expect(
            again.stdout.contains("OrderLine: 4 read, 0 inserted, 0 updated, 3 unchanged, 1 rejected"),
            "\(again.stdout)\(again.stderr)")
        #expect(try sqliteRows(store, "SELECT * FROM settings") == [[.text("theme"), .text("dark")]])
    }

    /// `validate` over a store another program broke: every rule, counted, with examples.
    @Test func validateListsWhatTheStoreBreaks() throws {
        let directory = try TemporaryDirectory()
        #expect(
            try runSluice(["run", "Pipelines/shop.yaml"], environment: ["SLUICE_OUT": directory.url.path]).status == 0)
        let store = directory.url.appendingPathComponent("shop.sqlite").path
        let other = try SQLiteConnection(path: store, mode: .readWriteCreate)
        try other.execute(
            """
            UPDATE order_lines SET quantity = 0 WHERE line_no = 2;
            DELETE FROM order_lines WHERE order_id = 1002;
            DROP INDEX customers_unique_email;
            UPDATE customers SET country = 'IRL', email = 'ada@example.com' WHERE customer_id = 3;
            """)
        let result = try runSluice(["validate", store])
        #expect(result.status == 1)
        #expect(result.stdout.contains("4 rules broken"), "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "OrderLine.quantity [minValue]: quantity must be at least 1; 1 object breaks it (e.g. OrderLine "
                    + "order=Order number=1001, lineNo=2)"
            ), "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "Order.lines [minCount]: lines must have at least 1 object; 1 object breaks it (e.g. Order number=1002)"
            ), "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "Customer.country [maxLength]: country must be at least 2 and at most 2 characters long; 1 object "
                    + "breaks it"
            ), "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "Customer.email [unique]: email must be unique; 2 objects break it (e.g. email=\"ada@example.com\" (2 "
                    + "objects))"
            ), "\(result.stdout)")
        let notAStore = try directory.file("x.txt", contents: "hello")
        #expect(try runSluice(["validate", notAStore.path]).status == 3)
    }

    /// Required values are looked for where the table lets them be missing: a store whose table
    /// another program rebuilt without NOT NULL (the check is skipped only for columns declaring it).
    @Test func validateFindsMissingRequiredValuesWhereTheTableAllowsThem() throws {
        let directory = try TemporaryDirectory()
        #expect(
            try runSluice(["run", "Pipelines/shop.yaml"], environment: ["SLUICE_OUT": directory.url.path]).status == 0)
        let store = directory.url.appendingPathComponent("shop.sqlite").path
        #expect(try runSluice(["validate", store]).status == 0)
        let declared = try sqliteRows(store, "SELECT sql FROM sqlite_master WHERE name = 'customers'")
        guard case .text(let sql)? = declared.first?.first else {
            Issue.record("no customers table: \(declared)")
            return
        }
        #expect(sql.contains("\"name\" TEXT NOT NULL"), "\(sql)")
        let other = try SQLiteConnection(path: store, mode: .readWriteCreate)
        try other.execute(
            """
            PRAGMA foreign_keys = OFF;
            BEGIN;
            \(sql.replacingOccurrences(of: "\"customers\"", with: "\"customers_new\"")
                .replacingOccurrences(of: "\"name\" TEXT NOT NULL", with: "\"name\" TEXT"));
            INSERT INTO customers_new SELECT * FROM customers;
            DROP TABLE customers;
            ALTER TABLE customers_new RENAME TO customers;
            UPDATE customers SET name = NULL WHERE customer_id = 3;
            COMMIT;
            """)
        let result = try runSluice(["validate", store])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains(
                "Customer.name [required]: name is required; 1 object breaks it (e.g. Customer id=3)"),
            "\(result.stdout)")
    }

    /// The final stage: orders without the lines their model requires fail the run; the target stays as it was.
    @Test func theFinalStageRefusesAGraphThatBreaksTheModel() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                model: \(repositoryRoot.path)/SampleData/shop.model.yaml
                target: { store: sqlite, path: out/shop.sqlite }
                sources:
                  - { name: customers, path: \(repositoryRoot.path)/SampleData/customers.csv, entity: Customer,
                      key: [id], fields: { id: customer_id, name: name, email: email } }
                  - name: orders
                    format: xml
                    path: \(repositoryRoot.path)/SampleData/orders.xml
                    record: /orders/order
                    entity: Order
                    fields: { number: "@id", placedAt: { path: placed, date: iso8601 } }
                    relationships: { customer: { entity: Customer, key: { id: "@customer" } } }
                """)
        let result = try runSluice(["run", pipeline.path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stderr.contains("Order.lines [minCount]: lines must have at least 1 object; 3 objects break it"),
            "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("out/shop.sqlite").path))
    }
}
