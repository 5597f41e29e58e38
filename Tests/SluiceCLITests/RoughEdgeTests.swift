import Foundation
import TestSupport
import Testing

/// What a new user trips over first, each tried from the outside: a typo in a command or option, a
/// missing pipeline file, a file that is not a store, what `inspect` and `check` print, an Xcode
/// model's warnings, errors about the run's work copy, a dry run asked to save a pipeline, lock
/// files left behind, and a saved pipeline moved with its inputs.
@Suite struct RoughEdgeTests {
    @Test func aMistypedCommandOrOptionGetsTheNearestName() throws {
        let command = try runSluice(["imprt", "a.csv", "--to", "x.sqlite"])
        #expect(command.status == 2)
        #expect(command.stderr.contains("Unknown command 'imprt'. Did you mean 'import'?"), "\(command.stderr)")
        #expect(!command.stderr.contains("--to"), "the options of a command not run are not blamed")
        let option = try runSluice(["--verison"])
        #expect(option.status == 2)
        #expect(option.stderr.contains("Unknown option '--verison'. Did you mean '--version'?"), "\(option.stderr)")
        let far = try runSluice(["zzz"])
        #expect(far.status == 2 && far.stderr.contains("Unknown command 'zzz'") && !far.stderr.contains("Did you mean"))
        // An option the command does not have is never "near" itself (infer's help mentions import's --model).
        let other = try runSluice(["infer", "in.csv", "--model", "m.yaml"])
        #expect(other.status == 2 && !other.stderr.contains("Did you mean '--model'"), "\(other.stderr)")
        let subcommand = try runSluice(["run", "--dryrun", "p.yaml"])
        #expect(subcommand.stderr.components(separatedBy: "Did you mean").count == 2, "\(subcommand.stderr)")
    }

