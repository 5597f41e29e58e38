import Drivers
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Running Sluice from cron, from the outside (the built binary): exit statuses, the report on
/// every outcome, rejects files per run, the dry run against a real target, logs, the lock wait.
@Suite struct CronTests {
    static let model = """
        version: 1
        entities:
          Item:
            attributes:
              id: integer64!
              name: string!
              qty: integer64
            relationships:
              shelf: { destination: Shelf, inverse: items }
            unique: [[id]]
          Shelf:
            attributes:
              code: string!
            relationships:
              items: { destination: Item, toMany: true, inverse: shelf }
            unique: [[code]]
        """

    /// A pipeline loading `items.csv` (id, name, qty, shelf) into `out/items.sqlite`, each item's
    /// shelf found by its code (`create` true: made when missing; false: it must be stored).
    static func pipeline(in directory: TemporaryDirectory, max: Int = 0, create: Bool = true) throws -> URL {
        _ = try directory.file("m.yaml", contents: model)
        return try directory.file(
            "p.yaml",
            contents: """
                model: m.yaml
                target: { store: sqlite, path: out/items.sqlite }
                merge: object-trumps
                errors: { max: \(max) }
                sources:
                  - name: items
                    path: items.csv
                    entity: Item
                    key: id
                    fields: { id: id, name: name, qty: qty }
                    relationships:
                      shelf: { entity: Shelf, key: { code: shelf }, missing: \(create ? "create" : "reject") }
                """)
    }

