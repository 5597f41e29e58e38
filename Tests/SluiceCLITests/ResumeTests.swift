import Drivers
import Foundation
import TestSupport
import Testing

/// `commit: batches` and `--resume`: a run killed with SIGKILL after some batches committed leaves
/// those batches and a checkpoint; a plain run refuses the target; `--resume` goes on and ends in
/// the same store as an uninterrupted run. The entity has no key, so a batch imported twice (or
/// skipped) would show as extra (or missing) rows.
@Suite struct ResumeTests {
    static let rows = 40_000

    static func pipeline(in directory: TemporaryDirectory, target: String) throws -> URL {
        _ = try directory.file(
            "readings.model.yaml",
            contents: """
                version: 1
                entities:
                  Reading:
                    attributes: { sensor: string!, value: integer64! }
                """)
        return try directory.file(
            "\(target).yaml",
            contents: """
                version: 1
                model: readings.model.yaml
                target: { store: sqlite, path: \(target).sqlite, commit: batches }
                batch: { size: 500, contexts: 2 }
                sources:
                  - name: readings
                    path: readings.csv
                    entity: Reading
                    mode: append
                    fields: { sensor: sensor, value: value }
                """)
    }

    static func readings(_ store: String) throws -> [[SQLiteValue]] {
        try sqliteRows(store, "SELECT sensor, value FROM Reading ORDER BY value, sensor")
    }

