import Drivers
import Foundation
import TestSupport
import Testing

/// `sluice import` of ordinary exports keeps every record and value: what a reader cannot read as a
/// record is a rejected record, and every run's counts add up.
@Suite struct OneOffImportTests {
    /// The counts of an import's report line for `entity`: read, inserted, updated, unchanged, rejected.
    static func counts(_ stdout: String, _ entity: String) -> [Int]? {
        guard
            let line = stdout.split(separator: "\n").first(where: {
                $0.contains("\(entity): ") && $0.contains(" read, ")
            })
        else { return nil }
        return line.split(separator: ":", maxSplits: 1)[1].split(separator: ",").compactMap {
            Int($0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0])
        }
    }

    /// Read = inserted + updated + unchanged + rejected (+ left out by `where`, when shown).
    static func addsUp(_ counts: [Int]?) -> Bool {
        guard let counts, counts.count == 5 || counts.count == 6 else { return false }
        return counts[0] == counts.dropFirst().reduce(0, +)
    }

    @Test func aShortOrLongRowIsARejectedRecordWithItsCounts() throws {
        let directory = try TemporaryDirectory()
        let csv = try directory.file(
            "r.csv", contents: "id,name,city\n1,Ann,Oslo\n2,Bob\n3,Cy,Rome\n4,Di,Lima,extra\n5,Ed,Kyiv\n")
        let store = directory.url.appendingPathComponent("r.sqlite").path
        let rejectsPath = directory.url.appendingPathComponent("r.jsonl").path
        let refused = try runSluice(["import", csv.path, "--to", store])
        #expect(refused.status == 1, "no rejects allowed: \(refused.stdout)\(refused.stderr)")
        let result = try runSluice(["import", csv.path, "--to", store, "--max-errors", "2", "--rejects", rejectsPath])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let counts = Self.counts(result.stdout, "R")
        #expect(counts == [5, 3, 0, 0, 2] && Self.addsUp(counts), "\(result.stdout)")
        let rejects = try String(contentsOfFile: rejectsPath, encoding: .utf8)
        #expect(rejects.contains("the record has 2 fields, the header has 3") && rejects.contains("\"line\":3"))
        #expect(rejects.contains("the record has 4 fields, the header has 3") && rejects.contains("\"line\":5"))
        #expect(try sqliteRows(store, "SELECT id FROM R ORDER BY 1") == [[.integer(1)], [.integer(3)], [.integer(5)]])
    }

    /// A header and no records is an entity with no objects; repeated header names each get a column.
    @Test func aHeaderOnlyFileAndRepeatedHeaderNamesImport() throws {
        let directory = try TemporaryDirectory()
        let empty = try directory.file("empty.csv", contents: "id,name\n")
        let store = directory.url.appendingPathComponent("e.sqlite").path
        let result = try runSluice(["import", empty.path, "--to", store])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(try sqliteRows(store, "SELECT name FROM pragma_table_info('empty') ORDER BY cid").count >= 2)
        #expect(try sqliteRows(store, "SELECT count(*) FROM empty") == [[.integer(0)]])

        let blank = try directory.file("blank.csv", contents: "id,,x\n1,a,b\n")
        let blankStore = directory.url.appendingPathComponent("b.sqlite").path
        #expect(try runSluice(["import", blank.path, "--to", blankStore]).status == 0, "an empty header name")
        #expect(try sqliteRows(blankStore, "SELECT \"column 2\" FROM blank") == [[.text("a")]])

        let twice = try directory.file("twice.csv", contents: "id,name,name,Name\n1,a,b,c\n")
        let model = try runSluice(["infer", twice.path])
        #expect(
            model.status == 0 && model.stdout.contains("name2") && model.stdout.contains("name3"), "\(model.stdout)")
        let other = directory.url.appendingPathComponent("t.sqlite").path
        let imported = try runSluice(["import", twice.path, "--to", other])
        #expect(imported.status == 0, "\(imported.stdout)\(imported.stderr)")
        #expect(
            try sqliteRows(other, "SELECT id, name, name_2, Name_3 FROM twice") == [
                [.integer(1), .text("a"), .text("b"), .text("c")]
            ])
    }

    /// An empty value is an absent one for inference and import alike: an XML element with no text
    /// and a quoted empty CSV field in a number column import as NULL, not as rejects.
    @Test func emptyValuesAreAbsentForInferenceAndImportAlike() throws {
        let directory = try TemporaryDirectory()
        let xml = try directory.file(
            "items.xml",
            contents: """
                <items><item><id>1</id><qty>3</qty></item><item><id>2</id><qty></qty></item>
                <item><id>3</id><qty/></item><item><id>4</id><qty>5</qty></item></items>
                """)
        let store = directory.url.appendingPathComponent("x.sqlite").path
        let result = try runSluice(["import", xml.path, "--record", "/items/item", "--to", store])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(Self.counts(result.stdout, "Item") == [4, 4, 0, 0, 0], "\(result.stdout)")
        #expect(
            try sqliteRows(store, "SELECT id, qty FROM items ORDER BY 1") == [
                [.integer(1), .integer(3)], [.integer(2), .null], [.integer(3), .null], [.integer(4), .integer(5)],
            ])
        let csv = try directory.file("n.csv", contents: "id,n,note\n1,\"\",\"\"\n2,5,x\n")
        let other = directory.url.appendingPathComponent("n.sqlite").path
        let imported = try runSluice(["import", csv.path, "--to", other])
        #expect(imported.status == 0, "\(imported.stdout)\(imported.stderr)")
        #expect(
            try sqliteRows(other, "SELECT id, n, note FROM n ORDER BY 1") == [
                [.integer(1), .null, .text("")], [.integer(2), .integer(5), .text("x")],
            ])
    }

    /// SQL's timestamps (`2024-01-31 12:30:00`, UTC) are dates for inference and import alike.
    @Test func sqlTimestampsAreDates() throws {
        let directory = try TemporaryDirectory()
        let csv = try directory.file("t.csv", contents: "id,at\n1,2024-01-31 12:30:00\n2,2024-02-29 00:00:01.5\n")
        #expect(try runSluice(["infer", csv.path]).stdout.contains("at: {type: date"))
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let result = try runSluice(["import", csv.path, "--to", store])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(
            try sqliteRows(store, "SELECT id, at, typeof(at) FROM t ORDER BY 1") == [
                [.integer(1), .text("2024-01-31 12:30:00"), .text("text")],
                [.integer(2), .text("2024-02-29 00:00:01.500"), .text("text")],
            ])
    }

    /// A key is inferred from a column that says it identifies (`customer_no`), so a re-import
    /// changes nothing; without one, a re-import into a store holding its rows is refused (it would
    /// add the records again), unless `--mode append` says that is meant.
    @Test func keysAreInferredAndAKeylessReimportIsRefused() throws {
        let directory = try TemporaryDirectory()
        let keyed = try directory.file("k.csv", contents: "customer_no,name\n10,Ann\n11,Bob\n12,Cy\n")
        let store = directory.url.appendingPathComponent("k.sqlite").path
        #expect(try runSluice(["import", keyed.path, "--to", store]).status == 0)
        let again = try runSluice(["import", keyed.path, "--to", store])
        #expect(Self.counts(again.stdout, "K") == [3, 0, 0, 3, 0], "\(again.stdout)")
        #expect(!again.stderr.contains("has no key"))

        let plain = try directory.file("n.csv", contents: "name,city\nAnn,Oslo\nBob,Rome\n")
        let other = directory.url.appendingPathComponent("n.sqlite").path
        let first = try runSluice(["import", plain.path, "--to", other])
        #expect(first.status == 0 && !first.stderr.contains("has no key"), "\(first.stderr)")
        let before = try sqliteRows(other, "SELECT count(*) FROM n")
        let second = try runSluice(["import", plain.path, "--to", other])
        #expect(second.status == 2, "\(second.stderr)")
        #expect(
            second.stderr.contains("source N has no key, and the target holds 2 N objects already")
                && second.stderr.contains("--mode append"), "\(second.stderr)")
        #expect(try sqliteRows(other, "SELECT count(*) FROM n") == before)
        let appended = try runSluice(["import", plain.path, "--to", other, "--mode", "append"])
        #expect(appended.status == 0 && Self.counts(appended.stdout, "N") == [2, 2, 0, 0, 0], "\(appended.stderr)")
    }

    /// XML namespaces: prefixes bound on the command line (`--namespace p=URI`) or in a pipeline
    /// (`namespaces:`); a path without prefixes matches local names in any namespace; an unbound
    /// prefix is a usage error naming the way to bind it.
    @Test func namespacesAreBoundOnTheCommandLineAndInPipelines() throws {
        let directory = try TemporaryDirectory()
        let xml = try directory.file(
            "ns.xml",
            contents: """
                <?xml version="1.0"?>
                <p:orders xmlns:p="urn:x:orders" xmlns="urn:x:default"><p:order id="1" p:code="A">\
                <p:total>3.5</p:total></p:order><p:order id="2"><p:total>4</p:total></p:order>\
                <other:order xmlns:other="urn:x:other" id="9"/></p:orders>
                """)
        let store = directory.url.appendingPathComponent("o.sqlite").path
        let bound = try runSluice([
            "import", xml.path, "--record", "/p:orders/p:order", "--namespace", "p=urn:x:orders", "--to", store,
        ])
        #expect(bound.status == 0, "\(bound.stdout)\(bound.stderr)")
        #expect(
            try sqliteRows(store, "SELECT id, total, code FROM orders ORDER BY 1") == [
                [.integer(1), .real(3.5), .text("A")], [.integer(2), .integer(4), .null],
            ], "only the orders of urn:x:orders; a prefixed attribute by its local name")
        let unbound = try runSluice(["infer", xml.path, "--record", "/p:orders/p:order"])
        #expect(unbound.status == 2 && unbound.stderr.contains("--namespace p=URI"), "\(unbound.stderr)")
        let local = try runSluice(["infer", xml.path, "--record", "/orders/order"])
        #expect(local.status == 0 && local.stdout.contains("total: {type: decimal"), "\(local.stdout)\(local.stderr)")
        _ = try directory.file(
            "m.yaml",
            contents: "version: 1\nentities:\n  Order:\n    attributes: { id: integer64!, total: decimal }\n"
                + "    unique: [[id]]\n")
        _ = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { store: sqlite, path: "p.sqlite" }
                sources:
                  - name: orders
                    format: xml
                    path: ns.xml
                    record: /p:orders/p:order
                    namespaces: { p: "urn:x:orders" }
                    entity: Order
                    key: [id]
                    fields: { id: "@id", total: "p:total" }
                """)
        let run = try runSluice(["run", directory.url.appendingPathComponent("p.yaml").path])
        #expect(run.status == 0 && run.stdout.contains("Order: 2 read, 2 inserted"), "\(run.stdout)\(run.stderr)")
    }

    /// Repeated elements inside a wrapper (`<variants><variant/>…</variants>`) are a child entity,
    /// every one kept; without `--record`, the repeating paths are proposed.
    @Test func repeatedChildrenInAWrapperAreAChildEntity() throws {
        let directory = try TemporaryDirectory()
        let xml = try directory.file(
            "p.xml",
            contents: """
                <products><product id="1"><name>A</name><variants><variant sku="a1" stock="3"/>\
                <variant sku="a2" stock="5"/></variants></product><product id="2"><name>B</name><variants>\
                <variant sku="b1" stock="1"/></variants></product></products>
                """)
        let store = directory.url.appendingPathComponent("p.sqlite").path
        let result = try runSluice(["import", xml.path, "--record", "/products/product", "--to", store])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(Self.counts(result.stdout, "Variant") == [3, 3, 0, 0, 0], "\(result.stdout)")
        #expect(
            try sqliteRows(
                store,
                "SELECT p.id, v.sku, v.stock FROM variants v JOIN products p ON p.id = v.product_id "
                    + "ORDER BY 2") == [
                    [.integer(1), .text("a1"), .integer(3)], [.integer(1), .text("a2"), .integer(5)],
                    [.integer(2), .text("b1"), .integer(1)],
                ])
        let again = try runSluice(["import", xml.path, "--record", "/products/product", "--to", store])
        #expect(Self.counts(again.stdout, "Variant") == [3, 0, 0, 3, 0], "\(again.stdout)")
        // Repeated elements holding text: their text is the child's value; without a key, a re-import
        // finds them again by their place under their item.
        let tags = try directory.file(
            "t.xml", contents: "<items><item id=\"1\"><tags><tag>x</tag><tag>y</tag></tags></item></items>")
        let tagStore = directory.url.appendingPathComponent("t.sqlite").path
        #expect(try runSluice(["import", tags.path, "--record", "/items/item", "--to", tagStore]).status == 0)
        #expect(try sqliteRows(tagStore, "SELECT tag FROM tags ORDER BY 1") == [[.text("x")], [.text("y")]])
        let tagsAgain = try runSluice(["import", tags.path, "--record", "/items/item", "--to", tagStore])
        #expect(Self.counts(tagsAgain.stdout, "Tag") == [2, 0, 0, 2, 0], "\(tagsAgain.stdout)\(tagsAgain.stderr)")
        #expect(try sqliteRows(tagStore, "SELECT tag FROM tags ORDER BY 1") == [[.text("x")], [.text("y")]])
        for command in ["infer", "import"] {
            let asked = try runSluice([command, xml.path] + (command == "import" ? ["--to", store] : []))
            #expect(asked.status == 2, "\(command)")
            #expect(
                asked.stderr.contains("/products/product (2 seen)")
                    && asked.stderr.contains("/products/product/variants/variant (3 seen)"), "\(asked.stderr)")
        }
    }

    /// An escape character at the very end of the input escapes nothing: an input error with its
    /// position (exit 3), not a character dropped.
    @Test func anEscapeAtTheEndOfTheInputIsAnError() throws {
        let directory = try TemporaryDirectory()
        let csv = try directory.file("e.csv", contents: "id,v\n1,a\n2,z\\")
        let result = try runSluice([
            "import", csv.path, "--escape", "\\", "--to", directory.url.appendingPathComponent("e.sqlite").path,
        ])
        #expect(result.status == 3, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("e.csv:3:4") && result.stderr.contains("escapes nothing"), "\(result.stderr)")
    }

    /// A new file into an existing store: the store's model grows by its entity, and a file with a
    /// column more by an optional attribute (the stored rows untouched, the model recorded), in either
    /// layout; re-imports change nothing.
    @Test(arguments: ["plain", "graph"])
    func aNewFileAddsItsEntityToAnExistingStore(layout: String) throws {
        let directory = try TemporaryDirectory()
        let customers = try directory.file("customers.csv", contents: "id,name\n1,Ann\n2,Bob\n").path
        let products = try directory.file("products.csv", contents: "sku,title\nA-1,Widget\nB-2,Gadget\n").path
        let store = directory.url.appendingPathComponent("s.sqlite").path
        #expect(try runSluice(["import", customers, "--to", store, "--layout", layout]).status == 0)
        let grown = try runSluice(["import", products, "--to", store])
        #expect(grown.status == 0, "\(grown.stdout)\(grown.stderr)")
        #expect(Self.counts(grown.stdout, "Product") == [2, 2, 0, 0, 0], "\(grown.stdout)")
        for (input, entity) in [(customers, "Customer"), (products, "Product")] {
            let again = try runSluice(["import", input, "--to", store])
            #expect(Self.counts(again.stdout, entity) == [2, 0, 0, 2, 0], "\(again.stdout)\(again.stderr)")
        }
        let inspect = try runSluice(["inspect", store])
        #expect(inspect.stdout.contains("Customer") && inspect.stdout.contains("Product"), "\(inspect.stdout)")
        // A column the stored entity lacks: an optional attribute, the stored rows without a value.
        let wider = try directory.file(
            "customers2.csv", contents: "id,name,phone,since\n2,Bob,555-1,2024-01-31\n3,Cy,,2024-02-01\n"
        ).path
        let widened = try runSluice(["import", wider, "--entity", "Customer", "--to", store])
        #expect(widened.status == 0, "\(widened.stdout)\(widened.stderr)")
        #expect(Self.counts(widened.stdout, "Customer") == [2, 1, 1, 0, 0], "\(widened.stdout)")
        #expect(
            try sqliteRows(store, "SELECT name, phone FROM \(layout == "plain" ? "customers" : "Customer") ORDER BY 1")
                == [[.text("Ann"), .null], [.text("Bob"), .text("555-1")], [.text("Cy"), .null]])
        let validate = try runSluice(["validate", store])
        #expect(validate.status == 0, "\(validate.stdout)\(validate.stderr)")
    }

    /// The accounting of every run: per entity, read = inserted + updated + unchanged + rejected, and
    /// the rejects file holds one line per rejected record, each with its reasons — over runs that
    /// reject for every cause (a short row, a bad value, a repeated key, a taken email, a missing
    /// parent), first into an empty store and then again into the filled one.
    @Test func everyRunsCountsAddUpAndEveryRejectIsInTheFile() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("m.yaml", contents: OtherKeyTests.model)
        let csv = try directory.file(
            "c.csv",
            contents: "id,email,name\n1,a@x,Ann\n2,b@x\n3,a@x,Dup\n1,c@x,Again\nfour,d@x,Di\n5,e@x,Ed\n6,f@x,Fi,extra\n"
        )
        let store = directory.url.appendingPathComponent("c.sqlite").path
        for run in 0..<2 {
            let rejectsPath = directory.url.appendingPathComponent("r\(run).jsonl").path
            let result = try runSluice([
                "import", csv.path, "--model", directory.url.appendingPathComponent("m.yaml").path, "--entity",
                "Customer", "--key", "id", "--to", store, "--max-errors", "10", "--rejects", rejectsPath,
            ])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            let counts = Self.counts(result.stdout, "Customer")
            #expect(Self.addsUp(counts) && counts?[0] == 7, "run \(run): \(result.stdout)")
            let lines = try String(contentsOfFile: rejectsPath, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == counts?[4], "run \(run): one line per rejected record")
            for line in lines {
                let reject = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                let failures = reject?["failures"] as? [[String: Any]] ?? []
                #expect(!failures.isEmpty && failures.allSatisfy { ($0["message"] as? String)?.isEmpty == false })
            }
            // The first run: 2 inserted (1, 5); rejected: the short row, the taken email, id 1 again,
            // "four", the long row. The second: the same rejects, 1 and 5 unchanged.
            #expect(counts == (run == 0 ? [7, 2, 0, 0, 5] : [7, 0, 0, 2, 5]), "run \(run): \(result.stdout)")
        }
    }

    /// A file that is not valid UTF-8 is read as windows-1252 only with a warning naming where the
    /// first invalid byte is; with `--encoding utf-8` that record is rejected, naming the place.
    @Test func anEncodingGuessIsSaid() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("l.csv")
        try Data("id,name\n1,a".utf8 + [0xFF] + Data("b\n2,c\n".utf8)).write(to: path)
        let store = directory.url.appendingPathComponent("l.sqlite").path
        let guessed = try runSluice(["import", path.path, "--to", store])
        #expect(guessed.status == 0, "\(guessed.stderr)")
        #expect(
            guessed.stderr.contains("is not valid UTF-8 (the first invalid byte at line 2, column 4)")
                && guessed.stderr.contains("windows-1252"), "\(guessed.stderr)")
        #expect(try sqliteRows(store, "SELECT name FROM l ORDER BY id") == [[.text("a\u{FF}b")], [.text("c")]])
        let rejects = directory.url.appendingPathComponent("s.jsonl").path
        let strict = try runSluice([
            "import", path.path, "--encoding", "utf-8", "--to", directory.url.appendingPathComponent("s.sqlite").path,
            "--rejects", rejects,
        ])
        #expect(strict.status == 1, "\(strict.stderr)")
        let line = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(line.contains("invalid UTF-8") && line.contains("\"line\":2"), "\(line)")
    }

    /// Standard input (`-`) is an input like a file: read twice (inference, then the import) from a
    /// copy, its records' places named `-`, nothing left behind.
    @Test func standardInputIsAnInput() throws {
        let directory = try TemporaryDirectory()
        let store = directory.url.appendingPathComponent("s.sqlite").path
        let result = try runSluice(
            ["import", "-", "--format", "csv", "--entity", "Person", "--to", store],
            input: Data("id,name\n1,Ann\n2,Bob\n".utf8))
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(Self.counts(result.stdout, "Person") == [2, 2, 0, 0, 0], "\(result.stdout)")
        let rejects = directory.url.appendingPathComponent("r.jsonl").path
        let ragged = try runSluice(
            [
                "import", "-", "--format", "csv", "--to", directory.url.appendingPathComponent("r.sqlite").path,
                "--rejects", rejects, "--max-errors", "1",
            ],
            input: Data("id,name\n1,Ann\n2\n".utf8))
        #expect(ragged.status == 0, "\(ragged.stderr)")
        #expect(try String(contentsOfFile: rejects, encoding: .utf8).contains("\"file\":\"-\""))
    }

    /// An error in the first record is what it is one record later: a rejected record with its place
    /// (and `infer` says it left it out), never a model error.
    @Test func anErrorInTheFirstRecordIsAReaderErrorWithItsPlace() throws {
        let directory = try TemporaryDirectory()
        let csv = try directory.file("q.csv", contents: "id,name\n1,\"ab\"c\n2,\"x, y\"\n3,z\n")
        let inferred = try runSluice(["infer", csv.path])
        #expect(inferred.status == 0 && inferred.stderr.contains("q.csv:2:"), "\(inferred.stderr)")
        let rejects = directory.url.appendingPathComponent("q.jsonl").path
        let result = try runSluice([
            "import", csv.path, "--to", directory.url.appendingPathComponent("q.sqlite").path, "--rejects", rejects,
        ])
        #expect(result.status == 1, "one reject, none allowed: \(result.stdout)\(result.stderr)")
        let line = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(
            line.contains("closing quote") && line.contains("\"line\":2") && line.contains("\"record\":1"), "\(line)")
    }

    /// A number of 23 digits keeps every digit (not 1.23e22), and reads back as the same text.
    @Test func aLongNumberKeepsEveryDigit() throws {
        let directory = try TemporaryDirectory()
        let csv = try directory.file("b.csv", contents: "id,big\n1,12345678901234567890123\n2,1.50\n")
        let store = directory.url.appendingPathComponent("b.sqlite").path
        #expect(try runSluice(["import", csv.path, "--to", store]).status == 0)
        #expect(
            try sqliteRows(store, "SELECT CAST(big AS TEXT) FROM b WHERE id = 1") == [
                [.text("12345678901234567890123")]
            ])
        let out = directory.url.appendingPathComponent("out").path
        #expect(try runSluice(["export", store, "--to", out + "/"]).status == 0)
        #expect(try String(contentsOfFile: out + "/b.csv", encoding: .utf8).contains("1,12345678901234567890123\n"))
        // Beside an exponent, a double would round it: the column is text, every digit kept.
        let mixed = try directory.file("m.csv", contents: "id,v\n1,1e5\n2,12345678901234567890123\n")
        let mixedStore = directory.url.appendingPathComponent("m.sqlite").path
        #expect(try runSluice(["import", mixed.path, "--to", mixedStore]).status == 0)
        #expect(try sqliteRows(mixedStore, "SELECT v FROM m WHERE id = 2") == [[.text("12345678901234567890123")]])
        // An empty input has nothing to import: an input error, not a model error.
        let empty = try directory.file("e.csv", contents: "")
        let nothing = try runSluice([
            "import", empty.path, "--to", directory.url.appendingPathComponent("e.sqlite").path,
        ])
        #expect(nothing.status == 3 && nothing.stderr.contains("holds no records"), "\(nothing.stderr)")
    }
}
