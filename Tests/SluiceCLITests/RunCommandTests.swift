import Drivers
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct RunCommandTests {
    @Test func theExamplePipelineBuildsTheShop() throws {
        let directory = try TemporaryDirectory()
        let result = try runSluice(["run", "Pipelines/shop.yaml"], environment: ["SLUICE_OUT": directory.url.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("OrderLine: 4 read, 4 inserted, 0 updated, 0 unchanged, 0 rejected"))
        let store = directory.url.appendingPathComponent("shop.sqlite").path
        let lines = try sqliteRows(
            store,
            """
            SELECT o.order_number, c.email, l.line_no, p.sku, l.quantity FROM orders o
            JOIN customers c ON c.customer_id = o.customer_id JOIN order_lines l ON l.order_id = o.order_number
            JOIN products p ON p.sku = l.product_id ORDER BY 1, 3
            """)
        #expect(lines.count == 4)
        #expect(lines.first == [.integer(1001), .text("ada@example.com"), .integer(1), .text("W-100"), .integer(3)])
        #expect(leftovers(beside: store).isEmpty)
    }

    /// The example again over its own result: every record meets its stored object by key (order
    /// lines by order and number), nothing is written, the report says so; a changed value is one update.
    @Test func reRunningTheExampleChangesNothing() throws {
        let directory = try TemporaryDirectory()
        let environment = ["SLUICE_OUT": directory.url.path]
        let first = try runSluice(["run", "Pipelines/shop.yaml"], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let store = directory.url.appendingPathComponent("shop.sqlite").path
        let before = try everyShopRow(store)
        let again = try runSluice(["run", "Pipelines/shop.yaml"], environment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        for line in [
            "Customer: 3 read, 0 inserted, 0 updated, 3 unchanged", "Order: 3 read, 0 inserted, 0 updated, 3 unchanged",
            "OrderLine: 4 read, 0 inserted, 0 updated, 4 unchanged",
            "Product: 3 read, 0 inserted, 0 updated, 3 unchanged",
        ] {
            #expect(again.stdout.contains(line), "\(again.stdout)")
        }
        #expect(try everyShopRow(store) == before, "not a row or a version changed")

        // One customer's name changed at the source: one update, the rest unchanged.
        let samples = directory.url.appendingPathComponent("samples")
        try FileManager.default.copyItem(at: repositoryRoot.appendingPathComponent("SampleData"), to: samples)
        let csv = samples.appendingPathComponent("customers.csv")
        let text = try String(contentsOf: csv, encoding: .utf8)
        let firstName = try #require(
            text.split(separator: "\n").dropFirst().first?.split(separator: ",").dropFirst().first)
        try text.replacingOccurrences(of: "," + firstName + ",", with: ",Renamed,").write(
            to: csv, atomically: true, encoding: .utf8)
        let pipeline = try String(
            contentsOf: repositoryRoot.appendingPathComponent("Pipelines/shop.yaml"), encoding: .utf8
        )
        .replacingOccurrences(of: "../SampleData", with: samples.path)
        let changed = try directory.file("shop.yaml", contents: pipeline)
        let third = try runSluice(["run", changed.path], environment: environment)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.stdout.contains("Customer: 3 read, 0 inserted, 1 updated, 2 unchanged"), "\(third.stdout)")
        #expect(try sqliteRows(store, "SELECT count(*) FROM customers WHERE name = 'Renamed'") == [[.integer(1)]])
    }

    @Test func rejectedRecordsGoToTheRejectsFileAndTooManyFailTheRunLeavingTheTargetAlone() throws {
        let directory = try TemporaryDirectory()
        let good = "customer_id,name,email,signup\n1,Ada,ADA@example.com,2024-01-15\n"
        let first = try runSluice(["run", try customersPipeline(in: directory, csv: good).path])
        #expect(first.status == 0, "\(first.stderr)")
        let store = directory.url.appendingPathComponent("out/c.sqlite").path
        let before = try sqliteRows(store, "SELECT customer_id, name, email FROM customers")

        let bad =
            good + "x2,Bo,bo@example.com,2024-02-30\n3,Cy,not-an-email,2024-03-01\n4,Di,di@example.com,2024-04-01\n"
        let second = try runSluice(["run", try customersPipeline(in: directory, csv: bad).path])
        #expect(second.status == 1)
        #expect(
            second.stderr.contains("2 records were rejected, more than errors.max (0); the target is unchanged"),
            "\(second.stderr)")
        #expect(
            try sqliteRows(store, "SELECT customer_id, name, email FROM customers") == before,
            "atomic: nothing of the failed run"
        )
        let rejects = try String(
            contentsOfFile: directory.url.appendingPathComponent("out/rejects.jsonl").path, encoding: .utf8
        )
        .split(separator: "\n").map(String.init)
        #expect(rejects.count == 2)
        #expect(
            rejects[0].contains(#""property":"id""#) && rejects[0].contains(#""raw":"x2""#)
                && rejects[0].contains(#""property":"signedUp""#),
            "every failure of the record: \(rejects[0])")
        #expect(rejects[0].contains(#""line":3"#))
        #expect(
            rejects[1].contains(#""property":"email""#) && rejects[1].contains(#""raw":"not-an-email""#),
            "validation failures too: \(rejects[1])")

        let allowed = try runSluice(["run", try customersPipeline(in: directory, csv: bad, max: 5).path])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(
            try sqliteRows(store, "SELECT customer_id FROM customers ORDER BY 1") == [[.integer(1)], [.integer(4)]])
    }

    @Test func aDryRunLeavesNoTarget() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try customersPipeline(
            in: directory, csv: "customer_id,name,email,signup\n1,Ada,a@example.com,2024-01-15\n")
        let result = try runSluice([
            "run", pipeline.path, "--dry-run", "--report", directory.url.appendingPathComponent("r.json").path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("out/c.sqlite").path))
        let report = try String(contentsOfFile: directory.url.appendingPathComponent("r.json").path, encoding: .utf8)
        #expect(report.contains(#""Customer" : {"#) && report.contains(#""inserted" : 1"#))
    }

    /// Two runs of one pipeline at once (as two cron jobs would): the second finds the lock taken
    /// and exits 4 without touching the target; the first completes.
    @Test func twoRunsAtOnceOnOneTarget() throws {
        let directory = try TemporaryDirectory()
        var csv = "customer_id,name,email,signup\n"
        for n in 1...50_000 { csv += "\(n),Customer \(n),c\(n)@example.com,2024-02-01\n" }
        let pipeline = try customersPipeline(in: directory, csv: csv)
        let first = try startSluice(["run", pipeline.path, "--quiet"])
        // The first run holds the lock once its work copy exists.
        let work = directory.url.appendingPathComponent("out/c.sqlite.sluice-tmp-\(first.processIdentifier)").path
        while first.isRunning && !FileManager.default.fileExists(atPath: work) { Thread.sleep(forTimeInterval: 0.002) }
        let second = try runSluice(["run", pipeline.path])
        first.waitUntilExit()
        #expect(first.terminationStatus == 0)
        #expect(second.status == 4 && second.stderr.contains("another run is writing the target"), "\(second.stderr)")
        #expect(
            try sqliteRows(directory.url.appendingPathComponent("out/c.sqlite").path, "SELECT count(*) FROM customers")
                == [[.integer(50_000)]])
    }

    @Test func aLockedTargetExitsWith4() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try customersPipeline(
            in: directory, csv: "customer_id,name,email,signup\n1,Ada,a@example.com,2024-01-15\n")
        try FileManager.default.createDirectory(
            at: directory.url.appendingPathComponent("out"), withIntermediateDirectories: true)
        let fd = open(directory.url.appendingPathComponent("out/c.sqlite.lock").path, O_RDWR | O_CREAT, 0o644)
        #expect(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
        defer { close(fd) }
        let result = try runSluice(["run", pipeline.path])
        #expect(result.status == 4)
        #expect(result.stderr.contains("another run is writing the target"))
    }
}

