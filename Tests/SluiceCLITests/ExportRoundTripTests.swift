import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 33, point 8: `sluice export` → `sluice import` is the identity. A CSV or JSON Lines
/// export carries what the files cannot say in a model file beside them (`model.yaml`), which
/// `sluice import FOLDER` takes; a SQL export declares it (`DATE`, `NUMERIC(38,2)`, `REFERENCES`,
/// `UNIQUE`). Each gives back every table and column — BLOBs, decimals and their scales, calendar
/// dates, timestamps, to-ones, many-to-manys, keyless rows — of the legacy-shapes fixture and of
/// the shop sample.
@Suite struct ExportRoundTripTests {
    /// Every table of a store (Sluice's own aside): its columns (name and declared type, in order)
    /// and its rows, sorted.
    static func tables(_ store: String) throws -> [String: [[SQLiteValue]]] {
        let names = try sqliteRows(
            store,
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                + "AND name NOT LIKE '\\_sluice\\_%' ESCAPE '\\'")
        var tables: [String: [[SQLiteValue]]] = [:]
        for case .text(let name) in names.map({ $0[0] }) {
            let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            let columns = try sqliteRows(
                store, "SELECT name, type FROM pragma_table_info('\(name.replacingOccurrences(of: "'", with: "''"))')")
            let rows = try sqliteRows(store, "SELECT * FROM \(quoted)").sorted { "\($0)" < "\($1)" }
            tables[name] = columns + [[.text("--")]] + rows
        }
        return tables
    }

    static func roundTrips(_ store: String, in directory: TemporaryDirectory, _ label: String) throws {
        let original = try tables(store)
        #expect(original.count >= ["legacy": 26, "shop": 6][label, default: 1], "\(label): \(original.keys.sorted())")
        let folder = directory.url.appendingPathComponent("\(label)-csv").path
        let lines = directory.url.appendingPathComponent("\(label)-jsonl").path
        let file = directory.url.appendingPathComponent("\(label).sql").path
        #expect(try runSluice(["export", store, "--to", folder + "/"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: folder + "/model.yaml"))
        #expect(try runSluice(["export", store, "--to", lines + "/", "--format", "jsonl"]).status == 0)
        #expect(try runSluice(["export", store, "--to", file]).status == 0)
        // The script declares what the model says: required columns, a link table's pairs as its key.
        let script = try String(contentsOfFile: file, encoding: .utf8)
        #expect(script.contains(" NOT NULL") && (label == "amounts" || script.contains("  PRIMARY KEY (")), "\(label)")
        for (route, input) in [("csv", folder), ("jsonl", lines), ("sqldump", file)] {
            let copy = directory.url.appendingPathComponent("\(label)-\(route).db").path
            let result = try runSluice(["import", input, "--to", copy])
            #expect(result.status == 0, "\(label) \(route): \(result.stderr)")
            let back = try tables(copy)
            #expect(Set(back.keys) == Set(original.keys), "\(label) \(route)")
            for (name, contents) in original {
                #expect(back[name] == contents, "\(label) \(route): \(name)")
            }
        }
    }

    @Test func theLegacyShapesComeBackFromEveryExport() throws {
        let directory = try TemporaryDirectory()
        let database = directory.url.appendingPathComponent("legacy.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(
            String(
                contentsOf: repositoryRoot.appendingPathComponent("Tests/Fixtures/legacy-shapes.sql"), encoding: .utf8))
        let store = directory.url.appendingPathComponent("legacy.sqlite").path
        #expect(try runSluice(["import", database, "--to", store]).status == 0)
        try Self.roundTrips(store, in: directory, "legacy")
        // What the export and import kept is the source's: BLOBs, scales, days, keyless twins.
        #expect(
            try sqliteRows(store, "SELECT hex(data), amount FROM sample_value WHERE id = 1")
                == [[.text("00FF"), .real(19.99)]])
        #expect(
            try sqliteRows(store, "SELECT born FROM person_detail ORDER BY 1") == [
                [.text("1906-12-09")], [.text("1930-05-11")],
            ])
    }

    /// Decimals with more digits than SQLite's numbers hold come back digit for digit from every
    /// export: a SQL script writes them as the BLOB of their digits the store keeps.
    @Test func decimalsOfEveryDigitComeBack() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file(
            "amounts.csv", contents: "id,amount\n1,12345678901234567.89\n2,19.99\n3,99999999999999999999.99\n")
        let store = directory.url.appendingPathComponent("amounts.db").path
        #expect(try runSluice(["import", input.path, "--to", store]).status == 0)
        try Self.roundTrips(store, in: directory, "amounts")
        let file = directory.url.appendingPathComponent("amounts.sql").path
        let copy = directory.url.appendingPathComponent("amounts-sqldump.db").path
        let exported = try runSluice(["export", copy, "--to", "-", "--format", "csv"])
        #expect(exported.stdout == "id,amount\n1,12345678901234567.89\n2,19.99\n3,99999999999999999999.99\n")
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains("X'3132333435"))
    }

    @Test func theShopSampleComesBackFromEveryExport() throws {
        let directory = try TemporaryDirectory()
        let run = try runSluice(["run", "Pipelines/shop.yaml"], environment: ["SLUICE_OUT": directory.url.path])
        #expect(run.status == 0, "\(run.stderr)")
        try Self.roundTrips(directory.url.appendingPathComponent("shop.sqlite").path, in: directory, "shop")
    }
}
