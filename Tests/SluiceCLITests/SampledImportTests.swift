import Drivers
import Foundation
import TestSupport
import Testing

/// `sluice import` plans from the first 50,000 records of each CSV input and imports in the same
/// pass, while the whole input is inferred beside it: the store must come out as the two-pass
/// import makes it (`--save-pipeline` plans from every record first), whatever a later record says.
@Suite struct SampledImportTests {
    static let sample = ["SLUICE_IMPORT_SAMPLE": "50000"]

    /// 60,000 rows; `late` changes row `n` (1-based) of the generated columns.
    static func rows(_ late: [Int: String] = [:]) -> String {
        var text = "id,code,amount,note,sku\n"
        for n in 1...60_000 {
            text += late[n] ?? "\(n),\(n % 977),\(n % 500).\(n % 90 + 10),note \(n % 13),SKU-\(n)"
            text += "\n"
        }
        return text
    }

    /// The table's schema and every row of it, and the model the store records, of the store at `path`.
    static func contents(_ path: String, table: String) throws -> [[SQLiteValue]] {
        try sqliteRows(path, "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE '%sluice%' ORDER BY name")
            + sqliteRows(path, "SELECT * FROM \(table) ORDER BY 1")
    }

    /// Imports `csv` in one pass (sample of 50,000) and in two (`--save-pipeline`) into new stores.
    static func importBothWays(
        _ csv: String, in folder: TemporaryDirectory
    ) throws -> (
        onePass: CommandResult, twoPass: CommandResult, onePassStore: String, twoPassStore: String
    ) {
        let one = folder.url.appendingPathComponent("one.sqlite").path
        let two = folder.url.appendingPathComponent("two.sqlite").path
        let onePass = try runSluice(["import", csv, "--to", one], environment: sample)
        let twoPass = try runSluice(
            ["import", csv, "--to", two, "--save-pipeline", folder.url.appendingPathComponent("p.yaml").path],
            environment: sample)
        return (onePass, twoPass, one, two)
    }

    @Test func laterRecordsThatContradictTheSampleGiveTheTwoPassStore() throws {
        let folder = try TemporaryDirectory()
        // Past the sample: a code that is no number, an amount of one decimal, a note missing, a repeated sku.
        let csv = try folder.file(
            "items.csv",
            contents: Self.rows([
                55_000: "55000,A-17,3.10,n,SKU-55000", 57_000: "57000,5,3.5,n,SKU-57000",
                58_000: "58000,5,1.25,,SKU-58000", 59_000: "59000,5,1.25,n,SKU-12",
            ])
        ).path
        let (onePass, twoPass, one, two) = try Self.importBothWays(csv, in: folder)
        #expect(onePass.status == 0 && twoPass.status == 0, "\(onePass.stderr)\(twoPass.stderr)")
        #expect(OneOffImportTests.counts(onePass.stdout, "Item") == [60_000, 60_000, 0, 0, 0], "\(onePass.stdout)")
        #expect(try Self.contents(one, table: "items") == Self.contents(two, table: "items"))
        // The code column is text, the amounts decimals of no fixed scale, the note optional.
        #expect(try sqliteRows(one, "SELECT code FROM items WHERE id = 55000") == [[.text("A-17")]])
        #expect(try sqliteRows(one, "SELECT count(*) FROM items WHERE note IS NULL") == [[.integer(1)]])
        // Nothing of the first attempt is left: no rejects file, no work copy.
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
        #expect(left == ["items.csv", "one.sqlite", "p.model.yaml", "p.yaml", "two.sqlite"], "\(left)")
    }

    @Test func aSampleThatStandsGivesTheTwoPassStore() throws {
        let folder = try TemporaryDirectory()
        let csv = try folder.file("items.csv", contents: Self.rows()).path
        let (onePass, twoPass, one, two) = try Self.importBothWays(csv, in: folder)
        #expect(onePass.status == 0 && twoPass.status == 0, "\(onePass.stderr)\(twoPass.stderr)")
        #expect(try Self.contents(one, table: "items") == Self.contents(two, table: "items"))
        #expect(onePass.stderr == twoPass.stderr, "the same warnings")
    }

    /// A record no plan can store fails the run as it fails the two-pass one: its reject is published.
    @Test func aFailureBothPlansShareIsReportedWithItsRejects() throws {
        let folder = try TemporaryDirectory()
        let csv = try folder.file("items.csv", contents: Self.rows([59_999: "59999,1,2.50"])).path
        let rejects = folder.url.appendingPathComponent("rejects.jsonl").path
        let one = folder.url.appendingPathComponent("one.sqlite").path
        let onePass = try runSluice(["import", csv, "--to", one, "--rejects", rejects], environment: Self.sample)
        #expect(onePass.status == 1, "\(onePass.stdout)\(onePass.stderr)")
        #expect(!FileManager.default.fileExists(atPath: one))
        let text = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(text.contains("the record has 3 fields, the header has 5") && text.contains("\"line\":60000"))
    }
}