@Suite struct AtomicRunTests {
    /// A run killed with SIGKILL at several moments leaves the target exactly as before (1 customer)
    /// or exactly as after (1 + 20,000); a later run cleans up and completes. Through a symbolic
    /// link too: the real store is what is copied, replaced and locked, and the link stays a link.
    @Test(arguments: [false, true]) func aKilledRunLeavesTheTargetAsBeforeOrAsAfter(throughALink: Bool) throws {
        let directory = try TemporaryDirectory()
        var csv = "customer_id,name,email,signup\n1,Ada,ada@example.com,2024-01-15\n"
        let seed = try runSluice(["run", try customersPipeline(in: directory, csv: csv).path])
        #expect(seed.status == 0, "\(seed.stderr)")
        let target = directory.url.appendingPathComponent("out/c.sqlite").path
        let real = directory.url.appendingPathComponent("real.sqlite").path
        if throughALink {
            try FileManager.default.moveItem(atPath: target, toPath: real)
            try FileManager.default.createSymbolicLink(atPath: target, withDestinationPath: "../real.sqlite")
        }
        for n in 2...20_001 { csv += "\(n),Customer \(n),c\(n)@example.com,2024-02-01\n" }
        let pipeline = try customersPipeline(in: directory, csv: csv)
        let store = throughALink ? real : target
        var outcomes: Set<Int64> = []
        for delay in [0.05, 0.2, 0.4, 0.8, 1.2] {
            let process = try startSluice(["run", pipeline.path, "--quiet"])
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let count = try sqliteRows(store, "SELECT count(*) FROM customers")
            guard case .integer(let n) = count.first?.first else {
                Issue.record("the target cannot be read after a kill at \(delay) s")
                continue
            }
            #expect(n == 1 || n == 20_001, "after a kill at \(delay) s the target holds \(n) customers")
            if throughALink {
                #expect(try FileManager.default.destinationOfSymbolicLink(atPath: target) == "../real.sqlite")
            }
            outcomes.insert(n)
            if n == 20_001 { break }
        }
        #expect(outcomes.contains(1), "at least one kill must land mid-run for the test to mean something")
        let finish = try runSluice(["run", pipeline.path])
        #expect(finish.status == 0, "\(finish.stderr)")
        #expect(try sqliteRows(store, "SELECT count(*) FROM customers") == [[.integer(20_001)]])
        #expect(leftovers(beside: store).isEmpty)
        #expect(leftovers(beside: target).isEmpty)
        if throughALink {
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: target) == "../real.sqlite")
        }
    }
}