    static func checkpoint(_ store: String) -> String? {
        guard FileManager.default.fileExists(atPath: store),
            let rows = try? sqliteRows(
                store, "SELECT value FROM _sluice_metadata WHERE key = 'user.sluice.checkpoint'")
        else { return nil }
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
        #expect(
            try Self.readings(store) == expected, "the same rows as the uninterrupted run: none twice, none missing")
        #expect(Self.checkpoint(store) == nil, "the checkpoint goes when the run completes")
    }

    /// Kills a run of `pipeline` as soon as it has committed a checkpoint; returns the checkpoint.
    static func killAfterACheckpoint(_ pipeline: URL, store: String) throws -> String? {
        let process = try startSluice(["run", pipeline.path, "--quiet"])
        var seen: String?
        while process.isRunning, seen == nil {
            seen = checkpoint(store)
            if seen == nil { Thread.sleep(forTimeInterval: 0.005) }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return checkpoint(store)
    }

    /// The next export arrives under the same name before the resume: `--resume` is refused (exit 3,
    /// nothing changed) rather than skipping the first records of the new file; `--discard-checkpoint`
    /// starts over from its first record, the batches committed before staying.
    @Test func aResumeOfAnInputThatChangedIsRefusedAndTheCheckpointCanBeSetAside() throws {
        let directory = try TemporaryDirectory()
        var csv = "sensor,value\n"
        for n in 0..<Self.rows { csv += "s\(n % 7),\(n)\n" }
        let input = try directory.file("readings.csv", contents: csv)
        let pipeline = try Self.pipeline(in: directory, target: "nightly")
        let store = directory.url.appendingPathComponent("nightly.sqlite").path
        let left = try #require(try Self.killAfterACheckpoint(pipeline, store: store))
        #expect(left.contains("inputs="), "\(left)")
        let done = try Self.readings(store)
        #expect(done.count > 0 && done.count < Self.rows)

        var next = "sensor,value\n"
        for n in 0..<Self.rows { next += "t\(n % 5),\(n + 1_000_000)\n" }
        try next.write(to: input, atomically: true, encoding: .utf8)
        let refused = try runSluice(["run", pipeline.path, "--resume"])
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("\(input.path) is not the file the interrupted run read"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--discard-checkpoint"), "\(refused.stderr)")
        #expect(try Self.readings(store) == done && Self.checkpoint(store) == left, "nothing changed")

        let both = try runSluice(["run", pipeline.path, "--resume", "--discard-checkpoint"])
        #expect(both.status == 2, "\(both.stderr)")
        let over = try runSluice(["run", pipeline.path, "--discard-checkpoint", "--quiet"])
        #expect(over.status == 0, "\(over.stderr)")
        #expect(over.stderr.contains("set aside the checkpoint of an interrupted run"), "\(over.stderr)")
        let after = try Self.readings(store)
        #expect(after.count == done.count + Self.rows, "the committed batches stay; every new record is in")
        #expect(after.filter { $0.first == .text("t0") }.count == Self.rows / 5)
        #expect(Self.checkpoint(store) == nil)
    }

    /// Readings come before the sensors they name: each waits, and the checkpoint names the waiting
    /// records (they are in no store yet). Killed then, `--resume` reads them again from the input.
    @Test func recordsWaitingForAParentSurviveAKill() throws {
        let directory = try TemporaryDirectory()
        let count = 6_000
        var csv = "sensor,value\n"
        for n in 0..<count { csv += "s\(n % 7),\(n)\n" }
        _ = try directory.file("readings.csv", contents: csv)
        _ = try directory.file("sensors.csv", contents: "name\n" + (0..<7).map { "s\($0)\n" }.joined())
        _ = try directory.file(
            "sensors.model.yaml",
            contents: """
                version: 1
                entities:
                  Sensor:
                    attributes: { name: string! }
                    relationships: { readings: { destination: Reading, toMany: true, inverse: sensor } }
                    unique: [[name]]
                  Reading:
                    attributes: { value: integer64! }
                    relationships: { sensor: { destination: Sensor, inverse: readings, optional: false } }
                """)
        func pipeline(_ target: String) throws -> URL {
            try directory.file(
                "\(target).yaml",
                contents: """
                    version: 1
                    model: sensors.model.yaml
                    target: { store: sqlite, path: \(target).sqlite, commit: batches }
                    batch: { size: 500, contexts: 2 }
                    sources:
                      - name: readings
                        path: readings.csv
                        entity: Reading
                        fields: { value: value }
                        relationships: { sensor: { entity: Sensor, key: { name: sensor }, missing: reject } }
                      - { name: sensors, path: sensors.csv, entity: Sensor, key: [name], fields: { name: name } }
                    """)
        }
        func rows(_ store: String) throws -> [[SQLiteValue]] {
            try sqliteRows(
                store, "SELECT s.name, r.value FROM Reading r JOIN Sensor s ON s.name = r.sensor_id ORDER BY r.value")
        }
        let whole = try runSluice(["run", try pipeline("whole").path, "--quiet"])
        #expect(whole.status == 0, "\(whole.stderr)")
        let expected = try rows(directory.url.appendingPathComponent("whole.sqlite").path)
        #expect(expected.count == count)

        let file = try pipeline("killed")
        let store = directory.url.appendingPathComponent("killed.sqlite").path
        let process = try startSluice(["run", file.path, "--quiet"])
        var seen: String?
        while process.isRunning, seen == nil {
            if let checkpoint = Self.checkpoint(store), checkpoint.contains("pending=") {
                seen = checkpoint
            } else {
                Thread.sleep(forTimeInterval: 0.002)
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let left = try #require(Self.checkpoint(store), "killed after a checkpoint was committed")
        #expect(left.contains("pending="), "\(left.prefix(200))")
        #expect(try rows(store).count < count)

        let report = directory.url.appendingPathComponent("resumed.json")
        let resumed = try runSluice(["run", file.path, "--resume", "--quiet", "--report", report.path])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try rows(store) == expected, "every reading, each once, with its sensor")
        #expect(Self.checkpoint(store) == nil)
        // The records read again from the checkpoint count as read by the resumed run: its counts
        // balance (they read 0 and inserted thousands before).
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any]
        let entities = json?["entities"] as? [String: [String: Int]]
        let reading = try #require(entities?["Reading"], "\(String(describing: json))")
        #expect(reading["read"] ?? 0 > 0, "\(reading)")
        #expect(
            reading["read"] == (reading["inserted"] ?? 0) + (reading["updated"] ?? 0) + (reading["unchanged"] ?? 0)
                + (reading["rejected"] ?? 0) + (reading["filtered"] ?? 0),
            "\(reading)")
    }
}