    @Test func aPipelineOrModelFileThatCannotBeReadIsNamedWithWhy() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.url.appendingPathComponent("nope.yaml").path
        let result = try runSluice(["run", missing])
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(missing): cannot read the pipeline file: no such file"), "\(result.stderr)")
        #expect(!result.stderr.contains(":0:0"), "\(result.stderr)")
        let folder = try runSluice(["check", directory.url.path])
        #expect(folder.status == 2 && folder.stderr.contains("it is a folder"), "\(folder.stderr)")
        let pipeline = try directory.file("p.yaml", contents: "version: 1\nmodel: gone.model.yaml\nsources: []\n")
        let model = try runSluice(["check", pipeline.path])
        #expect(model.status == 2)
        #expect(model.stderr.contains("gone.model.yaml: cannot read the model file: no such file"), "\(model.stderr)")
        #expect(!model.stderr.contains("NSCocoaErrorDomain") && !model.stderr.contains(":0:0"), "\(model.stderr)")
    }

    @Test func inspectOfAFileThatIsNotAStoreSaysSo() throws {
        let directory = try TemporaryDirectory()
        let text = try directory.file("notes.db", contents: "hello, not a database\n")
        let result = try runSluice(["inspect", text.path])
        #expect(result.status == 3)
        #expect(result.stderr.contains("The file is not a store"), "\(result.stderr)")
        #expect(!result.stderr.contains("SELECT") && !result.stderr.contains("sqlite_master"), "\(result.stderr)")
    }

    /// Tables and columns by their stored names, one object per line however long; JSON with
    /// numbers as numbers and missing values as null.
    @Test func inspectShowsTablesColumnsAndOneObjectPerLine() throws {
        let directory = try TemporaryDirectory()
        let long = String(repeating: "word ", count: 30)
        let csv = try directory.file(
            "Stock Items.csv", contents: "Item Code,Unit Price,note\n1,2.50,\"\(long)\"\n2,3.75,\n")
        let store = directory.url.appendingPathComponent("stock.sqlite").path
        #expect(try runSluice(["import", csv.path, "--to", store, "--quiet"]).status == 0)
        let result = try runSluice(["inspect", store])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let rows = lines.filter { $0.hasPrefix("  | ") }
        #expect(rows.count == 2, "\(result.stdout)")
        #expect(rows.allSatisfy { $0.contains("Item Code=") && $0.contains("Unit Price=") }, "\(rows)")
        #expect(rows.last?.hasSuffix("note=null") == true, "\(rows)")
        #expect(lines.contains { $0.hasPrefix("Stock Items (entity ") && $0.hasSuffix(": 2 rows") }, "\(result.stdout)")
        let json = try runSluice(["inspect", store, "--json"])
        let summary = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let schema = try #require((summary["schema"] as? [[String: Any]])?.first)
        #expect(schema["table"] as? String == "Stock Items")
        let columns = try #require(schema["columns"] as? [[String: Any]])
        #expect(columns.map { $0["name"] as? String } == ["Item Code", "Unit Price", "note"])
        let stored = try #require(schema["rows"] as? [[String: Any]])
        #expect(stored.count == 2)
        #expect((stored[0]["Item Code"] as? NSNumber)?.intValue == 1, "a number, not text: \(stored[0])")
        #expect(stored[1]["note"] is NSNull, "\(stored[1])")
    }

    @Test func checkNamesTheMergePolicyAsPipelineFilesDo() throws {
        let result = try runSluice(["check", "Pipelines/shop.yaml"])
        #expect(result.stdout.contains("merge object-trumps"), "\(result.stdout)")
        #expect(!result.stdout.contains("objectTrumps"), "\(result.stdout)")
    }

    @Test func anXcodeModelsWarningsComeOnce() throws {
        let directory = try TemporaryDirectory()
        let csv = try directory.file("athletes.csv", contents: "name,weightKg\nAda,61.5\n")
        let model = repositoryRoot.appendingPathComponent("SampleData/xcode/Fitness.xcdatamodel").path
        let store = directory.url.appendingPathComponent("fit.sqlite").path
        let result = try runSluice(["import", csv.path, "--to", store, "--model", model, "--entity", "Athlete"])
        let warning = "not used by Sluice: "
        #expect(result.stderr.components(separatedBy: warning).count == 2, "\(result.stderr)")
        #expect(result.stderr.contains("Athlete.preferences is Transformable"), "one warning names every part")
    }

    /// A table of another program's database with the name the store would create: the error names
    /// the target, never the run's copy of it (removed), and no lock file is left.
    @Test func aNameClashNamesTheTargetNotItsWorkCopy() throws {
        let directory = try TemporaryDirectory()
        let database = directory.url.appendingPathComponent("app.db").path
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = [
            "sqlite3", database, "CREATE TABLE people(x TEXT, y TEXT); INSERT INTO people VALUES (1, 2);",
        ]
        try sqlite.run()
        sqlite.waitUntilExit()
        let csv = try directory.file("people.csv", contents: "id,name\n1,Ada\n")
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let result = try runSluice(["import", csv.path, "--to", database])
        #expect(result.status != 0)
        #expect(result.stderr.contains("people") && result.stderr.contains(database), "\(result.stderr)")
        #expect(!result.stderr.contains("sluice-tmp"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == before)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(names == ["app.db", "people.csv"], "\(names)")
    }

    @Test func aDryRunWritesNoPipelineAndSaysSo() throws {
        let directory = try TemporaryDirectory()
        let csv = try directory.file("items.csv", contents: "id,name\n1,a\n")
        let saved = directory.url.appendingPathComponent("items.yaml").path
        let store = directory.url.appendingPathComponent("items.sqlite").path
        let result = try runSluice(["import", csv.path, "--to", store, "--dry-run", "--save-pipeline", saved])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--save-pipeline") && result.stderr.contains("--dry-run"), "\(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(names == ["items.csv"], "\(names)")
    }

    /// A lock file lasts as long as its run: none after a run that worked, nor after a first run that
    /// failed, nor after a dry run.
    @Test func noLockFileOutlivesItsRun() throws {
        let directory = try TemporaryDirectory()
        let good = try directory.file("good.csv", contents: "id,name\n1,a\n")
        let bad = try directory.file("bad.csv", contents: "id,name\n1,a\n")
        let store = directory.url.appendingPathComponent("items.sqlite").path
        let failed = try runSluice(["import", bad.path, "--to", store, "--key", "id", "--model", "nope.yaml"])
        #expect(failed.status != 0)
        #expect(!FileManager.default.fileExists(atPath: store + ".lock"))
        for arguments in [["--quiet"], ["--dry-run"]] {
            let result = try runSluice(["import", good.path, "--to", store] + arguments)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: store + ".lock"), "\(arguments)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(names == ["bad.csv", "good.csv", "items.sqlite"], "\(names)")
    }

    /// A saved pipeline names its files relative to itself: the folder moved elsewhere still runs.
    @Test func aSavedPipelineMovesWithItsInputs() throws {
        let directory = try TemporaryDirectory()
        let project = directory.url.appendingPathComponent("project")
        try FileManager.default.createDirectory(
            at: project.appendingPathComponent("pipelines"), withIntermediateDirectories: true)
        let csv = project.appendingPathComponent("items.csv")
        try "id,name\n1,a\n2,b\n".write(to: csv, atomically: true, encoding: .utf8)
        let pipeline = project.appendingPathComponent("pipelines/items.yaml").path
        let store = project.appendingPathComponent("items.sqlite").path
        let first = try runSluice(["import", csv.path, "--to", store, "--save-pipeline", pipeline])
        #expect(first.status == 0, "\(first.stderr)")
        let text = try String(contentsOfFile: pipeline, encoding: .utf8)
        #expect(!text.contains(directory.url.path), "\(text)")
        #expect(text.contains("path: ../items.csv") && text.contains("model: items.model.yaml"), "\(text)")
        let moved = directory.url.appendingPathComponent("moved")
        try FileManager.default.moveItem(at: project, to: moved)
        let again = try runSluice(["run", moved.appendingPathComponent("pipelines/items.yaml").path])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("2 read, 0 inserted, 0 updated, 2 unchanged"), "\(again.stdout)")
    }
}
