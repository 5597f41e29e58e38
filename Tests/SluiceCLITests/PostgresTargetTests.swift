import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 35: runs into PostgreSQL on the tests' server. The sample pipelines give the same counts
/// and the same exported tables as into SQLite, and a re-run changes no row (`xmin` stays); a
/// failed or dry run leaves nothing; the run lock holds across processes; a password given in the
/// URL appears in no output; a nightly sync balances.
@Suite struct PostgresTargetTests {
    /// A pipeline of `Pipelines/` with absolute paths and the target `target`.
    static func pipeline(_ name: String, target: String, in directory: TemporaryDirectory) throws -> URL {
        var text = try String(contentsOf: repositoryRoot.appendingPathComponent("Pipelines/\(name)"), encoding: .utf8)
        text = text.replacingOccurrences(of: "../", with: repositoryRoot.path + "/")
            .replacingOccurrences(of: "${SLUICE_OUT:-\(repositoryRoot.path)/out}", with: directory.url.path)
        text = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("target:") ? "target: \(target)" : String(line)
        }.joined(separator: "\n")
        return try directory.file(name, contents: text)
    }

    static func postgresTarget(_ schema: PostgresTestSchema) -> String {
        let server = PostgresTestServer.url
        return "{ store: postgres, url: \"\(server)\", schema: \(schema.name), commit: atomic }"
    }

    /// The counts lines of a run's summary (the first line names the target, the last the times).
    static func counts(_ stdout: String) -> [String] {
        stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("  ") && !$0.hasPrefix("  Time:") }
            .filter { !$0.contains("rejected records in") }
    }

    /// Every row's `xmin` (the transaction that last wrote it) of the tables of a schema.
    static func versions(_ schema: PostgresTestSchema, _ tables: [String]) throws -> [String] {
        try tables.flatMap { table in
            try schema.query("SELECT xmin::text FROM \"\(table)\" ORDER BY 1").map { "\(table) \($0[0] ?? "")" }
        }
    }

    @Test(arguments: ["shop.yaml", "legacy-orders.yaml", "orders-feed.yaml"])
    func aSamplePipelineGivesTheSameStoreAsIntoSQLiteAndAgainChangesNoRow(_ name: String) throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        let sqliteStore = directory.url.appendingPathComponent("t.sqlite").path
        let intoSQLite = try runSluice([
            "run", try Self.pipeline(name, target: "{ store: sqlite, path: \(sqliteStore) }", in: directory).path,
        ])
        let pipeline = try Self.pipeline(name, target: Self.postgresTarget(schema), in: directory)
        let first = try runSluice(["run", pipeline.path])
        #expect(first.status == intoSQLite.status, "\(first.stderr)")
        #expect(Self.counts(first.stdout) == Self.counts(intoSQLite.stdout), "\(first.stdout)")
        guard first.status == 0 else { return }
        let exports = try ["sqlite": sqliteStore, "postgres": schema.url.absoluteString].mapValues { store in
            let folder = directory.url.appendingPathComponent(UUID().uuidString).path
            let result = try runSluice(["export", store, "--to", folder + "/"])
            #expect(result.status == 0, "\(result.stderr)")
            return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().map { file in
                (file, try String(contentsOfFile: folder + "/" + file, encoding: .utf8))
            }
        }
        #expect(exports["postgres"]!.map(\.0) == exports["sqlite"]!.map(\.0))
        for ((file, sqlite), (_, postgres)) in zip(exports["sqlite"]!, exports["postgres"]!) where file != "model.yaml"
        {
            #expect(postgres == sqlite, "\(file)")
        }
        let tables = try schema.query(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> '_sluice_metadata'"
        ).compactMap { $0[0] }
        let before = try Self.versions(schema, tables)
        let again = try runSluice(["run", pipeline.path])
        #expect(again.status == 0, "\(again.stderr)")
        for line in Self.counts(again.stdout) where line.contains(" read, ") {
            #expect(line.contains(" 0 inserted, 0 updated, "), "\(line)")
        }
        #expect(try Self.versions(schema, tables) == before, "a re-run of the same inputs writes no row")
    }

    /// A pipeline of people (a calendar date, a decimal) from `people.csv` into `target`.
    static func peoplePipeline(_ directory: TemporaryDirectory, target: String, maxErrors: Int) throws -> URL {
        _ = try directory.file(
            "people.model.yaml",
            contents: """
                version: 1
                entities:
                  Person:
                    table: people
                    attributes: { id: integer64!, name: string, born: calendarDate, score: decimal }
                    unique: [[id]]
                """)
        return try directory.file(
            "people.yaml",
            contents: """
                version: 1
                model: people.model.yaml
                target: \(target)
                merge: object-trumps
                errors: { max: \(maxErrors), rejects: people.rejects.jsonl }
                sources:
                  - { name: people, path: people.csv, entity: Person, key: [id], csv: { null: [""] },
                      fields: { id: id, name: name, born: { column: born, date: "yyyy-MM-dd" }, score: score } }
                """)
    }

    @Test func aFailedRunAndADryRunLeaveNothingAndARealRunKeepsAll() throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        _ = try directory.file(
            "people.csv",
            contents: "id,name,born,score\n1,\"Ada, Countess\nof Lovelace\",1815-12-10,1.50\n2,Бори́с,1890-02-10,\n"
                + "3,\"\"\"Quoted\"\"\",1906-12-09,-0.25\n4,Bad,not a date,2\n")
        let strict = try Self.peoplePipeline(directory, target: Self.postgresTarget(schema), maxErrors: 0)
        let failed = try runSluice(["run", strict.path])
        #expect(failed.status == 1, "\(failed.stderr)")
        #expect(failed.stderr.contains("people.csv:6"), "\(failed.stderr)")
        #expect(!schema.exists, "a failed run leaves nothing, not even the store's tables")
        let lenient = try Self.peoplePipeline(directory, target: Self.postgresTarget(schema), maxErrors: 1)
        let dry = try runSluice(["run", lenient.path, "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("Person: 4 read, 3 inserted, 0 updated, 0 unchanged, 1 rejected"), "\(dry.stdout)")
        #expect(dry.stdout.contains("rolled back; nothing was kept"), "\(dry.stdout)")
        #expect(!schema.exists, "a dry run keeps nothing")
        let real = try runSluice(["run", lenient.path])
        #expect(real.status == 0, "\(real.stderr)")
        #expect(
            try schema.query("SELECT id, name, born::text, score::text FROM people ORDER BY id") == [
                ["1", "Ada, Countess\nof Lovelace", "1815-12-10", "1.5"], ["2", "Бори́с", "1890-02-10", nil],
                ["3", "\"Quoted\"", "1906-12-09", "-0.25"],
            ])
    }

    @Test func aRunWaitsForTheLockAnotherRunHoldsThenExits4() throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        let input = try directory.file("a.csv", contents: "id,name\n1,x\n")
        let holder = try PostgresConnection(conninfo: PostgresTestServer.conninfo)
        _ = try holder.query("SELECT pg_advisory_lock(hashtext('sluice'), hashtext($1))", [schema.name])
        let started = Date()
        let locked = try runSluice(["import", input.path, "--to", schema.url.absoluteString, "--wait-lock", "1"])
        #expect(locked.status == 4, "\(locked.stderr)")
        #expect(Date().timeIntervalSince(started) >= 1, "it waited")
        #expect(locked.stderr.contains(schema.name), "\(locked.stderr)")
        _ = try holder.query("SELECT pg_advisory_unlock(hashtext('sluice'), hashtext($1))", [schema.name])
        #expect(try runSluice(["import", input.path, "--to", schema.url.absoluteString]).status == 0)
    }

    @Test func thePasswordOfTheURLAppearsInNoOutput() throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        let password = "Pw-7f3a-Secret"
        let input = try directory.file("a.csv", contents: "id,amount\n1,2.5\n2,3\n3,4\n1,9\n")
        let outputs = ["report.json", "rejects.jsonl", "saved.yaml"].map {
            directory.url.appendingPathComponent($0).path
        }
        let run = try runSluice([
            "import", input.path, "--to", schema.url(password: password), "--key", "id", "--max-errors", "5",
            "--report", outputs[0], "--rejects", outputs[1], "--save-pipeline", outputs[2],
            "--log-format", "json", "--log-level", "debug",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let refused = try runSluice([
            "import", input.path, "--to",
            schema.url(password: password).replacingOccurrences(
                of: "/postgres?", with: "/no_such_database?"),
        ])
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("no_such_database"), "\(refused.stderr)")
        // Also as a `password` parameter, and through validate and inspect; a run's rejects go next
        // to its input, named after the schema.
        let parameter = schema.url.absoluteString + "&password=" + password
        let again = try runSluice(["import", input.path, "--to", parameter, "--key", "id", "--max-errors", "5"])
        #expect(again.status == 0, "\(again.stderr)")
        let validated = try runSluice(["validate", schema.url(password: password)])
        let inspected = try runSluice(["inspect", parameter])
        #expect(validated.status == 0 && inspected.status == 0, "\(validated.stderr)\(inspected.stderr)")
        let ownRejects = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasPrefix("\(schema.name).rejects-") && $0.hasSuffix(".jsonl")
        }
        #expect(ownRejects.count == 1, "\(ownRejects)")
        var texts = [
            run.stdout, run.stderr, refused.stdout, refused.stderr, again.stdout, again.stderr, validated.stdout,
            validated.stderr, inspected.stdout, inspected.stderr,
        ]
        texts += ownRejects.map { (try? String(contentsOfFile: directory.url.path + "/" + $0, encoding: .utf8)) ?? "" }
        for file in outputs + [directory.url.appendingPathComponent("saved.model.yaml").path] {
            texts.append((try? String(contentsOfFile: file, encoding: .utf8)) ?? "")
        }
        #expect(texts[10 + ownRejects.count].contains("sluice@"), "the report names the target")
        #expect(texts[12 + ownRejects.count].contains("store: postgres"), "the saved pipeline names the target")
        for text in texts { #expect(!text.contains(password), "\(text)") }

        // While a run waits for its input, `ps` (its /proc cmdline) shows no password either.
        let waiting = Process()
        waiting.executableURL = try sluiceBinary
        let other = PostgresTestSchema()
        waiting.arguments = ["import", "-", "--to", other.url(password: password), "--format", "csv", "--quiet"]
        let stdin = Pipe()
        waiting.standardInput = stdin
        waiting.standardOutput = FileHandle.nullDevice
        waiting.standardError = FileHandle.nullDevice
        try waiting.run()
        var cmdline = ""
        for _ in 0..<200 where !cmdline.contains("*") {
            usleep(20_000)
            cmdline = (try? String(contentsOfFile: "/proc/\(waiting.processIdentifier)/cmdline", encoding: .utf8)) ?? ""
        }
        #expect(cmdline.contains("postgresql://sluice:***") && !cmdline.contains(password), "\(cmdline)")
        try stdin.fileHandleForWriting.write(contentsOf: Data("id,amount\n7,1\n".utf8))
        try stdin.fileHandleForWriting.close()
        waiting.waitUntilExit()
        #expect(waiting.terminationStatus == 0)
        // The saved pipeline runs again with the password from libpq's environment.
        let saved = try runSluice(["run", outputs[2], "--quiet"], environment: ["PGPASSWORD": password])
        #expect(saved.status == 0, "\(saved.stderr)")
    }

    @Test func aNightlySyncBalancesAndLeavesUnchangedRowsUntouched() throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        let pipeline = try NightlyModeTests.pipeline(
            directory, mode: "sync", size: 300, contexts: 2, extra: "sync: { max_delete: 5% },")
        let text = try String(contentsOf: pipeline, encoding: .utf8).replacingOccurrences(
            of: "target: { store: sqlite, path: t.sqlite }", with: "target: \(Self.postgresTarget(schema))")
        try text.write(to: pipeline, atomically: true, encoding: .utf8)
        let input = directory.url.appendingPathComponent("accounts.csv")
        try NightlyModeTests.Export.day1.csv.write(to: input, atomically: true, encoding: .utf8)
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
        let day1 = try schema.query("SELECT id::text, xmin::text FROM \"Account\" ORDER BY id")
        try NightlyModeTests.Export.day2.csv.write(to: input, atomically: true, encoding: .utf8)
        let day2 = try runSluice(["run", pipeline.path])
        #expect(day2.status == 0, "\(day2.stderr)")
        #expect(
            day2.stdout.contains("Account: 1010 read, 20 inserted, 50 updated, 940 unchanged, 0 rejected, 10 deleted"),
            "\(day2.stdout)")
        let stored = try schema.query("SELECT id, name, amount::text FROM \"Account\" ORDER BY id")
        #expect(stored.count == 1_000 + 20 - 10)
        #expect(
            stored
                == NightlyModeTests.Export.day2.rows.sorted { $0.id < $1.id }.map { ["\($0.id)", $0.name, $0.amount] })
        let after = Dictionary(
            uniqueKeysWithValues: try schema.query("SELECT id::text, xmin::text FROM \"Account\"").map {
                ($0[0]!, $0[1]!)
            })
        let kept = day1.filter { row in
            let id = Int(row[0]!)!
            return id % 100 != 7 && id % 20 != 3
        }
        #expect(kept.count == 940)
        #expect(kept.allSatisfy { after[$0[0]!] == $0[1] }, "unchanged rows are not written")
    }

    /// Text PostgreSQL cannot hold (a NUL character) rejects its record, naming the file, line and
    /// attribute, whether the record came in a batch insert or through a save; the others are stored.
    @Test func textPostgreSQLCannotHoldRejectsItsRecordOnly() throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        let rows = (1...30).map { $0 == 12 ? "12,a\u{0}b" : "\($0),note \($0)" }
        let input = try directory.file("notes.csv", contents: "id,body\n" + rows.joined(separator: "\n") + "\n")
        let rejects = directory.url.appendingPathComponent("rejects.jsonl").path
        for run in 0..<2 {
            let result = try runSluice([
                "import", input.path, "--to", schema.url.absoluteString, "--key", "id", "--max-errors", "5",
                "--rejects", rejects,
            ])
            #expect(result.status == 0, "run \(run): \(result.stderr)")
            let rejected = try String(contentsOfFile: rejects, encoding: .utf8)
            #expect(rejected.contains("notes.csv\",\"line\":13"), "\(rejected)")
            #expect(rejected.contains("Note.body cannot be kept") && rejected.contains("U+0000"), "\(rejected)")
            #expect(try schema.query("SELECT count(*), sum(id) FROM notes") == [["29", "453"]])
        }
    }

    /// Values outside what PostgreSQL's columns hold reject their records, never the run, never
    /// rounded: a date after 294276 AD or before 4713 BC, a calendar date past 5874897 AD, a decimal
    /// with more digits than `numeric(38, 2)` keeps before or after the point. On the first load
    /// (streamed) and on the next night (merge) alike.
    @Test func valuesPostgreSQLCannotHoldRejectTheirRecords() throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Reading:
                    table: reading
                    attributes: { id: integer64!, at: date, day: calendarDate, amount: { type: decimal, scale: 2 } }
                    unique: [[id]]
                """)
        _ = try directory.file(
            "t.csv",
            contents: """
                id,at,day,amount
                1,0,0,1.50
                2,10000000000000,0,2.00
                3,-211000000000,0,3.00
                4,0,190080946684800,4.00
                5,0,0,1234567890123456789012345678901234567
                6,0,0,1.234
                7,1700000000,86400,7.25

                """)
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { store: postgres, url: "\(PostgresTestServer.url)", schema: \(schema.name) }
                merge: object-trumps
                errors: { max: 10, rejects: r.jsonl }
                sources:
                  - name: t
                    path: t.csv
                    entity: Reading
                    key: [id]
                    fields: { id: id, at: { column: at, date: unix }, day: { column: day, date: unix }, amount: amount }
                """)
        for night in 1...2 {
            let run = try runSluice(["run", pipeline.path])
            #expect(run.status == 0, "night \(night): \(run.stderr)")
            #expect(run.stdout.contains("Reading: 7 read"), "\(run.stdout)")
            #expect(run.stdout.contains("5 rejected"), "night \(night): \(run.stdout)")
            let rejects = try String(contentsOf: directory.url.appendingPathComponent("r.jsonl"), encoding: .utf8)
            for reason in [
                "outside the dates PostgreSQL holds", "outside the calendar dates PostgreSQL holds",
                "has 37 digits before the point",
            ] {
                #expect(rejects.contains(reason), "night \(night): \(reason) in \(rejects)")
            }
            #expect(
                try schema.query("SELECT id, amount::text, day::text FROM reading ORDER BY id") == [
                    ["1", "1.50", "1970-01-01"], ["7", "7.25", "1970-01-02"],
                ])
        }
    }
}
