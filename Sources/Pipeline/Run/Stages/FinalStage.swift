import Foundation
import ObjectGraph
import Stores

/// The final stage, once every source is in: the rejects counted against `errors.max`, the
/// indexes a new store left for after the load built, and the whole graph validated against the
/// model's rules (`GraphValidation`: what a batch could not see — counts of to-many relationships
/// filled by later sources, keys across batches). Then the transaction commits.
struct FinalStage {
    let config: PipelineConfig
    let transaction: TargetTransaction
    let rejects: RejectsCollector

    /// Checks and completes the imported graph; returns the run's counts.
    /// - Throws: `RunError.tooManyRejects`, `.invalidGraph`, `.store`.
    func run(clock: inout StageClock) throws -> RunReport {
        try rejects.close()
        let report = rejects.currentReport
        if report.rejected > config.maxErrors {
            throw RunError.tooManyRejects(
                count: report.rejected, max: config.maxErrors, rejects: rejects.path,
                committed: transaction.commitsBatches, first: rejects.firstRejects)
        }
        let violations: [GraphViolation]
        do {
            transaction.startWriteback()
            if let sqlite = transaction.store as? SQLiteStore { try sqlite.buildPendingIndexes() }
            clock.end("indexes")
            transaction.startWriteback()
            violations = try GraphValidation.violations(in: transaction.coordinator)
        } catch let error as StoreError {
            throw RunError.store(error)
        }
        if !violations.isEmpty { throw RunError.invalidGraph(violations) }
        clock.end("validation")
        return report
    }
}

/// Where a run's time went: stages ended one after another (`target`: the lock, waited for with
/// `--wait-lock`, and the work copy).
struct StageClock {
    private var start = Date()
    private(set) var stages: [RunReport.Stage] = []

    /// Ends a stage now — or, for one of several sources of a pass, after `seconds` of the time
    /// since the last stage ended.
    mutating func end(_ name: String, seconds: Double? = nil) {
        let end = seconds.map { start.addingTimeInterval($0) } ?? Date()
        stages.append(.init(name: name, seconds: end.timeIntervalSince(start)))
        start = end
    }
}
