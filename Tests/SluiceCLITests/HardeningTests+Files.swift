import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 40: what a run writes is a regular file or nothing yet — a device, FIFO, folder or loop of
/// links as a target or output is refused before the lock (exit 2) and left as it was; a run blocked
/// on a FIFO input still ends at a signal; temporary files are never another's.
extension HardeningTests {
    /// The special files a test needs, made inside its own folder: a character device (the null
    /// device's numbers, where the kernel lets this process make one), a FIFO, a folder, a loop of
    /// links and a link to the device.
    struct SpecialFiles {
        var paths: [(name: String, path: String)] = []
        var device: String?

        init(in directory: TemporaryDirectory) throws {
            let base = directory.url.path
            let device = base + "/null"
            if mknod(device, S_IFCHR | 0o666, dev_t(0x103)) == 0 {  // 1, 3: the null device's numbers
                self.device = device
                paths.append(("a device", device))
                symlink(device, base + "/to-null")
                paths.append(("a link to a device", base + "/to-null"))
            }
            #expect(mkfifo(base + "/fifo", 0o644) == 0)
            paths.append(("a FIFO", base + "/fifo"))
            try FileManager.default.createDirectory(atPath: base + "/folder", withIntermediateDirectories: false)
            paths.append(("a folder", base + "/folder"))
            symlink(base + "/loop-b", base + "/loop-a")
            symlink(base + "/loop-a", base + "/loop-b")
            paths.append(("a loop of links", base + "/loop-a"))
        }

        /// The file type of `path` (links followed), to see it was left as it was.
        static func type(_ path: String) -> mode_t {
            var info = stat()
            return stat(path, &info) == 0 ? info.st_mode & S_IFMT : 0
        }
    }

    @Test func aDeviceFIFOFolderOrLinkLoopIsNeverWritten() throws {
        let directory = try TemporaryDirectory()
        let files = try SpecialFiles(in: directory)
        if files.device == nil { print("mknod is not allowed here: the device cases are skipped") }
        let people = try directory.file("people.csv", contents: Self.csv(1...2, tag: "person"))
        let store = directory.url.appendingPathComponent("t.sqlite").path
        #expect(try runSluice(["import", people.path, "--to", store, "--quiet"]).status == 0)
        for (what, path) in files.paths {
            let type = SpecialFiles.type(path)
            var commands = [
                ["import", people.path, "--to", path], ["import", people.path, "--to", store, "--report", path],
                ["convert", store, path], ["export", store, "--to", path, "--format", "csv"],
            ]
            if what != "a folder" {
                commands.append(["import", people.path, "--to", store, "--rejects", path, "--max-errors", "5"])
            } else {
                commands.removeLast()  // export writes a folder's files into it
            }
            for arguments in commands {
                let result = try runSluice(arguments)
                #expect(result.status == 2, "\(what): \(arguments): \(result.stderr)")
                #expect(result.stderr.contains(directory.url.path + "/"), "\(what): \(result.stderr)")
                #expect(SpecialFiles.type(path) == type, "\(what) is left as it was: \(arguments)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("fifo.lock").path))
    }

    /// A FIFO no one writes as an input blocks the run opening it (the target locked, its copy made);
    /// a signal still ends it after the grace period, the target as before and its lock free.
    @Test func aRunBlockedOnAFIFOStillEndsAtASignal() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.url.appendingPathComponent("feed.csv").path
        #expect(mkfifo(fifo, 0o644) == 0)
        _ = try directory.file("m.yaml", contents: "version: 1\nentities:\n  Row:\n    attributes: { id: integer64 }\n")
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { store: sqlite, path: t.sqlite }
                sources: [{ name: feed, format: csv, path: feed.csv, entity: Row, fields: { id: id } }]
                """)
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let process = try startSluice(["run", pipeline.path])
        usleep(1_000_000)
        let sent = Date()
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(process.terminationStatus == 143, "ended by the signal")
        #expect(Date().timeIntervalSince(sent) < 20)
        #expect(!FileManager.default.fileExists(atPath: store))
        let lock = open(store + ".lock", O_RDWR | O_CREAT, 0o644)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0, "the lock is free")
    }

    /// A named pipe as an input is read once and kept (like standard input): the format and the CSV
    /// dialect sniffed, then the records read, all from the same bytes — by `import` and by a
    /// pipeline that names no dialect.
    @Test func aFIFOInputIsReadWholeThoughItIsOpenedMoreThanOnce() throws {
        let directory = try TemporaryDirectory()
        let source = try directory.file("people.csv", contents: Self.csv(1...3000, tag: "person"))
        let fifo = directory.url.appendingPathComponent("feed").path
        #expect(mkfifo(fifo, 0o644) == 0)
        _ = try directory.file(
            "m.yaml",
            contents: "version: 1\nentities:\n  Person:\n    attributes: { id: integer64, name: string }\n"
                + "    unique: [[id]]\n")
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { store: sqlite, path: p.sqlite }
                sources: [{ name: feed, path: feed, entity: Person, key: [id], fields: { id: id, name: name } }]
                """)
        let store = directory.url.appendingPathComponent("t.sqlite").path
        for command in [["import", fifo, "--to", store, "--entity", "Person", "--quiet"], ["run", pipeline.path]] {
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/bin/sh")
            writer.arguments = ["-c", "cat \"$1\" > \"$2\"", "sh", source.path, fifo]
            try writer.run()
            let result = try runSluice(command)
            writer.waitUntilExit()
            #expect(result.status == 0, "\(command): \(result.stderr)")
        }
        #expect(
            try sqliteRows(store, "SELECT count(*), sum(id) FROM person") == [[.integer(3000), .integer(4_501_500)]])
        let piped = directory.url.appendingPathComponent("p.sqlite").path
        #expect(
            try sqliteRows(piped, "SELECT count(*), sum(id) FROM person") == [[.integer(3000), .integer(4_501_500)]])
    }

    /// A link planted where a run's temporary file goes (named with the process number, which
    /// `exec` keeps) is replaced, never followed: the file it points at is untouched, the report is
    /// written. An import writes nothing in the temporary folder.
    @Test func temporaryFilesAreNeverFollowedLinksNorSharedFolders() throws {
        let directory = try TemporaryDirectory()
        let victim = try directory.file("victim.txt", contents: "precious\n")
        let people = try directory.file("people.csv", contents: Self.csv(1...2, tag: "person"))
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let report = directory.url.appendingPathComponent("report.json").path
        let temporary = directory.url.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: false)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = [
            "-c",
            "for name in \"$1\" \"$2\" \"$3\"; do ln -s \"$4\" \"$name.sluice-tmp-$$\";"
                + " ln -s \"$4\" \"$name.sluice-tmp\"; done;"
                + " exec \"$5\" import \"$6\" --to \"$2\" --report \"$1\" --rejects \"$3\"",
            "sh", report, store, directory.url.appendingPathComponent("rejects.jsonl").path, victim.path,
            try sluiceBinary.path, people.path,
        ]
        shell.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary.path]) { $1 }
        shell.standardOutput = FileHandle.nullDevice
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0)
        #expect(try String(contentsOf: victim, encoding: .utf8) == "precious\n")
        #expect(try sqliteRows(store, "SELECT count(*) FROM people") == [[.integer(2)]])
        #expect(try Data(contentsOf: URL(fileURLWithPath: report)).first == UInt8(ascii: "{"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).isEmpty)
    }
}
