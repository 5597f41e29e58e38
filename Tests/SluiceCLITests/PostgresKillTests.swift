import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 35: SIGKILL at any moment of a run into PostgreSQL. With `commit: atomic` the database
/// holds exactly the state before the run or after it; with `commit: batches` it holds the batches
/// up to the last checkpoint, a plain run is refused and `--resume` ends in the state after.
@Suite struct PostgresKillTests {
    /// `rows` accounts; `day` changes every amount and name.
    static func accounts(_ rows: Int, day: Int) -> String {
        "id,name,amount\n" + (1...rows).map { "\($0),\"account \($0) on day \(day)\",\($0).\(day)5\n" }.joined()
    }

    /// A pipeline loading `accounts.csv` into the schema.
    static func pipeline(_ directory: TemporaryDirectory, _ schema: PostgresTestSchema, commit: String) throws -> URL {
        _ = try directory.file(
            "model.yaml",
            contents: """
                version: 1
                entities:
                  Account:
                    table: account
                    attributes: { id: integer64!, name: string, amount: decimal }
                    unique: [[id]]
                """)
        return try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: model.yaml
                target: { store: postgres, url: "\(PostgresTestServer.url)", schema: \(schema.name), commit: \(commit) }
                merge: object-trumps
                batch: { size: 1000 }
                sources:
                  - { name: accounts, path: accounts.csv, entity: Account, key: [id],
                      fields: { id: id, name: name, amount: amount } }
                """)
    }

    /// What the table holds, summed up: count, and a hash of every row in key order.
    static func state(_ schema: PostgresTestSchema) throws -> [String?] {
        try schema.query(
            "SELECT count(*)::text, md5(coalesce(string_agg(id || '|' || name || '|' || amount, ',' ORDER BY id), '')) "
                + "FROM account")[0]
    }

    /// Runs the pipeline and kills it with SIGKILL after `delay` seconds (if it is still running).
    static func killed(_ pipeline: URL, after delay: Double, arguments: [String] = []) throws -> Int32 {
        let process = try startSluice(["run", pipeline.path] + arguments)
        let deadline = Date().addingTimeInterval(delay)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func anAtomicRunKilledAtAnyMomentLeavesTheBeforeOrTheAfter() throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        let pipeline = try Self.pipeline(directory, schema, commit: "atomic")
        let input = directory.url.appendingPathComponent("accounts.csv")
        try Self.accounts(2_000, day: 1).write(to: input, atomically: true, encoding: .utf8)
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
        let before = try Self.state(schema)
        try Self.accounts(40_000, day: 2).write(to: input, atomically: true, encoding: .utf8)
        // A kill may land after the server committed and before the process exited: then the table
        // holds the whole after, which is fine. Anything but the before or the whole after is not.
        var states: [(delay: Double, status: Int32, now: [String?])] = []
        for delay in [0.05, 0.2, 0.5, 0.9, 1.4, 2.0, 3.0] {
            let status = try Self.killed(pipeline, after: delay)
            states.append((delay, status, try Self.state(schema)))
        }
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
        let after = try Self.state(schema)
        #expect(after[0] == "40000" && after != before)
        for (delay, status, now) in states {
            #expect(now == before || now == after, "killed after \(delay) s (status \(status)): \(now)")
            #expect(status != 0 || now == after, "a run that ended well left \(now)")
        }
        #expect(states.contains { $0.status != 0 && $0.now == before }, "some run was killed before its commit")
    }

    @Test func aBatchesRunKilledGoesOnFromItsCheckpointWithResume() throws {
        let directory = try TemporaryDirectory()
        let schema = PostgresTestSchema()
        let pipeline = try Self.pipeline(directory, schema, commit: "batches")
        let input = directory.url.appendingPathComponent("accounts.csv")
        try Self.accounts(60_000, day: 3).write(to: input, atomically: true, encoding: .utf8)
        var status: Int32 = 0
        var stored = 0
        // Killed once some batches are in (and before the last).
        for delay in [1.0, 2.0, 3.0, 5.0] where stored == 0 {
            _ = try? schema.query("DELETE FROM account")
            _ = try? schema.query("DELETE FROM _sluice_metadata WHERE key LIKE 'user.%checkpoint%'")
            status = try Self.killed(pipeline, after: delay, arguments: ["--discard-checkpoint"])
            stored = Int((try? Self.state(schema))?[0] ?? "0") ?? 0
            if status == 0 { stored = 0 }
        }
        try #require(stored > 0 && stored < 60_000, "a run was killed between batches (\(stored) stored)")
        #expect(stored % 1_000 == 0, "whole batches only: \(stored)")
        let plain = try runSluice(["run", pipeline.path])
        #expect(plain.status == 2 && plain.stderr.contains("--resume"), "\(plain.stderr)")
        let resumed = try runSluice(["run", pipeline.path, "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let full = try Self.state(schema)
        #expect(full[0] == "60000")
        // The same as a load in one go.
        let again = PostgresTestSchema()
        let once = try Self.pipeline(directory, again, commit: "atomic")
        #expect(try runSluice(["run", once.path, "--quiet"]).status == 0)
        #expect(try Self.state(again) == full)
    }
}