#if canImport(Glibc)
import Glibc
#endif

extension SampledImportTests {
    /// A warning of the plan (an encoding guessed) is told when the run fails too.
    @Test func aFailedRunStillTellsThePlansWarnings() throws {
        let folder = try TemporaryDirectory()
        var text = Data("id,name\n".utf8)
        for n in 1...60_000 { text += Data("\(n),Caf".utf8) + Data([0xE9]) + Data("\n".utf8) }
        text += Data("60001\n".utf8)  // one field short: rejected under either plan
        let csv = folder.url.appendingPathComponent("cafes.csv")
        try text.write(to: csv)
        let result = try runSluice(
            ["import", csv.path, "--to", folder.url.appendingPathComponent("c.sqlite").path], environment: Self.sample)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("is not valid UTF-8") && result.stderr.contains("read as windows-1252"))
    }

    /// A signal while the first attempt runs, or while it waits for the plan of every record, stops
    /// the import at once and leaves nothing behind: no target, no work copy, no rejects file.
    @Test func aSignalStopsTheImportAndLeavesNothing() throws {
        let folder = try TemporaryDirectory()
        var rows = "id,code\n"
        for n in 1...400_000 { rows += n == 50_001 ? "\(n),x-\(n)\n" : "\(n),\(n % 977)\n" }
        let csv = try folder.file("codes.csv", contents: rows)
        let target = folder.url.appendingPathComponent("codes.sqlite").path
        let process = try startSluice(["import", csv.path, "--to", target])
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, process.isRunning,
            !FileManager.default.fileExists(atPath: target + ".sluice-tmp-\(process.processIdentifier)")
        {
            usleep(20_000)
        }
        usleep(300_000)
        let signalled = Date()
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 143)
        #expect(Date().timeIntervalSince(signalled) < 5, "stopped at once, not after the grace period")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        #expect(left == ["codes.csv"], "\(left)")
    }
}

extension SampledImportTests {
    /// The rejects of an attempt still to be checked are written as `….provisional`: when its process
    /// is killed, the next run removes them (they were never the run's), and keeps a run's own.
    @Test func aKilledAttemptsProvisionalRejectsAreRemovedByTheNextRun() throws {
        let folder = try TemporaryDirectory()
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let pid = gone.processIdentifier
        let line = "{\"errors\":[],\"position\":{\"line\":2}}\n"
        _ = try folder.file("r.jsonl.sluice-tmp-\(pid).provisional", contents: line)
        _ = try folder.file("r.jsonl.sluice-tmp-\(pid)", contents: line)
        let csv = try folder.file("items.csv", contents: "id,name\n1,bolt\n")
        let result = try runSluice([
            "import", csv.path, "--to", folder.url.appendingPathComponent("i.sqlite").path, "--rejects",
            folder.url.appendingPathComponent("r.jsonl").path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
        #expect(left == ["i.sqlite", "items.csv", "r.interrupted-\(pid).jsonl"], "\(left)")
    }
}

extension SampledImportTests {
    /// The second night through the one-pass import: the same file again is all unchanged, a file
    /// with one row changed updates that row, and the store holds the rows as before every time.
    @Test func aSecondImportOfTheSameAndAChangedFileCountsAsTheFirst() throws {
        let folder = try TemporaryDirectory()
        let csv = try folder.file("items.csv", contents: Self.rows()).path
        let store = folder.url.appendingPathComponent("items.sqlite").path
        let first = try runSluice(["import", csv, "--to", store], environment: Self.sample)
        #expect(OneOffImportTests.counts(first.stdout, "Item") == [60_000, 60_000, 0, 0, 0], "\(first.stderr)")
        let again = try runSluice(["import", csv, "--to", store], environment: Self.sample)
        #expect(OneOffImportTests.counts(again.stdout, "Item") == [60_000, 0, 0, 60_000, 0], "\(again.stderr)")
        let changed = try folder.file("items.csv", contents: Self.rows([59_000: "59000,5,1.25,changed,SKU-59000"]))
        let third = try runSluice(["import", changed.path, "--to", store], environment: Self.sample)
        #expect(OneOffImportTests.counts(third.stdout, "Item") == [60_000, 0, 1, 59_999, 0], "\(third.stderr)")
        #expect(try sqliteRows(store, "SELECT count(*) FROM items") == [[.integer(60_000)]])
        #expect(try sqliteRows(store, "SELECT note FROM items WHERE id = 59000") == [[.text("changed")]])
    }
}