    static func report(_ path: URL) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any])
    }

    /// Takes the lock of the store at `store` as another run would (its folder made first); close
    /// the descriptor to release it.
    static func holdLock(of store: String) throws -> Int32 {
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: store).deletingLastPathComponent(), withIntermediateDirectories: true)
        let lock = open(store + ".lock", O_RDWR | O_CREAT, 0o644)
        try #require(flock(lock, LOCK_EX) == 0)
        return lock
    }

    static func rejectsFiles(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".rejects-") }.sorted()
    }

    @Test func versionAndUsageErrors() throws {
        let version = try runSluice(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3)
        for arguments in [
            ["import"], ["run", "p.yaml", "--no-such-flag"], ["import", "x.csv", "--to", "y", "--batch-size", "0"],
        ] {
            let result = try runSluice(arguments)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("Usage:") || result.stderr.contains("Error:"))
        }
        let help = try runSluice(["--help"])
        #expect(help.status == 0 && help.stdout.contains("4  another run holds the target's lock"))
    }

    @Test func theReportOnEveryOutcome() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory)
        let reportFile = directory.url.appendingPathComponent("report.json")
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,3,A\n2,nut,4,A\n")
        let done = try runSluice(["run", pipeline.path, "--report", reportFile.path])
        #expect(done.status == 0, "\(done.stderr)")
        var report = try Self.report(reportFile)
        #expect(report["status"] as? String == "done" && report["exitStatus"] as? Int == 0)
        #expect(report["error"] is NSNull && report["rejectsFile"] is NSNull)
        #expect((report["version"] as? String)?.isEmpty == false)
        #expect(report["pipeline"] as? String == pipeline.path && report["command"] as? String == "run")
        #expect(((report["target"] as? [String: Any])?["path"] as? String)?.hasSuffix("out/items.sqlite") == true)
        #expect((report["inputs"] as? [[String: Any]])?.first?["format"] as? String == "csv")
        let parse = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let started = try parse.parse(try #require(report["started"] as? String))
        let ended = try parse.parse(try #require(report["ended"] as? String))
        #expect(started <= ended && abs(started.timeIntervalSinceNow) < 120)
        #expect(((report["entities"] as? [String: Any])?["Item"] as? [String: Int])?["inserted"] == 2)
        #expect((report["stages"] as? [[String: Any]])?.map { $0["name"] as? String }.last == "commit")

        // Rejected: over errors.max.
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,x,A\n3,washer,5,B\n")
        let rejected = try runSluice(["run", pipeline.path, "--report", reportFile.path])
        #expect(rejected.status == 1)
        report = try Self.report(reportFile)
        #expect(report["status"] as? String == "rejected" && report["exitStatus"] as? Int == 1)
        #expect((report["error"] as? [String: Any])?["type"] as? String == "RunError.tooManyRejects")
        let rejectsFile = try #require(report["rejectsFile"] as? String)
        #expect(FileManager.default.fileExists(atPath: rejectsFile))
        // The failed run says why, and where the rest are.
        #expect(rejected.stderr.contains(#""x" is not a whole number"#) && rejected.stderr.contains(rejectsFile))

        // Failed: an input error, with its position.
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n4,\"bolt,1,A\n")
        let failed = try runSluice(["run", pipeline.path, "--report", reportFile.path])
        #expect(failed.status == 3, "\(failed.stderr)")
        report = try Self.report(reportFile)
        let error = try #require(report["error"] as? [String: Any])
        #expect(report["status"] as? String == "failed")
        #expect((error["type"] as? String)?.hasPrefix("ReaderError.") == true)
        #expect((error["file"] as? String)?.hasSuffix("items.csv") == true && error["line"] as? Int == 2)

        // Failed before anything ran: the pipeline file's mistake, with file, line and column.
        let broken = try directory.file(
            "broken.yaml", contents: "model: m.yaml\ntarget: { store: sqlite, path: x }\nsourcez: []\n")
        let usage = try runSluice(["run", broken.path, "--report", reportFile.path])
        #expect(usage.status == 2)
        report = try Self.report(reportFile)
        #expect(report["status"] as? String == "failed" && report["exitStatus"] as? Int == 2)
        #expect((report["error"] as? [String: Any])?["line"] as? Int == 3)

        // Locked: another process holds the target's lock.
        let lock = try Self.holdLock(of: directory.url.appendingPathComponent("out/items.sqlite").path)
        let locked = try runSluice(["run", pipeline.path, "--report", reportFile.path])
        #expect(locked.status == 4)
        report = try Self.report(reportFile)
        #expect(report["status"] as? String == "locked" && report["exitStatus"] as? Int == 4)
        close(lock)
    }

    @Test func aReportThatCannotBeWrittenStopsTheRunBeforeTheTarget() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,3,A\n")
        let result = try runSluice([
            "run", pipeline.path, "--report", directory.url.appendingPathComponent("no/such/r.json").path,
        ])
        #expect(result.status == 3 && result.stderr.contains("the report"))
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("out/items.sqlite").path))
    }

    @Test func rejectsAreKeptPerRunAndNamedEvenWhenQuiet() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory, max: 5)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,x,A\n2,nut,4,A\n")
        let out = directory.url.appendingPathComponent("out")
        var files: [[String]] = []
        for _ in 0..<2 {
            let result = try runSluice(["run", pipeline.path, "--quiet"])
            #expect(result.status == 0 && result.stdout.isEmpty)
            let named = try Self.rejectsFiles(out)
            files.append(named)
            #expect(result.stderr.contains("1 record was rejected (errors.max 5); they are in"))
            #expect(named.contains { result.stderr.contains($0) })
        }
        #expect(files[0].count == 1 && files[1].count == 2, "\(files)")
        for name in files[1] {
            let lines = try String(contentsOf: out.appendingPathComponent(name), encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains(#""raw":"x""#))
        }
        // --rejects naming a folder: a file of the run's own in it; naming a file: that file.
        let folder = directory.url.appendingPathComponent("rejects/")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(try runSluice(["run", pipeline.path, "--quiet", "--rejects", folder.path]).status == 0)
        #expect(try Self.rejectsFiles(folder).count == 1)
        let file = directory.url.appendingPathComponent("bad.jsonl")
        #expect(try runSluice(["run", pipeline.path, "--quiet", "--rejects", file.path]).status == 0)
        #expect(FileManager.default.fileExists(atPath: file.path))
        #expect(try Self.rejectsFiles(out).count == 2)
    }

    @Test func aDryRunPreviewsTheRealRunAgainstTheTarget() throws {
        let directory = try TemporaryDirectory()
        // The first run stores shelves A and B and two items.
        _ = try Self.pipeline(in: directory)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,3,A\n2,nut,4,B\n")
        #expect(try runSluice(["run", directory.url.appendingPathComponent("p.yaml").path]).status == 0)
        // The incremental run finds shelves in the target (not creating them): one update, one
        // unchanged, one new item, one rejected (shelf Z is not stored).
        let pipeline = try Self.pipeline(in: directory, max: 5, create: false)
        _ = try directory.file(
            "items.csv", contents: "id,name,qty,shelf\n1,bolt,30,A\n2,nut,4,B\n3,pin,1,B\n4,cap,1,Z\n")
        let target = directory.url.appendingPathComponent("out/items.sqlite")
        let out = directory.url.appendingPathComponent("out")
        let before = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        let stored = try Data(contentsOf: target)
        let dryReport = directory.url.appendingPathComponent("dry.json")
        let dry = try runSluice(["run", pipeline.path, "--dry-run", "--report", dryReport.path])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("Item: 4 read, 1 inserted, 1 updated, 1 unchanged, 1 rejected"), "\(dry.stdout)")
        #expect(dry.stdout.contains("Z"), "the dry run shows why: \(dry.stdout)")
        // Nothing written: not the target, not a rejects file.
        #expect(try Data(contentsOf: target) == stored)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == before)
        let realReport = directory.url.appendingPathComponent("real.json")
        let real = try runSluice(["run", pipeline.path, "--report", realReport.path])
        #expect(real.status == 0)
        let counts = { (file: URL) in try (Self.report(file)["entities"] as? [String: [String: Int]]) ?? [:] }
        #expect(try counts(dryReport) == counts(realReport))
        #expect(try Self.report(dryReport)["dryRun"] as? Bool == true)
        #expect(try Self.rejectsFiles(out).count == 1)
    }

    @Test func logsAsJSONLinesAndTimestampedText() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory, max: 5)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,x,A\n")
        let json = try runSluice(["run", pipeline.path, "--quiet", "--log-format", "json", "--log-level", "info"])
        #expect(json.status == 0)
        let lines = json.stderr.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["time"] is String && object["level"] is String && object["message"] is String)
        }
        #expect(lines.contains { $0.contains(#""level":"warning""#) && $0.contains("rejected") })
        // From info down: the run's start and end, with its counts as numbers.
        #expect(lines.contains { $0.contains(#""message":"run started""#) && $0.contains(#""dryRun":false"#) })
        #expect(lines.contains { $0.contains(#""message":"run done""#) && $0.contains(#""rejected":1"#) })
        let text = try runSluice(["run", pipeline.path, "--quiet"])
        let line = try #require(text.stderr.split(separator: "\n").first)
        #expect(
            line.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z sluice: warning: "#, options: .regularExpression)
                != nil)
        #expect(!text.stderr.contains("\u{1B}["), "no colour off a terminal")
        let quiet = try runSluice(["run", pipeline.path, "--quiet", "--log-level", "error"])
        #expect(quiet.stderr.isEmpty)
    }

    @Test func waitLockWaitsForTheRunningImport() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,3,A\n")
        let lock = try Self.holdLock(of: directory.url.appendingPathComponent("out/items.sqlite").path)
        #expect(try runSluice(["run", pipeline.path]).status == 4)
        Thread {
            usleep(1_000_000)
            close(lock)
        }.start()
        let waited = try runSluice(["run", pipeline.path, "--wait-lock", "30"])
        #expect(waited.status == 0, "\(waited.stderr)")
    }

    @Test func outputsNeverReplaceWhatTheRunReadsOrWrites() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory, max: 5)
        let input = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,x,A\n2,nut,4,A\n")
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
        let target = directory.url.appendingPathComponent("out/items.sqlite")
        let files = [input, pipeline, directory.url.appendingPathComponent("m.yaml"), target]
        let before = try files.map { try Data(contentsOf: $0) }
        for file in files {
            for option in ["--report", "--rejects"] {
                let result = try runSluice(["run", pipeline.path, "--quiet", option, file.path])
                #expect(result.status == 2, "\(option) \(file.lastPathComponent): \(result.status) \(result.stderr)")
            }
        }
        let saved = try runSluice(["import", input.path, "--to", target.path, "--save-pipeline", input.path])
        #expect(saved.status == 2 && saved.stderr.contains("is an input"))
        // A file another program wrote is not replaced by a report either.
        let notes = try directory.file("notes.txt", contents: "keep me\n")
        #expect(try runSluice(["run", pipeline.path, "--quiet", "--report", notes.path]).status == 2)
        #expect(try String(contentsOf: notes, encoding: .utf8) == "keep me\n")
        #expect(try files.map { try Data(contentsOf: $0) } == before)
        // A rejects folder that is not there is made before the run reads, as the target's is.
        let missing = try runSluice(["run", pipeline.path, "--rejects", directory.url.path + "/none/"])
        #expect(missing.status == 0, "\(missing.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.url.path + "/none"))
    }

    @Test func aFailedRunLeavesTheTargetByteForByte() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,3,A\n")
        #expect(try runSluice(["run", pipeline.path]).status == 0)
        let target = directory.url.appendingPathComponent("out/items.sqlite")
        let before = try Data(contentsOf: target)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n2,nut,x,A\n3,pin,y,B\n")
        let failed = try runSluice(["run", pipeline.path])
        #expect(failed.status == 1)
        #expect(try Data(contentsOf: target) == before, "not even the header's journal mode")
        // The first reasons are the first records of the input.
        #expect(
            failed.stderr.contains("items.csv:2:1 (record 1)") && failed.stderr.contains("items.csv:3:1 (record 2)"))
    }

    @Test func anEmptyVariableIsRefusedNotTakenForNothing() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("m.yaml", contents: Self.model)
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                model: m.yaml
                target: { store: sqlite, path: "${OUTDIR}/items.sqlite" }
                sources:
                  - { name: items, path: items.csv, entity: Item, key: id, fields: { id: id, name: name } }
                """)
        _ = try directory.file("items.csv", contents: "id,name\n1,bolt\n")
        for command in ["check", "run"] {
            let result = try runSluice([command, pipeline.path], environment: ["OUTDIR": ""])
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("the environment variable OUTDIR is empty"))
        }
        #expect(!FileManager.default.fileExists(atPath: "/items.sqlite"))
    }

    /// A target named through a symbolic link: the real store is locked, copied and replaced, and
    /// the link stays a link (before, the link itself was copied and the store written in place).
    @Test func aSymlinkedTargetKeepsTheAtomicCommit() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,3,A\n")
        #expect(try runSluice(["run", pipeline.path]).status == 0)
        let out = directory.url.appendingPathComponent("out")
        let real = directory.url.appendingPathComponent("real.sqlite")
        try FileManager.default.moveItem(at: out.appendingPathComponent("items.sqlite"), to: real)
        try FileManager.default.createSymbolicLink(
            atPath: out.appendingPathComponent("items.sqlite").path, withDestinationPath: "../real.sqlite")
        let before = try Data(contentsOf: real)
        // A failing run leaves the real store as it was.
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n2,nut,x,A\n")
        #expect(try runSluice(["run", pipeline.path]).status == 1)
        #expect(try Data(contentsOf: real) == before)
        // The lock is the real store's.
        let lock = try Self.holdLock(of: real.path)
        #expect(try runSluice(["run", pipeline.path]).status == 4)
        close(lock)
        // A run that succeeds replaces the real store; the link is still a link to it.
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n2,nut,4,A\n")
        let done = try runSluice(["run", pipeline.path])
        #expect(done.status == 0, "\(done.stderr)")
        let link = try FileManager.default.destinationOfSymbolicLink(
            atPath: out.appendingPathComponent("items.sqlite").path)
        #expect(link == "../real.sqlite")
        #expect(try sqliteRows(real.path, "SELECT count(*) FROM Item") == [[.integer(2)]])
        #expect(leftovers(beside: out.appendingPathComponent("items.sqlite").path).isEmpty)
    }

    /// A missing value is `null` in the rejects file, never the word `nil`.
    @Test func aMissingValueIsJSONNullInRejects() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("m.yaml", contents: Self.model)
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                model: m.yaml
                target: { store: sqlite, path: out/items.sqlite }
                errors: { max: 5 }
                sources:
                  - { name: items, path: items.xml, record: /items/item, entity: Item, key: id, \
                fields: { id: "@id", name: name } }
                """)
        _ = try directory.file("items.xml", contents: #"<items><item id="1"/></items>"#)
        let rejects = directory.url.appendingPathComponent("r.jsonl")
        let result = try runSluice(["run", pipeline.path, "--quiet", "--rejects", rejects.path])
        #expect(result.status == 0, "\(result.stderr)")
        let line = try String(contentsOf: rejects, encoding: .utf8)
        #expect(line.contains(#""property":"name""#) && line.contains(#""raw":null"#), "\(line)")
        #expect(!line.contains("nil"), "\(line)")
    }

    /// `batch.contexts` is bounded: each context holds a batch in memory.
    @Test func contextsAreBounded() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory)
        let text = try String(contentsOf: pipeline, encoding: .utf8)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,3,A\n")
        _ = try directory.file("p.yaml", contents: text + "\nbatch: { contexts: 100000 }\n")
        let result = try runSluice(["check", pipeline.path])
        #expect(result.status == 2 && result.stderr.contains("batch.contexts must be a whole number from 1 to 64"))
        _ = try directory.file("p.yaml", contents: text + "\nbatch: { contexts: 64 }\n")
        #expect(try runSluice(["run", pipeline.path]).status == 0)
    }
}
