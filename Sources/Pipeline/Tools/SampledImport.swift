import Foundation
import Synchronization

/// A one-off import in one pass over its inputs: the model is inferred from the first records of
/// each CSV input and the import runs with it at once, while a thread of its own infers the model
/// from every record, as a two-pass import would. Before the import commits (or when it fails) it
/// asks `stands()`: the attempt stands only when the whole inputs give the very same plan (pipeline,
/// model, warnings). Otherwise the run is thrown away unpublished — no target change, no rejects
/// file — and runs again with the whole inputs' plan (`wholePlan()`), so the result is always the
/// two-pass import's. Waiting for the whole plan ends at a signal (`RunStop`), as a run does.
public final class SampledImport: Sendable {
    /// Records of each CSV input the sample holds: 50,000, or `SLUICE_IMPORT_SAMPLE` (the tests run
    /// every import with a sample of one record, so that each takes this path and both its ends).
    public static let sampleRecords =
        ProcessInfo.processInfo.environment["SLUICE_IMPORT_SAMPLE"].flatMap { Int($0) }.map { max(1, $0) } ?? 50_000

    /// The plan the import runs with first.
    public let sample: ImportPlan.Prepared
    private let whole = Mutex<Result<ImportPlan.Prepared, any Error>?>(nil)
    /// Signalled once, when `whole` is set (then it stays set).
    private let done = DispatchSemaphore(value: 0)

    private init(sample: ImportPlan.Prepared) { self.sample = sample }

    /// Plans the import from a sample of its CSV inputs; when an input holds more records than the
    /// sample, starts inferring from all of them and returns the check too (`nil`: the plan is of every
    /// record, nothing to check). The second plan takes the first's reading of the target (the run
    /// holds it by then) and keeps a given model's warnings, told once already, to itself.
    /// - Throws: what `ImportPlan.prepare` throws.
    public static func start(_ options: ImportPlan.Options) throws -> (ImportPlan.Prepared, SampledImport?) {
        var sampled = options
        sampled.sampleRecords = sampleRecords
        let plan = try ImportPlan.prepare(sampled, savingPipelineTo: nil)
        guard plan.isSample else { return (plan, nil) }
        let check = SampledImport(sample: plan)
        var whole = options
        whole.targetReading = plan.targetReading
        whole.quiet = true
        Thread.detachNewThread { [whole] in
            let result = Result { try ImportPlan.prepare(whole, savingPipelineTo: nil) }
            check.whole.withLock { $0 = result }
            check.done.signal()
        }
        return (plan, check)
    }

    /// The whole inputs' plan once made, waiting for it unless `waits` is false (`nil` then).
    /// - Throws: `RunError.stopped` when a signal asks the run to stop meanwhile.
    private func wholeResult(waits: Bool) throws -> Result<ImportPlan.Prepared, any Error>? {
        if let known = whole.withLock({ $0 }) { return known }
        guard waits else { return nil }
        while done.wait(timeout: .now() + 0.05) == .timedOut {
            if let signal = RunStop.requested { throw RunError.stopped(signal: signal) }
        }
        done.signal()  // for whoever waits next
        return whole.withLock { $0 }
    }

    /// The whole inputs' plan, to run again with when the attempt did not stand.
    /// - Throws: what planning the whole inputs threw (the error a two-pass import would have ended
    ///   with); `RunError.stopped` for a signal while waiting.
    public func wholePlan() throws -> ImportPlan.Prepared { try wholeResult(waits: true)!.get() }
}

extension SampledImport: RunAttemptCheck {
    /// Whether the import run with the sample's plan is the one the whole inputs ask for (waits for
    /// them); `false` when the whole inputs failed to plan (`wholePlan()` throws why).
    public func stands() throws -> Bool { Self.stands(try wholeResult(waits: true), sample) }

    public var standsSoFar: Bool? { try? wholeResult(waits: false).map { Self.stands($0, sample) } }

    private static func stands(_ whole: Result<ImportPlan.Prepared, any Error>?, _ sample: ImportPlan.Prepared) -> Bool
    {
        guard case .success(let plan) = whole else { return false }
        return plan.isSame(as: sample)
    }
}
