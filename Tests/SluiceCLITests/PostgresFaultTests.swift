import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 35's faults: a refused login, a missing privilege, a statement timeout, a full disk on the
/// server and a connection lost in the middle of a run each end the run with exit 3 and the
/// server's reason, the password nowhere, and the database as before (a new store's run leaves
/// nothing).
@Suite struct PostgresFaultTests {
    /// `rows` accounts as CSV.
    static func accounts(_ rows: Int) -> String {
        "id,name,amount\n" + (1...rows).map { "\($0),\"name \($0), with comma\",\($0).25\n" }.joined()
    }

    /// The schema's URL with another user (and password) in place of the tests' one.
    static func url(_ schema: PostgresTestSchema, user: String, password: String? = nil) -> String {
        let auth = password.map { "\(user):\($0)@" } ?? "\(user)@"
        return schema.url.absoluteString.replacingOccurrences(of: "&user=sluice", with: "")
            .replacingOccurrences(of: "postgresql://", with: "postgresql://\(auth)")
    }

    @Test func aRefusedLoginAMissingPrivilegeAndATimeoutAreExit3WithTheServersReason() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file("accounts.csv", contents: Self.accounts(20_000))
        let schema = PostgresTestSchema()

        let wrong = try runSluice([
            "import", input.path, "--to", Self.url(schema, user: "sluice_pw", password: "wrong-pw"),
        ])
        #expect(wrong.status == 3, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("password authentication failed"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("wrong-pw"))
        let right = try runSluice(
            ["import", input.path, "--to", Self.url(schema, user: "sluice_pw"), "--quiet"],
            environment: ["PGPASSWORD": "right-password"])
        #expect(right.status == 3, "sluice_pw may not create schemas either: \(right.stderr)")
        #expect(right.stderr.contains("permission denied"), "\(right.stderr)")

        let denied = try runSluice(["import", input.path, "--to", Self.url(schema, user: "sluice_ro")])
        #expect(denied.status == 3, "\(denied.stderr)")
        #expect(denied.stderr.contains("permission denied") && denied.stderr.contains("42501"), "\(denied.stderr)")
        #expect(!schema.exists)

