import Drivers
import Foundation
import Testing
import TestSupport

/// `commit: batches` and `--resume`: a run killed with SIGKILL after some batches committed leaves
/// those batches and a checkpoint; a plain run refuses the target; `--resume` goes on and ends in
/// the same store as an uninterrupted run. The entity has no key, so a batch imported twice (or
/// skipped) would show as extra (or missing) rows.
@Suite struct ResumeTests {
    static let rows = 40_000

    static func pipeline(in directory: TemporaryDirectory, target: String) throws -> URL {
        _ = try directory.file("readings.model.yaml", contents: """
            version: 1
            entities:
              Reading:
                attributes: { sensor: string!, value: integer64! }
            """)
        return try directory.file("\(target).yaml", contents: """
            version: 1
            model: readings.model.yaml
            target: { store: sqlite, path: \(target).sqlite, commit: batches }
            batch: { size: 500, contexts: 2 }
            sources:
              - name: readings
                path: readings.csv
                entity: Reading
                fields: { sensor: sensor, value: value }
            """)
    }

    static func readings(_ store: String) throws -> [[SQLiteValue]] {
        try RunCommandTests.query(store, "SELECT sensor, value FROM Reading ORDER BY value, sensor")
    }

    static func checkpoint(_ store: String) -> String? {
        guard FileManager.default.fileExists(atPath: store),
              let rows = try? RunCommandTests.query(store, "SELECT value FROM _sluice_metadata WHERE key = 'user.sluice.checkpoint'") else { return nil }
        if case .text(let value)? = rows.first?.first { return value }
        return nil
    }

    @Test func aKilledBatchRunResumesToTheSameStore() throws {
        let directory = try TemporaryDirectory()
        var csv = "sensor,value\n"
        for n in 0..<Self.rows { csv += "s\(n % 7),\(n)\n" }
        _ = try directory.file("readings.csv", contents: csv)

        let whole = try runSluice(["run", try Self.pipeline(in: directory, target: "whole").path, "--quiet"])
        #expect(whole.status == 0, "\(whole.stderr)")
        let expected = try Self.readings(directory.url.appendingPathComponent("whole.sqlite").path)
        #expect(expected.count == Self.rows)

        // Kill a run as soon as a checkpoint is committed.
        let pipeline = try Self.pipeline(in: directory, target: "killed")
        let store = directory.url.appendingPathComponent("killed.sqlite").path
        let process = try startSluice(["run", pipeline.path, "--quiet"])
        var seen: String?
        while process.isRunning, seen == nil {
            seen = Self.checkpoint(store)
            if seen == nil { Thread.sleep(forTimeInterval: 0.005) }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let left = try #require(Self.checkpoint(store), "killed after a checkpoint was committed")
        let done = try Self.readings(store).count
        #expect(done > 0 && done < Self.rows, "part of the data is in (\(done) rows, checkpoint \(left))")

        let plain = try runSluice(["run", pipeline.path])
        #expect(plain.status == 2 && plain.stderr.contains("--resume"), "\(plain.stderr)")

        let resumed = try runSluice(["run", pipeline.path, "--resume", "--quiet"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try Self.readings(store) == expected, "the same rows as the uninterrupted run: none twice, none missing")
        #expect(Self.checkpoint(store) == nil, "the checkpoint goes when the run completes")
    }
}
