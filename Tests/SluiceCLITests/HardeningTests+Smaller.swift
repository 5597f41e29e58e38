import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 40, the smaller points: each from the outside.
extension HardeningTests {
    static func model(_ directory: TemporaryDirectory) throws -> URL {
        try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Person:
                    attributes:
                      id: integer64!
                      email: { type: string, regex: "[^@]+@[^@]+" }
                      age: { type: integer16, min: 0, max: 150 }
                    unique: [[id]]
                """)
    }

    static func pipeline(
        _ directory: TemporaryDirectory, _ settings: String, input: String = "people.csv"
    ) throws -> URL {
        _ = try model(directory)
        return try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                \(settings)
                sources:
                  - { name: people, path: \(input), entity: Person, key: [id],
                      fields: { id: id, email: email, age: age } }
                """)
    }

    /// `batch.size` has a sane upper bound, said by `check`; `--batch-size` too.
    @Test func aBatchSizeBeyondAMillionIsRefused() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("people.csv", contents: "id,email,age\n1,a@b,3\n")
        let huge = try Self.pipeline(
            directory, "target: { store: sqlite, path: t.sqlite }\nbatch: { size: 1000000000000 }")
        let check = try runSluice(["check", huge.path])
        #expect(check.status == 2 && check.stderr.contains("batch.size must be a whole number from 1 to 1000000"))
        let flag = try runSluice(["import", "people.csv", "--to", "t.sqlite", "--batch-size", "2000000"])
        #expect(flag.status == 2 && flag.stderr.contains("--batch-size must be from 1 to 1000000"), "\(flag.stderr)")
        let most = try Self.pipeline(directory, "target: { store: sqlite, path: t.sqlite }\nbatch: { size: 1000000 }")
        #expect(try runSluice(["run", most.path, "--quiet"]).status == 0)
    }

    /// An empty default at the start of a path would put the file at the root of the disk.
    @Test func anEmptyVariableNeverMakesAPathAtTheRoot() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("people.csv", contents: "id,email,age\n1,a@b,3\n")
        let pipeline = try Self.pipeline(directory, "target: { store: sqlite, path: \"${NO_SUCH_DIR:-}/c.sqlite\" }")
        let result = try runSluice(["check", pipeline.path])
        #expect(result.status == 2 && result.stderr.contains("a path at the root of the disk"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/c.sqlite"))
    }

    /// A store's lock file (another run's, held now) is never taken for a rejects file.
    @Test func aLockFileIsNeverAnOutput() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("people.csv", contents: "id,email,age\n1,bad,3\n")
        let other = try directory.file("other.sqlite", contents: "")
        let lock = open(other.path + ".lock", O_RDWR | O_CREAT, 0o644)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX) == 0)
        let pipeline = try Self.pipeline(directory, "target: { store: sqlite, path: t.sqlite }\nerrors: { max: 5 }")
        let result = try runSluice(["run", pipeline.path, "--rejects", other.path + ".lock"])
        #expect(result.status == 2 && result.stderr.contains("lock file"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: other.path + ".lock")).isEmpty)
    }

    /// A file name with a line break cannot make a log line that reads as another event.
    @Test func aLineBreakInANameNeverForgesALogLine() throws {
        let directory = try TemporaryDirectory()
        let name = "x.csv\n2026-01-01T00:00:00.000Z sluice: info: run done"
        let result = try runSluice(["import", directory.url.appendingPathComponent(name).path, "--to", "t.sqlite"])
        #expect(result.status != 0)
        let lines = result.stderr.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("2026-01-01T00:00:00.000Z") }, "\(result.stderr)")
    }

    /// A multi-row INSERT of tiny rows longer than the record limit is read (SQLite runs it); one
    /// quoted value over the limit still fails at its place.
    @Test func aLongMultiRowInsertIsReadButNotALongValue() throws {
        let directory = try TemporaryDirectory()
        let rows = (1...150_000).map { "(\($0),'p\($0)@x')" }.joined(separator: ",")
        let dump = try directory.file(
            "people.sql",
            contents: "CREATE TABLE people(id INTEGER PRIMARY KEY, email TEXT);\nINSERT INTO people VALUES \(rows);\n")
        #expect(dump.path.count > 0 && rows.utf8.count > 2 << 20)
        _ = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { store: sqlite, path: t.sqlite }
                limits: { record: 1MB }
                sources:
                  - { name: people, format: sqldump, path: people.sql, table: people, entity: Person, key: [id],
                      fields: { id: id, email: email } }
                """)
        _ = try Self.model(directory)
        let result = try runSluice(["run", directory.url.appendingPathComponent("p.yaml").path])
        #expect(result.status == 0 && result.stdout.contains("150000 read, 150000 inserted"), "\(result.stderr)")
    }

    /// A record whose field does not convert also lists the rules its other fields break.
    @Test func aFieldThatFailsItsTypeHidesNoOtherFailure() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("people.csv", contents: "id,email,age\n1,not-an-email,old\n")
        let rejects = directory.url.appendingPathComponent("r.jsonl").path
        let pipeline = try Self.pipeline(
            directory, "target: { store: sqlite, path: t.sqlite }\nerrors: { max: 5, rejects: r.jsonl }")
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
        let line = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(line.contains("\"age\"") && line.contains("\"email\"") && line.contains("\"pattern\""), "\(line)")
    }

    /// UTF-8 text with one bad byte is read as UTF-8 (the row with the byte rejected at its place),
    /// never as Windows-1252 turning every other character into two.
    @Test func oneBadByteInUTF8TextKeepsItUTF8() throws {
        let directory = try TemporaryDirectory()
        var bytes = Array("id,email,age\n1,zoë@example.com,30\n2,renée@example.com,40\n3,x".utf8)
        bytes += [0xFF] + Array("@y.z,50\n".utf8)
        let file = directory.url.appendingPathComponent("people.csv")
        try Data(bytes).write(to: file)
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let result = try runSluice(["import", file.path, "--to", store, "--max-errors", "5"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("windows-1252"), "\(result.stderr)")
        #expect(
            try sqliteRows(store, "SELECT email FROM people ORDER BY id")
                == [[.text("zoë@example.com")], [.text("renée@example.com")]])
    }

    /// A record rejected for a field lists a lookup that finds nothing only when its object can no
    /// longer come: never one whose parent arrives later in the run.
    @Test func aLookupIsListedMissingOnlyWhenItsObjectCannotComeLater() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file(
            "shop.yaml",
            contents: """
                version: 1
                entities:
                  Customer:
                    attributes: { id: integer64! }
                    relationships: { orders: { destination: Order, toMany: true, inverse: customer } }
                    unique: [[id]]
                  Order:
                    attributes: { number: integer64!, total: decimal }
                    relationships: { customer: { destination: Customer, inverse: orders } }
                    unique: [[number]]
                """)
        _ = try directory.file("orders.csv", contents: "number,total,customer\n1,x,5\n")
        _ = try directory.file("customers.csv", contents: "id\n5\n")
        func run(_ order: [String]) throws -> String {
            let sources = [
                "orders": "  - { name: orders, path: orders.csv, entity: Order, key: [number], "
                    + "fields: { number: number, total: total }, relationships: { customer: "
                    + "{ entity: Customer, key: { id: customer }, missing: reject } } }\n",
                "customers":
                    "  - { name: customers, path: customers.csv, entity: Customer, key: [id], fields: { id: id } }\n",
            ]
            let pipeline = try directory.file(
                "p.yaml",
                contents: "version: 1\nmodel: shop.yaml\ntarget: { store: sqlite, path: t.sqlite }\n"
                    + "errors: { max: 5, rejects: r.jsonl }\nsources:\n" + order.map { sources[$0]! }.joined())
            try? FileManager.default.removeItem(at: directory.url.appendingPathComponent("t.sqlite"))
            let result = try runSluice(["run", pipeline.path, "--quiet"])
            #expect(result.status == 0, "\(result.stderr)")
            return try String(contentsOf: directory.url.appendingPathComponent("r.jsonl"), encoding: .utf8)
        }
        let later = try run(["orders", "customers"])
        #expect(later.contains("\"total\"") && !later.contains("no Customer"), "customer 5 comes later: \(later)")
        _ = try directory.file("customers.csv", contents: "id\n6\n")
        let never = try run(["customers", "orders"])
        #expect(never.contains("\"total\"") && never.contains("no Customer with id = 5"), "\(never)")
    }

    /// The target's folder failing to sync after the rename (the system's error put there by strace,
    /// for calls on that folder only) is a warning: the target is replaced and the run succeeded.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"))
    func aFolderThatDoesNotSyncAfterTheRenameIsAWarning() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.url.appendingPathComponent("store")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let input = try directory.file("people.csv", contents: "id,name\n1,ann\n2,bo\n")
        let target = folder.appendingPathComponent("t.sqlite").path
        let strace = ["/usr/bin/strace", "-f", "-qq", "-o", "/dev/null", "-P", folder.path, "-e", "trace=fsync"]
        let result = try runSluice(
            ["import", input.path, "--to", target], launcher: strace + ["-e", "inject=fsync:error=EIO"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("warning: the target is replaced, but cannot sync the target's folder")
                && result.stderr.contains("Input/output error"), "\(result.stderr)")
        #expect(try sqliteRows(target, "SELECT count(*) FROM people") == [[.integer(2)]])
    }
}
