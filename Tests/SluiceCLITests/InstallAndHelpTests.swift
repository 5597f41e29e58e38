import Foundation
import TestSupport
import Testing

/// What a new user meets first: `check` catching what would reject every record, `make install`,
/// help that fits 80 columns, `inspect` showing the schema and rows.
@Suite struct InstallAndHelpTests {
    @Test func checkCatchesWhatWouldRejectEveryRecord() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Item:
                    attributes: { id: integer64!, name: string!, made: date, qty: string }
                    unique: [[id]]
                """)
        func pipeline(_ fields: String, path: String = "items.csv") throws -> URL {
            try directory.file(
                "p.yaml",
                contents: """
                    model: m.yaml
                    target: { store: sqlite, path: out/x.sqlite }
                    sources:
                      - name: items
                        path: \(path)
                        format: csv
                        entity: Item
                        key: id
                        fields: { id: id, name: name, \(fields) }
                    """)
        }
        _ = try directory.file("items.csv", contents: "id,name,made,qty\n1,a,01.02.2024,3\n")
        // A typo in a date format: the letters at fault, with the position.
        var result = try runSluice(["check", try pipeline("made: { column: made, date: iso8610 }").path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("p.yaml:9:") && result.stderr.contains(#"unknown date format "iso8610""#))
        // Patterns that parse but surely mean something else: minutes for months, the week-based
        // year, the day of the year.
        for (pattern, said) in [
            ("yyyy-mm-dd", "`m` is the minute"), ("YYYY-MM-dd", "week-based year"), ("yyyy-MM-DD", "day of the year"),
        ] {
            result = try runSluice(["check", try pipeline("made: { column: made, date: \"\(pattern)\" }").path])
            #expect(result.status == 2 && result.stderr.contains(said), "\(pattern): \(result.stderr)")
        }
        // An unknown transform.
        result = try runSluice(["check", try pipeline("qty: { column: qty, transform: [trim, shout] }").path])
        #expect(result.status == 2 && result.stderr.contains(#"unknown transform "shout""#))
        // A required attribute nothing fills.
        _ = try pipeline("made: { column: made, date: dd.MM.yyyy }")
        _ = try directory.file(
            "p.yaml",
            contents: try String(contentsOf: directory.url.appendingPathComponent("p.yaml"), encoding: .utf8)
                .replacingOccurrences(of: "name: name, ", with: ""))
        result = try runSluice(["check", directory.url.appendingPathComponent("p.yaml").path])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("Item.name is a required attribute that no field, default, lookup or parent fills"))
        #expect(!result.stdout.contains("OK"))
        // A missing input: not OK either.
        result = try runSluice([
            "check", try pipeline("made: { column: made, date: dd.MM.yyyy }", path: "gone.csv").path,
        ])
        #expect(
            result.status == 3 && result.stderr.contains("gone.csv does not exist") && !result.stdout.contains("OK"))
        // A missing input whose format the pipeline does not name: its name tells (exit 3, not 2).
        let unnamed = try directory.file(
            "q.yaml",
            contents: try String(contentsOf: try pipeline("made: made", path: "later.csv"), encoding: .utf8)
                .replacingOccurrences(of: "    format: csv\n", with: ""))
        result = try runSluice(["check", unnamed.path])
        #expect(result.status == 3 && result.stderr.contains("later.csv does not exist"), "\(result.stderr)")
        #expect(try runSluice(["run", unnamed.path]).status == 3)
        // All put right.
        result = try runSluice(["check", try pipeline("made: { column: made, date: dd.MM.yyyy }").path])
        #expect(result.status == 0 && result.stdout.contains(": OK"), "\(result.stderr)")
    }

    @Test func makeInstallGivesAWorkingSluiceManPageAndCompletions() throws {
        let prefix = try TemporaryDirectory()
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // The debug binary `make test` built: the release install's recipe without its build step
        // (a build from inside `swift test` would wait for the test run's own lock on .build).
        make.arguments = ["make", "install", "PREFIX=\(prefix.url.path)", "CONFIGURATION=debug", "INSTALL_BUILD=true"]
        make.currentDirectoryURL = repositoryRoot
        make.standardOutput = FileHandle.nullDevice
        try make.run()
        make.waitUntilExit()
        #expect(make.terminationStatus == 0)
        let installed = Process()
        let out = Pipe()
        installed.executableURL = prefix.url.appendingPathComponent("bin/sluice")
        installed.arguments = ["--version"]
        installed.standardOutput = out
        try installed.run()
        installed.waitUntilExit()
        let version = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let built = try runSluice(["--version"]).stdout
        #expect(installed.terminationStatus == 0 && version == built)
        let man = try String(
            contentsOf: prefix.url.appendingPathComponent("share/man/man1/sluice.1"), encoding: .utf8)
        #expect(man.hasPrefix(".TH SLUICE 1"))
        for command in ["run", "import", "check", "inspect", "export"] {
            #expect(man.contains(".SS sluice \(command)"))
        }
        #expect(man.contains("\\-\\-wait\\-lock"))
        for file in [
            "share/bash-completion/completions/sluice", "share/zsh/site-functions/_sluice",
            "share/fish/vendor_completions.d/sluice.fish",
        ] {
            let script = try String(contentsOf: prefix.url.appendingPathComponent(file), encoding: .utf8)
            #expect(script.contains("sluice") && script.contains("import"), "\(file)")
        }
        // `make uninstall` takes all of it away, and nothing else under the prefix.
        let other = try prefix.file("share/man/man1/other.1", contents: "kept")
        let uninstall = Process()
        uninstall.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        uninstall.arguments = ["make", "uninstall", "PREFIX=\(prefix.url.path)"]
        uninstall.currentDirectoryURL = repositoryRoot
        uninstall.standardOutput = FileHandle.nullDevice
        try uninstall.run()
        uninstall.waitUntilExit()
        #expect(uninstall.terminationStatus == 0)
        let left = FileManager.default.enumerator(atPath: prefix.url.path)?.compactMap { $0 as? String }.filter {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(
                atPath: prefix.url.appendingPathComponent($0).path, isDirectory: &isFolder)
                && !isFolder.boolValue
        }
        #expect(
            left == ["share/man/man1/other.1"] && FileManager.default.fileExists(atPath: other.path), "\(left ?? [])")
    }

    /// Every help text within 80 columns, and every line of every discussion shown as written (never
    /// re-wrapped into a ragged paragraph).
    @Test func everyHelpFitsEightyColumns() throws {
        let dump = try runSluice(["--experimental-dump-help"])
        let info = try #require(JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let root = try #require(info["command"] as? [String: Any])
        var commands: [(name: String, discussion: String)] = [("", root["discussion"] as? String ?? "")]
        for command in root["subcommands"] as? [[String: Any]] ?? [] {
            commands.append((command["commandName"] as? String ?? "", command["discussion"] as? String ?? ""))
        }
        #expect(commands.count >= 10)
        for (name, discussion) in commands {
            let help = try runSluice(name.isEmpty ? ["--help"] : ["help", name])
            #expect(help.status == 0)
            let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            for line in lines { #expect(line.count <= 80, "sluice help \(name): \(line)") }
            for line in discussion.split(separator: "\n") where !line.isEmpty {
                #expect(lines.contains(line), "sluice help \(name) re-wraps: \(line)")
            }
        }
    }

    @Test func inspectShowsTheSchemaAndAFewRowsPerEntity() throws {
        let directory = try TemporaryDirectory()
        let csv = try directory.file(
            "people.csv", contents: "id,name,city\n1,Ada Lovelace,London\n2,Alan,\n3,Grace,NYC\n4,Linus,Helsinki\n")
        let store = directory.url.appendingPathComponent("people.sqlite").path
        #expect(try runSluice(["import", csv.path, "--to", store, "--quiet"]).status == 0)
        let result = try runSluice(["inspect", store, "--rows", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("people (entity People): 4 rows"), "\(result.stdout)")
        #expect(result.stdout.contains("id integer64") && result.stdout.contains("city string?"))
        #expect(result.stdout.contains(#"name="Ada Lovelace""#) && result.stdout.contains("id=2"))
        #expect(!result.stdout.contains("Grace"), "two rows only")
        let json = try runSluice(["inspect", store, "--json"])
        let summary = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let schema = try #require((summary["schema"] as? [[String: Any]])?.first)
        #expect((schema["rows"] as? [[String: Any]])?.count == 3)
    }
}
