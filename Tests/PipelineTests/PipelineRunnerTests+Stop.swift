import Drivers
import Foundation
import TestSupport
import Testing

@testable import Pipeline

#if canImport(Glibc)
import Glibc
#endif

/// A run stopped in process (`RunStop.stopForTesting`: the check after a given batch fails as a
/// SIGTERM would make it) at several places, with several contexts and small batches.
extension PipelineRunnerTests {
    /// All records a run of the fixture reads.
    static let recordsRead = 14 + 40 + 80 + 31 + 62 + 50

    /// Runs `config` with a stop at check `check`; expects it stopped by SIGTERM, `committed` saying
    /// whether batches stay, having read part of the inputs.
    static func runStopped(
        _ config: PipelineConfig, atCheck check: Int, committed: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        RunStop.stopForTesting(atCheck: check)
        defer { RunStop.resetForTesting() }
        let runner = PipelineRunner(config: config)
        let error = #expect(throws: RunError.self, sourceLocation: sourceLocation) { try runner.run() }
        guard case .stopped(let signal, let isCommitted)? = error else {
            Issue.record("not stopped: \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(signal == SIGTERM && isCommitted == committed, sourceLocation: sourceLocation)
        let read = runner.report.totals.read
        #expect(read > 0 && read < recordsRead, "stopped mid-run: \(read) records read", sourceLocation: sourceLocation)
    }

    /// `commit: atomic`: a run stopped after some batches leaves the target as it was (the work copy
    /// removed, the lock released), and the next run completes.
    @Test(arguments: [3, 40, 90])
    func aStoppedAtomicRunLeavesTheTargetUnchanged(check: Int) throws {
        let fixture = try RunnerFixture()
        var products = try fixture.pipeline("t", size: 2, contexts: 3)
        products.sources = [products.sources[0]]
        try RunnerFixture.run(products)
        let target = fixture.path("t.sqlite")
        let before = try RunnerFixture.rows(of: target)
        #expect(before["Product"]?.count == 12 && before["Order"]?.isEmpty == true)

        let config = try fixture.pipeline("t", size: 2, contexts: 3)
        Self.runStopped(config, atCheck: check, committed: false)
        #expect(try RunnerFixture.rows(of: target) == before, "stopped at check \(check)")
        #expect(leftovers(beside: target).isEmpty)

        let (_, report) = try RunnerFixture.run(config)
        #expect(report.entities["Order"]?.inserted == 38 && report.entities["Product"]?.unchanged == 12)
        #expect(try sqliteRows(target, "SELECT count(*) FROM Event") == [[.integer(50)]])
    }

    /// `commit: batches`: a run stopped after some batches keeps them with a checkpoint (records
    /// waiting for a parent too); a plain run refuses the target, and a resumed one ends in the
    /// store of an uninterrupted run — no batch twice (the events have no key), none missing.
    /// Records that waited for a parent when the run stopped are read again and saved at another
    /// moment than in the whole run, so internal keys (order lines') are compared apart.
    @Test(arguments: [5, 30, 75])
    func aStoppedBatchRunResumesToTheStoreOfAWholeRun(check: Int) throws {
        let fixture = try RunnerFixture()
        try RunnerFixture.run(fixture.pipeline("whole", size: 2, contexts: 3, commit: .batches))
        let expected = try RunnerFixture.rows(of: fixture.path("whole.sqlite"))
        #expect(expected["Event"]?.count == 50 && expected["OrderLine"]?.count == 74)

        let config = try fixture.pipeline("cut", size: 2, contexts: 3, commit: .batches)
        let store = fixture.path("cut.sqlite")
        Self.runStopped(config, atCheck: check, committed: true)
        let checkpoint = try #require(try RunnerFixture.checkpoint(in: store), "a checkpoint at check \(check)")
        let kept = try RunnerFixture.rows(of: store)
        #expect(
            kept.values.map(\.count).reduce(0, +) < expected.values.map(\.count).reduce(0, +),
            "part of the data: \(checkpoint)")

        let refused = #expect(throws: RunError.self) { try RunnerFixture.run(config) }
        guard case .interrupted? = refused else {
            Issue.record("a plain run over the checkpoint: \(String(describing: refused))")
            return
        }
        #expect(try RunnerFixture.rows(of: store) == kept, "a refused run changes nothing")

        try RunnerFixture.run(config, resume: true)
        let resumed = try RunnerFixture.rows(of: store, internalKeys: false)
        let whole = try RunnerFixture.rows(of: fixture.path("whole.sqlite"), internalKeys: false)
        for table in whole.keys.sorted() {
            #expect(resumed[table] == whole[table], "\(table), stopped at check \(check) (\(checkpoint))")
        }
        let keys = try sqliteRows(store, "SELECT min(rowid), max(rowid), count(*) FROM OrderLine")
        #expect(keys == [[.integer(1), .integer(74), .integer(74)]], "order lines keyed 1…74 still")
        #expect(try RunnerFixture.checkpoint(in: store) == nil, "the checkpoint goes when the run completes")
    }
}
