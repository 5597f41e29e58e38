import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 40, tried from the outside as an attacker or bad luck would: runs that lose their lock file,
/// Sluice's own tables in an input, a shared database written during the commit, names that look
/// like variables, a refused report path.
@Suite struct HardeningTests {
    static func sqlite(_ database: String, _ sql: String) throws {
        let connection = try SQLiteConnection(path: database)
        try connection.execute(sql)
    }

    static func csv(_ rows: ClosedRange<Int>, tag: String) -> String {
        "id,name\n" + rows.map { "\($0),\(tag) \($0)\n" }.joined()
    }

    /// The lock file removed under a running run (a tmp cleaner): a second run takes a new lock and
    /// works on a copy of its own; the first never renames the second's half-written copy. The target
    /// ends as one whole run made it, and no copy is left.
    @Test func twoRunsNeverShareAWorkCopy() throws {
        let directory = try TemporaryDirectory()
        let big = try directory.file("big.csv", contents: Self.csv(1...150_000, tag: "big"))
        let small = try directory.file("small.csv", contents: Self.csv(1...3, tag: "small"))
        let target = directory.url.appendingPathComponent("t.sqlite").path
        #expect(try runSluice(["import", small.path, "--to", target, "--entity", "Row", "--quiet"]).status == 0)
        let first = try startSluice(["import", big.path, "--to", target, "--entity", "Row", "--quiet"])
        let work = target + ".sluice-tmp-\(first.processIdentifier)"
        let deadline = Date().addingTimeInterval(60)
        while first.isRunning, Date() < deadline, !FileManager.default.fileExists(atPath: work) { usleep(2_000) }
        try? FileManager.default.removeItem(atPath: target + ".lock")
        let second = try runSluice(["import", small.path, "--to", target, "--entity", "Row", "--quiet"])
        first.waitUntilExit()
        #expect(second.status == 0, "\(second.stderr)")
        #expect([0, 3].contains(first.terminationStatus), "the first succeeds, or finds the target changed")
        #expect(try sqliteRows(target, "PRAGMA integrity_check") == [[.text("ok")]])
        // The entity Row's table is named after it (`--entity` names the table too).
        let rows = try sqliteRows(target, "SELECT count(*), sum(name LIKE 'big%') FROM row")
        #expect(rows == [[.integer(150_000), .integer(150_000)]] || rows == [[.integer(3), .integer(0)]], "\(rows)")
        #expect(leftovers(beside: target).isEmpty, "\(leftovers(beside: target))")
    }

    /// A dump holding a `_sluice_metadata` table, and another Sluice store as an input: their
    /// metadata is never written into the target's own (which stays openable, with its identifier
    /// and model); a pipeline naming such a table is refused.
    @Test func sluiceOwnTablesOfAnInputAreNeverImported() throws {
        let directory = try TemporaryDirectory()
        let store = directory.url.appendingPathComponent("app.sqlite").path
        let people = try directory.file("people.csv", contents: Self.csv(1...2, tag: "person"))
        #expect(try runSluice(["import", people.path, "--to", store, "--quiet"]).status == 0)
        let identifier = { try sqliteRows(store, "SELECT value FROM _sluice_metadata WHERE key = 'identifier'") }
        let before = try identifier()
        let dump = try directory.file(
            "hostile.sql",
            contents: """
                CREATE TABLE _sluice_metadata(key TEXT PRIMARY KEY, value TEXT);
                INSERT INTO _sluice_metadata VALUES('identifier','forged'),('user.sluice.model','yaml\\nbroken: [');
                CREATE TABLE pets(id INTEGER PRIMARY KEY, name TEXT);
                INSERT INTO pets VALUES(1,'Rex');
                """)
        let result = try runSluice(["import", dump.path, "--to", store])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("_sluice_metadata"), "named in a warning: \(result.stderr)")
        #expect(try identifier() == before)
        #expect(try runSluice(["inspect", store]).status == 0)
        #expect(try sqliteRows(store, "SELECT name FROM pets") == [[.text("Rex")]])

