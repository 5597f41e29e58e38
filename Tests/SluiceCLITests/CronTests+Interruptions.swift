import Drivers
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs stopped from the outside: by a signal (the report written, the target left as it was) or
/// killed outright (what they leave is tidied up by the next run).
extension CronTests {
    @Test func sigtermMidRunWritesTheReportAndLeavesTheTarget() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,3,A\n")
        #expect(try runSluice(["run", pipeline.path]).status == 0)
        let target = directory.url.appendingPathComponent("out/items.sqlite")
        let items = { try sqliteRows(target.path, "SELECT * FROM Item ORDER BY id") }
        let before = try items()
        var rows = "id,name,qty,shelf\n"
        for id in 1...300_000 { rows += "\(id),item \(id),\(id % 50),S\(id % 20)\n" }
        _ = try directory.file("items.csv", contents: rows)
        let reportFile = directory.url.appendingPathComponent("report.json")
        let process = try startSluice(["run", pipeline.path, "--report", reportFile.path])
        // Once the run has read records (the report is not there yet), stop it.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline,
            !FileManager.default.fileExists(atPath: target.path + ".sluice-tmp-\(process.processIdentifier)")
        {
            usleep(20_000)
        }
        usleep(500_000)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 143)
        let report = try Self.report(reportFile)
        #expect(report["status"] as? String == "interrupted" && report["exitStatus"] as? Int == 143)
        #expect((report["error"] as? [String: Any])?["type"] as? String == "RunError.stopped")
        #expect(try items() == before)
        #expect(leftovers(beside: target.path).isEmpty)
    }

    @Test func aSignalStopsTheWaitForTheLock() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,3,A\n")
        let lock = try Self.holdLock(of: directory.url.appendingPathComponent("out/items.sqlite").path)
        defer { close(lock) }
        let report = directory.url.appendingPathComponent("r.json")
        let process = try startSluice(["run", pipeline.path, "--wait-lock", "600", "--report", report.path])
        usleep(1_500_000)
        let sent = Date()
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 143 && Date().timeIntervalSince(sent) < 5)
        #expect(try Self.report(report)["status"] as? String == "interrupted")
    }

    /// What a killed dry run leaves in the temporary folder goes with the next run.
    @Test func aKilledDryRunsCopyIsRemovedByTheNextRun() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory)
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,3,A\n")
        #expect(try runSluice(["run", pipeline.path]).status == 0)
        let temporary = try TemporaryDirectory()
        var rows = "id,name,qty,shelf\n"
        for id in 1...200_000 { rows += "\(id),item \(id),\(id % 50),S\(id % 20)\n" }
        _ = try directory.file("items.csv", contents: rows)
        let process = Process()
        process.executableURL = try sluiceBinary
        process.arguments = ["run", pipeline.path, "--dry-run", "--quiet"]
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary.url.path]) { $1 }
        process.standardError = FileHandle.nullDevice
        try process.run()
        let leftovers = { try FileManager.default.contentsOfDirectory(atPath: temporary.url.path) }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, try leftovers().isEmpty { usleep(20_000) }
        usleep(300_000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(try leftovers().contains { $0.hasPrefix("sluice-dry-run-\(process.processIdentifier)-") })
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,3,A\n")
        let next = try runSluice(["run", pipeline.path, "--dry-run"], environment: ["TMPDIR": temporary.url.path])
        #expect(next.status == 0, "\(next.stderr)")
        let left = try leftovers()
        #expect(left.isEmpty, "\(left)")
    }

    /// A run killed while it wrote rejects leaves their file beside its name (`….sluice-tmp-<pid>`);
    /// the next run into that folder keeps its whole lines as `….interrupted-<pid>.jsonl` (with
    /// `commit: batches` they are the rejects of committed batches), and makes its own file whole.
    @Test func aKilledRunsRejectsInTheMakingAreKeptByTheNextRun() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(in: directory, max: 1_000_000)
        var rows = "id,name,qty,shelf\n"
        // Enough rows that the run is still writing rejects when it is killed, on a busy machine too.
        for id in 1...900_000 { rows += "\(id),item \(id),not a number,S\(id % 20)\n" }
        _ = try directory.file("items.csv", contents: rows)
        let out = directory.url.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let process = try startSluice(["run", pipeline.path, "--quiet"])
        // Rejects in the making (the target's work copy is `items.sqlite.sluice-tmp-<pid>`).
        let inTheMaking = {
            try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.contains(".jsonl.sluice-tmp-") }
        }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, try inTheMaking().isEmpty { usleep(10_000) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let left = try inTheMaking()
        #expect(left.contains { $0.hasSuffix(".jsonl.sluice-tmp-\(process.processIdentifier)") }, "\(left)")
        _ = try directory.file("items.csv", contents: "id,name,qty,shelf\n1,bolt,x,A\n")
        let next = try runSluice(["run", pipeline.path])
        #expect(next.status == 0, "\(next.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(!names.contains { $0.contains(".sluice-tmp") }, "\(names)")
        let kept = names.filter { $0.hasSuffix(".interrupted-\(process.processIdentifier).jsonl") }
        #expect(kept.count == 1 && names.filter { $0.hasSuffix(".jsonl") }.count == 2, "\(names)")
        let lines = try String(contentsOfFile: out.appendingPathComponent(kept.first ?? "").path, encoding: .utf8)
        #expect(lines.isEmpty || lines.hasSuffix("\n"))
        for line in lines.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "a torn line: \(line)")
        }
    }
}
