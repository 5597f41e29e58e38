import Foundation
import Synchronization

/// A one-off import in one pass over its inputs: the model is inferred from the first records of
/// each CSV input and the import runs with it at once, while a thread of its own infers the model
/// from every record, as a two-pass import would. Before the import commits (or when it fails) it
/// asks `stands()`: the attempt stands only when the whole inputs give the very same plan (pipeline,
/// model, warnings). Otherwise the run is thrown away unpublished — no target change, no rejects
/// file — and runs again with the whole inputs' plan (`wholePlan()`), so the result is always the
/// two-pass import's.
public final class SampledImport: Sendable {
    /// Records of each CSV input the sample holds: 50,000, or `SLUICE_IMPORT_SAMPLE` (the tests run
    /// every import with a sample of one record, so that each takes this path and both its ends).
    public static let sampleRecords =
        ProcessInfo.processInfo.environment["SLUICE_IMPORT_SAMPLE"].flatMap { Int($0) }.map { max(1, $0) } ?? 50_000

    /// The plan the import runs with first.
    public let sample: ImportPlan.Prepared
    private let whole = Mutex<Result<ImportPlan.Prepared, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    private init(sample: ImportPlan.Prepared) { self.sample = sample }

    /// Plans the import from a sample of its CSV inputs; when an input holds more records than the
    /// sample, starts inferring from all of them and returns the check too (`nil`: the plan is of every
    /// record, nothing to check).
    /// - Throws: what `ImportPlan.prepare` throws.
    public static func start(_ options: ImportPlan.Options) throws -> (ImportPlan.Prepared, SampledImport?) {
        var sampled = options
        sampled.sampleRecords = sampleRecords
        let plan = try ImportPlan.prepare(sampled, savingPipelineTo: nil)
        guard plan.isSample else { return (plan, nil) }
        let check = SampledImport(sample: plan)
        Thread.detachNewThread {
            let result = Result { try ImportPlan.prepare(options, savingPipelineTo: nil) }
            check.whole.withLock { $0 = result }
            check.done.signal()
        }
        return (plan, check)
    }

    /// Waits for the whole inputs' plan.
    private func wholeResult() -> Result<ImportPlan.Prepared, any Error> {
        done.wait()
        done.signal()  // for the next caller
        return whole.withLock { $0! }
    }

    /// Whether the import run with the sample's plan is the one the whole inputs ask for (waits for
    /// them); `false` when the whole inputs failed to plan too (`wholePlan()` throws why).
    public func stands() -> Bool {
        guard case .success(let plan) = wholeResult() else { return false }
        return plan.isSame(as: sample)
    }

    /// The whole inputs' plan, to run again with when `stands()` said no.
    /// - Throws: what planning the whole inputs threw (the error a two-pass import would have ended with).
    public func wholePlan() throws -> ImportPlan.Prepared { try wholeResult().get() }
}

/// Thrown by `PipelineRunner.run` when `Options.stands` says the attempt does not stand: nothing was
/// committed or published.
public struct RunSuperseded: Error {}
