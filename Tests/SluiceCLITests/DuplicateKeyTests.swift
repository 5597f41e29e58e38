import Drivers
import Foundation
import TestSupport
import Testing

/// A key twice in one input: the later record is rejected naming both places — never a silent
/// update, and the same record whatever the number of contexts and batches — unless the source
/// asks for the last to win. Rows stored before the run are still upserted.
@Suite struct DuplicateKeyTests {
    @Test func aRepeatedKeyInADumpIsRejectedNamingTheFirst() throws {
        let directory = try TemporaryDirectory()
        let dump = try directory.file(
            "items.sql",
            contents: "CREATE TABLE items(item_id INTEGER PRIMARY KEY, name TEXT);\n"
                + "INSERT INTO items VALUES(1,'first');\nINSERT INTO items VALUES(2,'two');\n"
                + "INSERT INTO items VALUES(1,'second');\n")
        let store = directory.url.appendingPathComponent("items.sqlite").path
        let refused = try runSluice(["import", dump.path, "--to", store])
        #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store))
        let rejects = directory.url.appendingPathComponent("rejects.jsonl").path
        let result = try runSluice(["import", dump.path, "--to", store, "--max-errors", "1", "--rejects", rejects])
        #expect(
            result.stdout.contains("Item: 3 read, 2 inserted, 0 updated, 0 unchanged, 1 rejected"), "\(result.stdout)")
        let line = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(
            line.contains("\"line\":4") && line.contains("appeared before in this input, at \(dump.path):2:1"),
            "\(line)")
        #expect(
            try sqliteRows(store, "SELECT item_id, name FROM items ORDER BY 1") == [
                [.integer(1), .text("first")], [.integer(2), .text("two")],
            ])
    }

    /// A script's conflict clauses are what SQLite does with a repeated key: `INSERT OR REPLACE` and
    /// `REPLACE INTO` keep the later row, `INSERT OR IGNORE` the earlier (the later counted
    /// unchanged) — the store equals the database the script builds, in batches of one too.
    @Test func conflictClausesOfAScriptDecideAsSQLiteDoes() throws {
        let directory = try TemporaryDirectory()
        let script = """
            CREATE TABLE items(item_id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE tags(tag TEXT PRIMARY KEY, note TEXT) WITHOUT ROWID;
            INSERT INTO items VALUES(1,'first'),(2,'two');
            INSERT OR REPLACE INTO items VALUES(1,'replaced');
            REPLACE INTO items(item_id, name) VALUES(2,'again'),(3,'three');
            INSERT OR IGNORE INTO items VALUES(3,'ignored');
            INSERT INTO tags VALUES('a','kept');
            INSERT OR IGNORE INTO tags VALUES('a','ignored'),('b','new');
            INSERT OR REPLACE INTO tags VALUES('b','newer');
            """
        let path = try directory.file("script.sql", contents: script).path
        let database = directory.url.appendingPathComponent("sqlite.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(script)
        for batch in ["1", "100"] {
            let store = directory.url.appendingPathComponent("store\(batch).sqlite").path
            let result = try runSluice(["import", path, "--to", store, "--batch-size", batch])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("Item: 6 read,") && result.stdout.contains(", 1 unchanged, 0 rejected"))
            #expect(result.stdout.contains("Tag: 4 read,"), "\(result.stdout)")
            for sql in ["SELECT * FROM items ORDER BY 1", "SELECT * FROM tags ORDER BY 1"] {
                #expect(try sqliteRows(store, sql) == sqliteRows(database, sql), "\(batch): \(sql)")
            }
        }
    }

    /// A compound key of foreign keys (a link table with payload): a repeat is found by the keys'
    /// columns as well — rejected naming both places, or decided by the row's conflict clause.
    @Test func aRepeatedCompoundKeyOfForeignKeysIsFoundToo() throws {
        let directory = try TemporaryDirectory()
        let start = """
            CREATE TABLE ord(id INTEGER PRIMARY KEY, note TEXT);
            CREATE TABLE line(order_id INTEGER NOT NULL REFERENCES ord(id), line_no INTEGER NOT NULL, qty INTEGER,
              PRIMARY KEY(order_id, line_no));
            INSERT INTO ord VALUES(1,'a'),(2,'b');
            INSERT INTO line VALUES(1,1,5),(1,2,6),(2,1,7);

            """
        let plain = try directory.file("plain.sql", contents: start + "INSERT INTO line VALUES(1,1,9);\n")
        let store = directory.url.appendingPathComponent("plain.sqlite").path
        let rejects = directory.url.appendingPathComponent("rejects.jsonl").path
        let result = try runSluice(["import", plain.path, "--to", store, "--max-errors", "1", "--rejects", rejects])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains("Line: 4 read, 3 inserted, 0 updated, 0 unchanged, 1 rejected"), "\(result.stdout)")
        let line = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(line.contains("appeared before in this input, at \(plain.path):5:1"), "\(line)")
        #expect(try sqliteRows(store, "SELECT qty FROM line WHERE order_id = 1 AND line_no = 1") == [[.integer(5)]])
        for (clause, qty) in [("OR IGNORE", 5), ("OR REPLACE", 9)] {
            let script = start + "INSERT \(clause) INTO line VALUES(1,1,9);\n"
            let path = try directory.file("\(qty).sql", contents: script).path
            let target = directory.url.appendingPathComponent("\(qty).sqlite").path
            let run = try runSluice(["import", path, "--to", target])
            #expect(run.status == 0 && run.stdout.contains("Line: 4 read,"), "\(clause): \(run.stdout)\(run.stderr)")
            #expect(
                try sqliteRows(target, "SELECT qty FROM line WHERE order_id = 1 AND line_no = 1") == [
                    [.integer(Int64(qty))]
                ], "\(clause)")
        }
    }

    /// Many records sharing keys, in batches of one or five, four contexts: the same store and the
    /// same rejects on every run; with `duplicates: last-wins` the last record of each key wins, every run.
    @Test func theSameInputGivesTheSameStoreAndRejectsEveryTime() throws {
        let directory = try TemporaryDirectory()
        var csv = "code,value\n"
        for row in 0..<120 { csv += "K\(row % 7),\(row)\n" }
        let input = try directory.file("values.csv", contents: csv)
        let model = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Value:
                    attributes: { code: string!, value: integer64! }
                    unique: [[code]]
                """)
        for (policy, expected) in [("reject", (0..<7).map { $0 }), ("last-wins", [119] + (113..<119).map { $0 })] {
            var outcomes = Set<String>()
            for run in 0..<8 {
                let store = directory.url.appendingPathComponent("\(policy)-\(run).sqlite").path
                let rejects = directory.url.appendingPathComponent("\(policy)-\(run).jsonl").path
                let pipeline = try directory.file(
                    "\(policy).yaml",
                    contents: """
                        version: 1
                        model: \(model.path)
                        target: { store: sqlite, path: \(store) }
                        batch: { size: \(run % 2 == 0 ? 1 : 5), contexts: 4 }
                        merge: object-trumps
                        errors: { max: 1000, rejects: \(rejects) }
                        sources:
                          - { name: values, path: \(input.path), entity: Value, key: [code], duplicates: \(policy),
                              fields: { code: code, value: value } }
                        """)
                let result = try runSluice(["run", pipeline.path])
                #expect(result.status == 0, "\(result.stderr)")
                let rows = try sqliteRows(store, "SELECT code, value FROM Value ORDER BY code")
                #expect(rows.map { $0[1] } == expected.map { .integer(Int64($0)) }, "\(policy) run \(run)")
                let rejected = ((try? String(contentsOfFile: rejects, encoding: .utf8)) ?? "").split(separator: "\n")
                    .sorted()
                #expect(rejected.count == (policy == "reject" ? 113 : 0), "\(policy) run \(run)")
                outcomes.insert("\(rows) \(rejected)")
            }
            #expect(outcomes.count == 1, "\(policy): \(outcomes.count) different outcomes")
        }
    }

    /// `last-wins` asks for a merge policy under which the record's values win.
    @Test func lastWinsNeedsAPolicyWhereTheRecordWins() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file("v.csv", contents: "code,value\nA,1\nA,2\n")
        let model = try directory.file(
            "m.yaml",
            contents: "version: 1\nentities:\n  Value:\n    attributes: { code: string!, value: integer64! }\n"
                + "    unique: [[code]]\n")
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: \(model.path)
                target: { store: sqlite, path: \(directory.url.appendingPathComponent("v.sqlite").path) }
                merge: error
                sources:
                  - { name: values, path: \(input.path), entity: Value, key: [code], duplicates: last-wins,
                      fields: { code: code, value: value } }
                """)
        let result = try runSluice(["run", pipeline.path])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("duplicates: last-wins needs merge: object-trumps or overwrite"), "\(result.stderr)")
    }
}
