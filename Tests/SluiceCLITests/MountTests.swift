import Drivers
import Foundation
import TestSupport
import Testing

/// Inputs and outputs on file systems that refuse writes: a WAL-mode SQLite input on a read-only
/// mount, a rejects file on a full one. Each test mounts a small tmpfs of its own (it needs the
/// right to mount, which CI's machine has; elsewhere the suite is skipped).
/// Mounting small tmpfs file systems for `MountTests`.
enum Mounts {
    static let canMount: Bool = {
        guard let directory = try? TemporaryDirectory() else { return false }
        let mounted = (try? mount(directory.url.path, size: "64k")) != nil
        if mounted { unmount(directory.url.path) }
        return mounted
    }()

    static func command(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    static func mount(_ path: String, size: String) throws {
        let result = try command(["mount", "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        guard result.status == 0 else { throw CocoaError(.fileWriteNoPermission) }
    }

    static func unmount(_ path: String) { _ = try? command(["umount", path]) }
}

@Suite(.enabled(if: Mounts.canMount, "needs the right to mount a tmpfs")) struct MountTests {
    /// A WAL-mode database on a read-only mount: without a log it is read (opened immutable); with a
    /// `-wal` file it is refused saying why and what to do — never read without its log.
    @Test func aWALDatabaseOnAReadOnlyMountIsReadOrRefusedSayingWhy() throws {
        let directory = try TemporaryDirectory()
        let mountPoint = directory.url.appendingPathComponent("ro").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try Mounts.mount(mountPoint, size: "4m")
        defer { Mounts.unmount(mountPoint) }
        // One database checkpointed (no -wal left), one whose rows are still in its -wal file.
        let script = """
            import sqlite3, shutil, sys
            folder = sys.argv[1]
            c = sqlite3.connect(folder + '/plain.db')
            c.execute('PRAGMA journal_mode=WAL')
            c.execute('PRAGMA wal_autocheckpoint=0')
            c.execute('CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT)')
            c.execute("INSERT INTO items VALUES (1, 'one'), (2, 'two')")
            c.commit()
            shutil.copy(folder + '/plain.db', folder + '/logged.db')
            shutil.copy(folder + '/plain.db-wal', folder + '/logged.db-wal')
            c.close()
            """
        let made = try Mounts.command(["python3", "-c", script, mountPoint])
        #expect(made.status == 0, "\(made.output)")
        #expect(!FileManager.default.fileExists(atPath: mountPoint + "/plain.db-wal"))
        #expect(FileManager.default.fileExists(atPath: mountPoint + "/logged.db-wal"))
        let remount = try Mounts.command(["mount", "-o", "remount,ro", mountPoint])
        #expect(remount.status == 0, "\(remount.output)")

        let store = directory.url.appendingPathComponent("plain.sqlite").path
        let read = try runSluice(["import", mountPoint + "/plain.db", "--to", store])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(
            try sqliteRows(store, "SELECT id, name FROM items ORDER BY id") == [
                [.integer(1), .text("one")], [.integer(2), .text("two")],
            ])
        let refused = try runSluice([
            "import", mountPoint + "/logged.db", "--to", directory.url.appendingPathComponent("l.sqlite").path,
        ])
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(
            refused.stderr.contains("a WAL-mode database whose log (\(mountPoint)/logged.db-wal)")
                && refused.stderr.contains("copy the database with its -wal file to a writable folder"),
            "\(refused.stderr)")
    }

    /// The rejects file on a file system that fills up: exit 3 naming the rejects file and the
    /// system's reason; what was written is whole lines only; nothing is left beside it; the target
    /// is not made.
    @Test func aFullDiskWhileWritingRejectsFailsNamingTheFileWithWholeLines() throws {
        let directory = try TemporaryDirectory()
        let mountPoint = directory.url.appendingPathComponent("small").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try Mounts.mount(mountPoint, size: "64k")
        defer { Mounts.unmount(mountPoint) }
        var csv = "id,qty\n"
        for row in 1...4000 { csv += "\(row),not-a-number-\(row)\n" }
        let input = try directory.file("items.csv", contents: csv)
        let model = try directory.file(
            "m.yaml", contents: "version: 1\nentities:\n  Item:\n    attributes: { id: integer64!, qty: integer64 }\n")
        let rejects = mountPoint + "/rejects.jsonl"
        let store = directory.url.appendingPathComponent("items.sqlite").path
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: \(model.path)
                target: { store: sqlite, path: \(store) }
                errors: { max: 100000, rejects: \(rejects) }
                sources:
                  - { name: items, path: \(input.path), entity: Item, fields: { id: id, qty: qty } }
                """)
        let result = try runSluice(["run", pipeline.path])
        #expect(result.status == 3, "\(result.stderr)")
        #expect(
            result.stderr.contains("cannot write the rejects file \(rejects): No space left on device"),
            "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store))
        let names = try FileManager.default.contentsOfDirectory(atPath: mountPoint)
        #expect(names == ["rejects.jsonl"], "\(names)")
        let text = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(text.isEmpty || text.hasSuffix("\n"))
        let lines = text.split(separator: "\n")
        #expect(lines.count > 10 && lines.count < 4000, "\(lines.count) lines")
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "a torn line: \(line)")
        }
    }

    /// A target on a file system that fills up during the run: exit 3, the message names the target
    /// (never the run's copy of it, which is removed), the target is unchanged, nothing is left.
    @Test func aFullDiskUnderTheTargetNamesTheTargetNotItsCopy() throws {
        let directory = try TemporaryDirectory()
        let mountPoint = directory.url.appendingPathComponent("small").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try Mounts.mount(mountPoint, size: "256k")
        defer { Mounts.unmount(mountPoint) }
        let store = mountPoint + "/items.sqlite"
        let first = try directory.file("first.csv", contents: "id,name\n1,one\n")
        #expect(try runSluice(["import", first.path, "--to", store]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        var csv = "id,name\n"
        for row in 2...20_000 { csv += "\(row),\(String(repeating: "x", count: 200))\n" }
        let more = try directory.file("first.csv", contents: csv)
        let result = try runSluice(["import", more.path, "--to", store])
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains(store) && !result.stderr.contains(".sluice-tmp"), "\(result.stderr)")
        #expect(result.stderr.contains("the target is unchanged"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        let names = try FileManager.default.contentsOfDirectory(atPath: mountPoint).sorted()
        #expect(names == ["items.sqlite"], "\(names)")
    }

    /// An export onto a full file system: exit 3 with the system's reason for the export file (never
    /// Foundation's dump of its error).
    @Test func anExportOnAFullDiskSaysTheSystemsReason() throws {
        let directory = try TemporaryDirectory()
        let mountPoint = directory.url.appendingPathComponent("small").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try Mounts.mount(mountPoint, size: "64k")
        defer { Mounts.unmount(mountPoint) }
        var csv = "id,name\n"
        for row in 1...2000 { csv += "\(row),\(String(repeating: "x", count: 60))\n" }
        let input = try directory.file("items.csv", contents: csv)
        let store = directory.url.appendingPathComponent("items.sqlite").path
        #expect(try runSluice(["import", input.path, "--to", store]).status == 0)
        for output in ["out.csv", "out.jsonl"] {
            let path = mountPoint + "/" + output
            let result = try runSluice(["export", store, "--to", path])
            #expect(result.status == 3, "\(result.stderr)")
            #expect(
                result.stderr.contains("cannot write the export file \(path): No space left on device"),
                "\(result.stderr)")
            #expect(!result.stderr.contains("Domain"), "\(result.stderr)")
            try FileManager.default.removeItem(atPath: path)
        }
    }
}