        let timeout = schema.url.absoluteString + "&options=-c%20statement_timeout%3D1"
        let slow = try runSluice(["import", input.path, "--to", timeout, "--batch-size", "20000"])
        #expect(slow.status == 3, "\(slow.stderr)")
        #expect(slow.stderr.contains("statement timeout"), "\(slow.stderr)")
        #expect(!schema.exists, "the run's transaction was rolled back")
    }

    @Test func aConnectionLostInTheMiddleOfARunIsExit3AndTheStoreIsAsBefore() throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        let first = try directory.file("day1.csv", contents: Self.accounts(1_000))
        #expect(
            try runSluice(["import", first.path, "--to", schema.url.absoluteString, "--entity", "Account"]).status == 0)
        let before = try schema.query("SELECT count(*), sum(amount)::text FROM account")

        // Day 2 is long; the server ends the run's connection in its middle (the backend holding
        // the run's advisory lock on the schema: no other test's run).
        _ = try directory.file(
            "day2.csv", contents: Self.accounts(200_000).replacingOccurrences(of: ".25\n", with: ".75\n"))
        let model = directory.url.appendingPathComponent("model.yaml").path
        #expect(
            try runSluice(["export", schema.url.absoluteString, "--to", directory.url.path + "/export/"]).status == 0)
        try FileManager.default.copyItem(atPath: directory.url.path + "/export/model.yaml", toPath: model)
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: model.yaml
                target: { store: postgres, url: "\(PostgresTestServer.url)", schema: \(schema.name) }
                merge: object-trumps
                batch: { size: 100 }
                sources:
                  - { name: day2, path: day2.csv, entity: Account, key: [id],
                      fields: { id: id, name: name, amount: amount } }
                """)
        let run = Process()
        run.executableURL = try sluiceBinary
        run.arguments = ["run", pipeline.path]
        let stderr = Pipe()
        run.standardOutput = FileHandle.nullDevice
        run.standardError = stderr
        try run.run()
        var ended = false
        for _ in 0..<250 where !ended {
            usleep(20_000)
            let killed = try schema.query(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    + "AND objid::bigint = (hashtext($1)::bigint & 4294967295)", [schema.name])
            ended = killed.first?.first != "0"
        }
        #expect(ended, "the run's connection was found and ended")
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        run.waitUntilExit()
        #expect(run.terminationStatus == 3, "\(errors)")
        #expect(errors.contains("terminat") || errors.contains("connection"), "\(errors)")
        #expect(try schema.query("SELECT count(*), sum(amount)::text FROM account") == before)
    }

    /// A convert into PostgreSQL is one transaction: one that fails (text PostgreSQL cannot hold)
    /// leaves no schema, and one that works can be done again into another.
    @Test func aFailedConvertLeavesNothingBehind() throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        let input = try directory.file("notes.csv", contents: "id,body\n1,fine\n2,a\u{0}b\n")
        let store = directory.url.appendingPathComponent("notes.sqlite").path
        #expect(try runSluice(["import", input.path, "--to", store, "--key", "id", "--quiet"]).status == 0)
        let failed = try runSluice(["convert", store, schema.url.absoluteString])
        #expect(failed.status != 0 && failed.stderr.contains("U+0000"), "\(failed.stderr)")
        #expect(!schema.exists, "nothing of the failed copy is left")
        _ = try directory.file("clean.csv", contents: "id,body\n1,fine\n")
        let clean = directory.url.appendingPathComponent("clean.sqlite").path
        #expect(try runSluice(["import", directory.url.path + "/clean.csv", "--to", clean, "--quiet"]).status == 0)
        let copied = try runSluice(["convert", clean, schema.url.absoluteString])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(try schema.query("SELECT id, body FROM clean") == [["1", "fine"]])
    }

    /// The server's disk fills: the store's tables are in a tablespace on a 1 MiB tmpfs. A first
    /// load too big for it (streamed COPYs) and a later one (checked COPYs into stored tables) each
    /// end with exit 3 and the server's reason; the schema is as before each.
    @Test(.enabled(if: Mounts.canMount, "needs the right to mount a tmpfs"))
    func aFullDiskOnTheServerIsExit3AndTheStoreIsAsBefore() throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        let mountPoint = directory.url.appendingPathComponent("disk").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try Mounts.mount(mountPoint, size: "1m")
        // The tablespace's folder belongs to the server's user, as PostgreSQL requires.
        let folder = mountPoint + "/tablespace"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let data = try #require(try schema.query("SHOW data_directory").first?.first ?? nil)
        let owner = try FileManager.default.attributesOfItem(atPath: data)[.ownerAccountID]
        try FileManager.default.setAttributes([.ownerAccountID: try #require(owner)], ofItemAtPath: folder)
        let tablespace = "t_full_\(schema.name.suffix(8))"
        _ = try schema.query("CREATE TABLESPACE \(tablespace) LOCATION '\(folder)'")
        defer {
            PostgresTestServer.dropSchema(of: schema.url)
            _ = try? schema.query("DROP TABLESPACE \(tablespace)")
            Mounts.unmount(mountPoint)
        }
        let url = schema.url.absoluteString + "&options=-c%20default_tablespace%3D\(tablespace)"
        let big = try directory.file("big.csv", contents: Self.accounts(40_000))
        let first = try runSluice(["import", big.path, "--to", url, "--entity", "Account", "--key", "id"])
        #expect(first.status == 3, "\(first.stderr)")
        #expect(first.stderr.contains("No space left on device"), "\(first.stderr)")
        #expect(!schema.exists, "the run's transaction was rolled back")

        let small = try directory.file("small.csv", contents: Self.accounts(500))
        let day1 = try runSluice(["import", small.path, "--to", url, "--entity", "Account", "--key", "id"])
        #expect(day1.status == 0, "\(day1.stderr)")
        let before = try schema.query("SELECT count(*), sum(amount)::text FROM account")
        let day2 = try runSluice(["import", big.path, "--to", url, "--entity", "Account", "--key", "id"])
        #expect(day2.status == 3, "\(day2.stderr)")
        #expect(day2.stderr.contains("No space left on device"), "\(day2.stderr)")
        #expect(try schema.query("SELECT count(*), sum(amount)::text FROM account") == before)
    }
}
