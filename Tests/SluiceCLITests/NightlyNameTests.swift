import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 34, names and output places: every name a user writes is checked, as the attribute or as
/// the input spells the column; output folders are settled before anything is read.
@Suite struct NightlyNameTests {
    static let invoices = "Invoice No,CustomerID,Total\nA-1,C1,10.5\nA-2,C2,7\nA-3,C1,3.25\n"

    /// `--key` as the file spells the column (`Invoice No`, `CustomerID`) or as the attribute
    /// (`invoiceNo`): the key is used, so a second run of the same file changes nothing.
    @Test(arguments: [("Invoice No", 1), ("CustomerID", 5000), ("invoiceNo", 5000), ("Total", 1)])
    func aKeyAsTheFileSpellsItIsUsed(key: String, batchSize: Int) throws {
        let directory = try TemporaryDirectory()
        let csv = key == "CustomerID" ? "Invoice No,CustomerID,Total\nA-1,C1,10.5\nA-2,C2,7\n" : Self.invoices
        let input = try directory.file("invoices.csv", contents: csv)
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let options = ["--to", store, "--key", key, "--batch-size", String(batchSize)]
        let first = try runSluice(["import", input.path] + options)
        #expect(first.status == 0, "\(first.stderr)")
        let rows = csv.split(separator: "\n").count - 1
        let again = try runSluice(["import", input.path] + options)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stdout.contains("\(rows) read, 0 inserted, 0 updated, \(rows) unchanged, 0 rejected"),
            "\(again.stdout)")
        #expect(try sqliteRows(store, "SELECT count(*) FROM invoices") == [[.integer(Int64(rows))]])
    }

    /// A `--key` that names nothing is refused before the store is made, listing the columns and
    /// the nearest name; so is one that names two sources' columns but no one source's both.
    @Test func aKeyThatNamesNothingIsRefused() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file("invoices.csv", contents: Self.invoices)
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let typo = try runSluice(["import", input.path, "--to", store, "--key", "Invoice Nr"])
        #expect(typo.status == 2, "\(typo.stderr)")
        #expect(
            typo.stderr.contains("--key \"Invoice Nr\" (did you mean \"Invoice No\"?) names no column or attribute of")
                && typo.stderr.contains("its columns: Invoice No, CustomerID, Total"), "\(typo.stderr)")
        let none = try runSluice(["import", input.path, "--to", store, "--key", "NoSuchColumn"])
        #expect(none.status == 2 && none.stderr.contains("--key \"NoSuchColumn\" names no column"), "\(none.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    /// A pipeline's `key:` may name the field as the input spells it; a name that is neither says
    /// the nearest.
    @Test(arguments: [1, 2])
    func aPipelineKeyMayNameTheField(contexts: Int) throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("invoices.csv", contents: Self.invoices)
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Invoice:
                    attributes: { number: string!, customer: string, total: decimal }
                    unique: [[number]]
                """)
        func pipeline(key: String) throws -> URL {
            try directory.file(
                "p.yaml",
                contents: """
                    version: 1
                    model: m.yaml
                    target: { store: sqlite, path: t.sqlite }
                    merge: object-trumps
                    batch: { size: 1, contexts: \(contexts) }
                    sources:
                      - { name: invoices, path: invoices.csv, entity: Invoice, key: [\(key)],
                          fields: { number: Invoice No, customer: CustomerID, total: Total } }
                    """)
        }
        let byField = try pipeline(key: "Invoice No")
        #expect(try runSluice(["run", byField.path, "--quiet"]).status == 0)
        let again = try runSluice(["run", byField.path])
        #expect(again.stdout.contains("3 read, 0 inserted, 0 updated, 3 unchanged"), "\(again.stdout)\(again.stderr)")
        let typo = try runSluice(["check", try pipeline(key: "numbr").path])
        #expect(typo.status == 2 && typo.stderr.contains("(did you mean \"number\"?)"), "\(typo.stderr)")
    }

    /// A rejects folder that does not exist yet (`--rejects dir/`, `errors.rejects: dir/`) is made
    /// before the run reads, and each run writes a file of its own there; a report path naming a
    /// folder is refused before anything is read.
    @Test func outputFoldersAreSettledBeforeReading() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file("people.csv", contents: "id,age\n1,3\n2,x\n")
        let model = try directory.file(
            "m.yaml", contents: "version: 1\nentities:\n  Person:\n    attributes: { id: integer64!, age: integer16 }\n"
        )
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let flag = directory.url.appendingPathComponent("flagged/rejects/").path + "/"
        let run = try runSluice([
            "import", input.path, "--to", store, "--model", model.path, "--entity", "Person", "--max-errors", "5",
            "--rejects", flag,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: flag).count == 1)
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { store: sqlite, path: p.sqlite }
                errors: { max: 5, rejects: nightly/ }
                sources:
                  - { name: people, path: people.csv, entity: Person, mode: append, fields: { id: id, age: age } }
                """)
        for _ in 0..<2 {
            #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
            Thread.sleep(forTimeInterval: 1.1)  // the files are named by the second the run starts
        }
        let nightly = directory.url.appendingPathComponent("nightly").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: nightly).count == 2)
        let file = try directory.file("taken", contents: "")
        let onFile = try runSluice(["run", pipeline.path, "--rejects", file.path + "/"])
        #expect(onFile.status == 2 && onFile.stderr.contains("is a file: give a folder"), "\(onFile.stderr)")
        let report = directory.url.appendingPathComponent("reports/").path + "/"
        let refused = try runSluice(["run", pipeline.path, "--report", report])
        #expect(refused.status == 2 && refused.stderr.contains("names a folder: give a file"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: report))
    }

    /// Without a key, `infer` and `import` say which column almost was one and why not — a repeat or
    /// a gap, at its lines — and what to do; a second import of the keyless file is refused.
    @Test func aKeyThatAlmostWasOneIsNamedWithItsLines() throws {
        let directory = try TemporaryDirectory()
        var csv = "Kundennummer,Name\n"
        for row in 1...20 { csv += "\(row == 12 ? 11 : row),Kunde \(row)\n" }
        let input = try directory.file("kunden.csv", contents: csv)
        let hint = "Kunden has no key: \"Kundennummer\" looks like one but repeats at lines 12 and 13"
        let infer = try runSluice(["infer", input.path])
        #expect(infer.status == 0 && infer.stderr.contains(hint), "\(infer.stderr)")
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let first = try runSluice(["import", input.path, "--to", store])
        #expect(first.status == 0 && first.stderr.contains(hint), "\(first.stderr)")
        #expect(first.stderr.contains("--key \"Kundennummer\" with --max-errors"), "\(first.stderr)")
        let second = try runSluice(["import", input.path, "--to", store])
        #expect(second.status == 2 && second.stderr.contains("has no key, and the target holds 20"), "\(second.stderr)")
        let gap = try directory.file("codes.csv", contents: "code,label\nA,a\n,b\nC,c\n")
        let empty = try runSluice(["infer", gap.path])
        #expect(empty.stderr.contains("\"code\" looks like one but is empty at line 3"), "\(empty.stderr)")
        // Both flaws of one column, each at its first line.
        let both = try directory.file("both.csv", contents: "code,label\nA,a\n,b\nA,c\n,d\nB,e\n")
        let twice = try runSluice(["infer", both.path])
        #expect(
            twice.stderr.contains(
                "\"code\" looks like one but is empty at line 3, and repeats at lines 2 and 4: --key \"code\" with "
                    + "--max-errors rejects the records without one and the repeats"), "\(twice.stderr)")
    }

    /// In `key:`, `find:` and a lookup's key, an attribute may be named as its column is (`column:
    /// CustomerID`, as `sluice infer` writes a model); a name that is neither says the nearest.
    @Test func anAttributeMayBeNamedAsItsColumn() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("customers.csv", contents: "CustomerID,Full Name\n1,Ann\n2,Bo\n")
        _ = try directory.file("orders.csv", contents: "Order No,cust\n10,1\n11,2\n")
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Customer:
                    attributes:
                      customerID: { type: integer64, optional: false, column: CustomerID }
                      fullName: { type: string, column: Full Name }
                    relationships: { orders: { destination: Order, toMany: true, inverse: customer } }
                    unique: [[customerID]]
                  Order:
                    attributes: { orderNo: { type: integer64, optional: false, column: Order No } }
                    relationships: { customer: { destination: Customer, inverse: orders } }
                    unique: [[orderNo]]
                """)
        func pipeline(_ lookupKey: String) throws -> URL {
            try directory.file(
                "p.yaml",
                contents: """
                    version: 1
                    model: m.yaml
                    target: { store: sqlite, path: t.sqlite }
                    merge: object-trumps
                    sources:
                      - { name: customers, path: customers.csv, entity: Customer, key: [CustomerID],
                          fields: { customerID: CustomerID, fullName: Full Name } }
                      - { name: orders, path: orders.csv, entity: Order, key: [Order No], fields: { orderNo: Order No },
                          relationships: { customer: { entity: Customer, key: { \(lookupKey): cust } } } }
                    """)
        }
        let good = try pipeline("CustomerID")
        #expect(try runSluice(["run", good.path, "--quiet"]).status == 0)
        let again = try runSluice(["run", good.path])
        #expect(again.stdout.contains("Order: 2 read, 0 inserted, 0 updated, 2 unchanged"), "\(again.stdout)")
        let typo = try runSluice(["check", try pipeline("CustomerId").path])
        #expect(
            typo.status == 2
                && typo.stderr.contains("Customer has no attribute \"CustomerId\" (did you mean \"customerID\"?)"),
            "\(typo.stderr)")
    }

    /// A `--field` whose path matches nothing in the records is refused before the store is made,
    /// with the fields the records hold and the nearest.
    @Test func aFieldPathThatMatchesNothingIsRefused() throws {
        let directory = try TemporaryDirectory()
        let xml = try directory.file(
            "o.xml", contents: "<orders><order id=\"1\"><placed>2024-01-01</placed></order></orders>\n")
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let typo = try runSluice([
            "import", xml.path, "--record", "/orders/order", "--field", "number=@idd", "--field", "placed=placed",
            "--to", store,
        ])
        #expect(typo.status == 2, "\(typo.stderr)")
        #expect(
            typo.stderr.contains("--field number=@idd (did you mean @id?) matches nothing in the /orders/order records")
                && typo.stderr.contains("their fields: @id, placed"), "\(typo.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store))
        let good = try runSluice([
            "import", xml.path, "--record", "/orders/order", "--field", "number=@id", "--to", store,
        ])
        #expect(good.status == 0, "\(good.stderr)")
    }
}
