import Drivers
import Foundation
import TestSupport
import Testing

/// Input that would make memory or time grow without bound: a record larger than the pipeline's
/// limit fails the run at its position, whatever the reader (and before it is read whole); XML
/// nested a million deep is inferred and imported in time linear in its depth.
@Suite struct HostileInputTests {
    /// A pipeline over `input` (one source of `format`) with `limits: { record: 1 MB }`.
    static func pipeline(
        _ directory: TemporaryDirectory, _ input: URL, format: String, extra: String, limit: String = "1 MB"
    ) throws -> URL {
        let model = try directory.file(
            "m.yaml",
            contents:
                "version: 1\nentities:\n  Row:\n    attributes: { id: integer64!, t: string }\n    unique: [[id]]\n")
        return try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: \(model.path)
                target: { store: sqlite, path: \(directory.url.appendingPathComponent("t.sqlite").path) }
                limits: { record: \(limit) }
                sources:
                  - { name: rows, format: \(format), path: \(input.path), entity: Row, key: [id], \(extra)
                      fields: { id: id, t: t } }
                """)
    }

    /// A 3 MB XML text node, a 3 MB SQL string literal and a 3 MB CSV field, each over a 1 MB
    /// limit: exit 3 naming the file, the record's place and the limit; no target is made.
    @Test func aRecordOverTheLimitFailsTheRunAtItsPosition() throws {
        let big = String(repeating: "a", count: 3 << 20)
        let inputs: [(name: String, format: String, text: String, extra: String, place: String)] = [
            (
                "rows.xml", "xml",
                "<rows>\n<row><id>1</id><t>b</t></row>\n<row><id>2</id><t>\(big)</t></row>\n</rows>\n",
                "record: /rows/row,", ":3:"
            ),
            (
                "rows.sql", "sqldump",
                "CREATE TABLE rows(id INTEGER PRIMARY KEY, t TEXT);\n"
                    + "INSERT INTO rows VALUES(1,'b');\nINSERT INTO rows VALUES(2,'\(big)');\n", "table: rows,", ":3:"
            ),
            ("rows.csv", "csv", "id,t\n1,b\n2,\"\(big)\"\n", "", ":3:"),
        ]
        for input in inputs {
            let directory = try TemporaryDirectory()
            let file = try directory.file(input.name, contents: input.text)
            let pipeline = try Self.pipeline(directory, file, format: input.format, extra: input.extra)
            let result = try runSluice(["run", pipeline.path])
            #expect(result.status == 3 || result.status == 1, "\(input.name): \(result.stderr)")
            #expect(
                result.stderr.contains("\(file.path)\(input.place)")
                    && result.stderr.contains("larger than the record size limit, 1 MiB"),
                "\(input.name): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("t.sqlite").path))
            // Under a limit above it, the same input imports whole.
            let raised = try Self.pipeline(directory, file, format: input.format, extra: input.extra, limit: "8MB")
            let done = try runSluice(["run", raised.path])
            #expect(done.status == 0, "\(input.name): \(done.stderr)")
            let stored = try sqliteRows(
                directory.url.appendingPathComponent("t.sqlite").path, "SELECT length(t) FROM Row WHERE id = 2")
            #expect(stored == [[.integer(Int64(big.utf8.count))]], "\(input.name)")
        }
    }

    /// A statement whose comment runs on for 3 MB of line breaks counts against the limit too (each
    /// line's start is kept for positions).
    @Test func aCommentOfLineBreaksInAStatementCountsAgainstTheLimit() throws {
        let directory = try TemporaryDirectory()
        let breaks = String(repeating: "\n", count: 3 << 20)
        let dump = try directory.file(
            "rows.sql",
            contents:
                "CREATE TABLE rows(id INTEGER PRIMARY KEY, t TEXT);\nINSERT INTO rows VALUES(1, /*\(breaks)*/ 'x');\n")
        let pipeline = try Self.pipeline(directory, dump, format: "sqldump", extra: "table: rows,")
        let result = try runSluice(["run", pipeline.path])
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("\(dump.path):2:1: the statement is larger than the record size limit, 1 MiB"))
    }

    @Test func aLimitThatIsNoSizeIsAPipelineError() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.file("rows.csv", contents: "id,t\n1,b\n")
        for limit in ["lots", "0", "-5 MB", "12 parsecs", "2 GB"] {
            let pipeline = try Self.pipeline(directory, file, format: "csv", extra: "", limit: "\"\(limit)\"")
            let result = try runSluice(["run", pipeline.path])
            #expect(
                result.status == 2 && result.stderr.contains("limits.record must be a size up to 1 GB"),
                "\(limit): \(result.stderr)")
        }
    }

    /// A million elements nested in one another: `infer` proposes the records and `import` reads them
    /// (each costing the same at any depth; it used to be quadratic: depth 30,000 took 19 s).
    @Test func xmlNestedAMillionDeepIsInferredAndImported() throws {
        let directory = try TemporaryDirectory()
        let depth = 1_000_000
        var text = "<r><a><b>1</b></a><a><b>2</b></a>"
        text += String(repeating: "<a>", count: depth) + "x" + String(repeating: "</a>", count: depth) + "</r>"
        let file = try directory.file("deep.xml", contents: text)
        let paths = try runSluice(["infer", file.path])
        #expect(paths.status == 2 && paths.stderr.contains("/r/a (3 seen)"), "\(paths.stderr)")
        let inferred = try runSluice(["infer", file.path, "--record", "/r/a"])
        #expect(inferred.status == 0 && inferred.stdout.contains("b:"), "\(inferred.stdout)\(inferred.stderr)")
        let store = directory.url.appendingPathComponent("deep.sqlite").path
        let imported = try runSluice(["import", file.path, "--record", "/r/a", "--to", store])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try sqliteRows(store, "SELECT count(*) FROM \"as\"") == [[.integer(3)]])
    }

    /// A CSV of 10,000 columns: `import` and `infer` refuse it at once in one short line (it used to
    /// infer for 38 s and print a CREATE TABLE of 10,000 columns); a pipeline mapping two reads it.
    @Test func tenThousandColumnsAreRefusedInOneLineAndAPipelineReadsSome() throws {
        let directory = try TemporaryDirectory()
        let columns = 10_000
        var text = (0..<columns).map { "c\($0)" }.joined(separator: ",") + "\n"
        for row in 1...3 { text += (0..<columns).map { "\(row * $0)" }.joined(separator: ",") + "\n" }
        let file = try directory.file("wide.csv", contents: text)
        let store = directory.url.appendingPathComponent("wide.sqlite").path
        for arguments in [["import", file.path, "--to", store], ["infer", file.path]] {
            let result = try runSluice(arguments)
            #expect(result.status == 2, "\(arguments[0]): \(result.stderr.prefix(300))")
            #expect(
                result.stderr.contains("has 10000 columns, more than a table holds (2000")
                    && result.stderr.count < 300, "\(arguments[0]): \(result.stderr.prefix(300))")
        }
        let model = try directory.file(
            "m.yaml", contents: "version: 1\nentities:\n  Wide:\n    attributes: { a: integer64!, b: integer64 }\n")
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: \(model.path)
                target: { store: sqlite, path: \(store) }
                sources:
                  - { name: wide, path: \(file.path), entity: Wide, fields: { a: c1, b: c9999 } }
                """)
        let run = try runSluice(["run", pipeline.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            try sqliteRows(store, "SELECT a, b FROM Wide ORDER BY a")
                == (1...3).map {
                    [.integer(Int64($0)), .integer(Int64($0 * 9999))]
                })
    }

    /// XML and JSON options given for inputs none of which is XML or JSON are refused, not silently ignored; with
    /// an XML input among others they apply to it.
    @Test func xmlOptionsWithoutAnXMLInputAreRefused() throws {
        let directory = try TemporaryDirectory()
        let csv = try directory.file("f.csv", contents: "id,placed\n1,2024-01-01\n")
        let store = directory.url.appendingPathComponent("f.sqlite").path
        for option in [["--field", "a=b"], ["--record", "/a/b"]] {
            let result = try runSluice(["import", csv.path, "--to", store] + option)
            #expect(result.status == 2, "\(option): \(result.stderr)")
            #expect(result.stderr.contains("\(option[0]) applies to XML and JSON inputs, and \(csv.path) is neither"))
        }
        #expect(!FileManager.default.fileExists(atPath: store))
        let xml = try directory.file("o.xml", contents: "<orders><order id=\"1\"/><order id=\"2\"/></orders>\n")
        let mixed = try runSluice(["import", csv.path, xml.path, "--record", "/orders/order", "--to", store])
        #expect(mixed.status == 0, "\(mixed.stderr)")
    }
}