        let other = directory.url.appendingPathComponent("other.sqlite").path
        let cities = try directory.file("cities.csv", contents: "code,city\nLIS,Lisbon\n")
        #expect(try runSluice(["import", cities.path, "--to", other, "--quiet"]).status == 0)
        let merged = try runSluice(["import", other, "--to", store])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(try identifier() == before)
        let inspect = try runSluice(["inspect", store])
        #expect(inspect.stdout.contains("(entity City)") && inspect.stdout.contains("(entity People)"))

        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { store: sqlite, path: app.sqlite }
                sources:
                  - { name: meta, format: sqldump, path: hostile.sql, table: _sluice_metadata, entity: M,
                      fields: { key: key } }
                """)
        _ = try directory.file("m.yaml", contents: "version: 1\nentities:\n  M:\n    attributes: { key: string }\n")
        let check = try runSluice(["check", pipeline.path])
        #expect(check.status == 2 && check.stderr.contains("Sluice store's own table"), "\(check.stderr)")
    }

    /// Another program holds a write transaction on a shared database while the import commits: the
    /// import waits for it and, the file having changed, does not replace it (exit 3) — the other
    /// program's write is kept, not lost in a file renamed away.
    @Test func aWriteDuringTheCommitOfASharedDatabaseIsNeverLost() throws {
        let directory = try TemporaryDirectory()
        let database = directory.url.appendingPathComponent("app.db").path
        try Self.sqlite(database, "CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES ('before');")
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        writer.arguments = [
            "sqlite3", database, "BEGIN IMMEDIATE; INSERT INTO notes VALUES ('during');", ".shell sleep 3", "COMMIT;",
        ]
        try writer.run()
        usleep(500_000)  // the writer holds the write lock
        let people = try directory.file("people.csv", contents: Self.csv(1...2, tag: "person"))
        let result = try runSluice(["import", people.path, "--to", database])
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        #expect(result.status == 3, "\(result.stdout)\(result.stderr)")
        #expect(
            try sqliteRows(database, "SELECT x FROM notes ORDER BY rowid") == [[.text("before")], [.text("during")]])
        #expect(leftovers(beside: database).isEmpty)
        let again = try runSluice(["import", people.path, "--to", database, "--quiet"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try sqliteRows(database, "SELECT count(*) FROM notes") == [[.integer(2)]])
    }

    /// A file named with `${…}`: its name is a name, never a variable — the variable's value is
    /// printed nowhere, and a saved pipeline keeps the name (as `$${`) and runs again.
    @Test func aDollarBraceInAFileNameIsNeverAVariable() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file("in-${API_TOKEN}.csv", contents: Self.csv(1...2, tag: "row"))
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let saved = directory.url.appendingPathComponent("t.yaml").path
        let environment = ["API_TOKEN": "s3cr3t-value"]
        let result = try runSluice(
            ["import", input.path, "--to", store, "--save-pipeline", saved], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!(result.stdout + result.stderr).contains("s3cr3t"))
        let text = try String(contentsOfFile: saved, encoding: .utf8)
        #expect(text.contains("in-$${API_TOKEN}.csv") && !text.contains("s3cr3t"), "\(text)")
        let again = try runSluice(["run", saved], environment: environment)
        #expect(again.status == 0 && again.stdout.contains("2 unchanged"), "\(again.stdout)\(again.stderr)")
        #expect(!(again.stdout + again.stderr).contains("s3cr3t"))
    }

    /// A report path that is the run's own target (known only once the pipeline is read) is refused
    /// — and nothing is written there.
    @Test func aRefusedReportPathIsNotWritten() throws {
        let directory = try TemporaryDirectory()
        let people = try directory.file("people.csv", contents: Self.csv(1...2, tag: "person"))
        let store = directory.url.appendingPathComponent("t.sqlite").path
        #expect(try runSluice(["import", people.path, "--to", store, "--quiet"]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let result = try runSluice(["import", people.path, "--to", store, "--report", store])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }
}
