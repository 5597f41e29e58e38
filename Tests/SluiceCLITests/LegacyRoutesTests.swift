import Drivers
import Foundation
import Readers
import TestSupport
import Testing

/// One legacy database of every shape (`Tests/Fixtures/legacy-shapes.sql`: link tables, two keys
/// to one table, a cycle, a self-reference, NULL ids, composite keys, no key, WITHOUT ROWID, BLOBs,
/// digit-only text, 64-bit integers, reals, a generated column, a view, a trigger, FTS5, odd names) imported from the
/// database file, from its `sqlite3 .dump`, from the script itself (no flags) and from a CSV file
/// per table (into the model inferred from the database): nothing rejected, every table equal to
/// the source, and a re-import that reports everything unchanged.
@Suite struct LegacyRoutesTests {
    static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    @Test func theFixtureImportsAlikeFromTheFileItsDumpItsScriptAndCSV() throws {
        let directory = try TemporaryDirectory()
        let fixture = repositoryRoot.appendingPathComponent("Tests/Fixtures/legacy-shapes.sql")
        let database = directory.url.appendingPathComponent("legacy.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(
            String(contentsOf: fixture, encoding: .utf8))
        let dump = try directory.file("legacy.dump.sql", contents: try sqliteDump(database))
        // The tables a reader reads (no view, no FTS shadow table; the FTS table's documents are a table).
        let tables = try SQLiteFileReader(path: database).tables
        #expect(tables.count == 26 && tables.filter { $0.name.hasPrefix("doc_fts") }.map(\.name) == ["doc_fts"])

        // The fourth route: a CSV file per table (as `sluice export` writes them from the file's store),
        // imported into the model inferred from the database.
        let exported = directory.url.appendingPathComponent("exported.sqlite").path
        #expect(try runSluice(["import", database, "--to", exported]).status == 0)
        let csvFolder = directory.url.appendingPathComponent("csv").path
        let export = try runSluice(["export", exported, "--to", csvFolder + "/"])
        #expect(export.status == 0, "\(export.stderr)")
        let model = try directory.file("legacy.model.yaml", contents: try runSluice(["infer", database]).stdout)
        let csvFiles = try FileManager.default.contentsOfDirectory(atPath: csvFolder).sorted().filter {
            $0.hasSuffix(".csv")
        }.map { csvFolder + "/" + $0 }
        #expect(csvFiles.count == tables.count, "\(csvFiles)")

        for (route, inputs) in [
            ("file", [database]), ("dump", [dump.path]), ("script", [fixture.path]), ("csv", csvFiles),
        ] {
            let store = directory.url.appendingPathComponent("\(route).sqlite").path
            let modelOption = route == "csv" ? ["--model", model.path] : []
            let result = try runSluice(["import"] + inputs + ["--to", store] + modelOption)
            #expect(result.status == 0, "\(route): \(result.stdout)\(result.stderr)")
            let counts = result.stdout.split(separator: "\n").filter { $0.contains(" read, ") }
            // A line per table, the empty `region` too.
            #expect(counts.count == tables.count, "\(route): \(result.stdout)")
            #expect(result.stdout.contains("Region: 0 read, 0 inserted"), "\(route): \(result.stdout)")
            for line in counts { #expect(line.hasSuffix(" 0 rejected"), "\(route): \(line)") }
            #expect(
                route == "csv" || result.stderr.contains("full-text index of \"doc_fts\" (fts5): its documents are"),
                "\(route): \(result.stderr)")
            #expect(
                route == "csv" || result.stderr.contains("generated column \"price_history\".\"label\""),
                "\(route): \(result.stderr)")
            for table in tables {
                // Column for column, in the source's order, none added (a keyless table's rows and a
                // compound key's are kept under SQLite's rowid; a link table keeps its columns' order).
                let names =
                    "SELECT name FROM pragma_table_info('\(table.name.replacingOccurrences(of: "'", with: "''"))')"
                #expect(try sqliteRows(store, names) == sqliteRows(database, names), "\(route): \(table.name)")
                let list = table.columns.map { Self.quoted($0.name) }.joined(separator: ", ")
                let sql = "SELECT \(list) FROM \(Self.quoted(table.name)) ORDER BY \(list)"
                #expect(try sqliteRows(store, sql) == sqliteRows(database, sql), "\(route): \(table.name)")
            }
            // A text key is the table's key and what refers to it holds the text, as in the source.
            func declared(_ table: String) throws -> [[SQLiteValue]] {
                try sqliteRows(
                    store,
                    "SELECT name, type, pk FROM pragma_table_info('\(table)') WHERE name IN ('code', 'country_code')")
            }
            #expect(try declared("country") == [[.text("code"), .text("TEXT"), .integer(1)]], "\(route)")
            #expect(try declared("person") == [[.text("country_code"), .text("TEXT"), .integer(0)]], "\(route)")
            // The source's indexes: a unique one becomes a key, a plain one a fetch index.
            let indexes =
                "SELECT list.\"unique\", info.name FROM pragma_index_list('book') list, "
                + "pragma_index_info(list.name) info WHERE info.name IN ('title', 'isbn') ORDER BY 2"
            #expect(try sqliteRows(store, indexes) == [[.integer(1), .text("isbn")], [.integer(0), .text("title")]])
            let again = try runSluice(["import"] + inputs + ["--to", store] + modelOption)
            #expect(again.status == 0, "\(route): \(again.stderr)")
            for line in again.stdout.split(separator: "\n") where line.contains(" read, ") {
                #expect(line.contains(" 0 inserted, 0 updated,") && line.hasSuffix(" 0 rejected"), "\(route): \(line)")
            }
        }
    }
}
