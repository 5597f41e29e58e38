import ArgumentParser
import Foundation
import Logging
import Pipeline

/// `sluice run PIPELINE.yaml`: runs a pipeline into its target store.
struct Run: LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a pipeline: read, map, validate, write the target store.",
        usage: "sluice run <pipeline> [<options>]",
        discussion: """
            With `commit: atomic` the target is replaced only when the run succeeds;
            with `commit: batches` each batch commits with a checkpoint, and after an
            interrupted run `--resume` goes on from it.

            Rejected records (one JSON line each, every failure with its position) go to
            a file of the run's own next to the target (target.rejects-TIME.jsonl), or
            where `errors.rejects` or --rejects says; more than `errors.max` of them
            fail the run.

            --dry-run previews the run against a copy of the target: the same counts,
            the same rejects, nothing written but the report.

            Examples:
              sluice run Pipelines/shop.yaml
              sluice run Pipelines/shop.yaml --dry-run --report /tmp/report.json
              sluice run nightly.yaml --resume --wait-lock 600 --log-format json

            Exit status: 0 done; 1 too many rejected records, or a graph breaking the
            model; 2 usage, model or pipeline error, or an interrupted run to resume; 3
            input, store or I/O error; 4 the target is locked; 130/143 SIGINT/SIGTERM.
            """)

    @Argument(help: "The pipeline file (YAML).")
    var pipeline: String

    @OptionGroup var output: RunOutput

    @Flag(help: "With `commit: batches`: go on from the checkpoint of an interrupted run.")
    var resume = false

    @Flag(help: "With `commit: batches`: set an interrupted run's checkpoint aside and start over.")
    var discardCheckpoint = false

    @OptionGroup var logging: LogOptions

    func validate() throws {
        if resume && discardCheckpoint {
            throw ValidationError("--resume goes on from the checkpoint, --discard-checkpoint sets it aside: give one")
        }
    }

    func run() throws {
        try execute(command: "run", pipeline: pipeline, output, resume: resume, discardCheckpoint: discardCheckpoint) {
            try PipelineFile.load(contentsOf: URL(fileURLWithPath: pipeline))
        }
    }
}

/// What `sluice run` and `sluice import` share: dry run, report, rejects, lock wait, quiet.
struct RunOutput: ParsableArguments {
    @Flag(help: "Preview against a copy of the target: exact counts, nothing written.")
    var dryRun = false

    @Option(help: "Write the run's report (JSON) to this file, however the run ends.")
    var report: String?

    @Option(
        help: ArgumentHelp(
            "Rejected records go to this file, or to a new file in this folder.", valueName: "path"))
    var rejects: String?

    @Option(help: ArgumentHelp("Wait up to this long for a run holding the lock.", valueName: "seconds"))
    var waitLock: Double = 0

    @Flag(help: "Print nothing but warnings and errors.")
    var quiet = false

    func validate() throws {
        guard waitLock >= 0 else { throw ValidationError("--wait-lock cannot be negative") }
    }
}

/// The report of a command running a pipeline: written when it ends, or when a signal ends it.
private final class RunRecord: @unchecked Sendable {
    // @unchecked: `config`, `runner` and `path` are read and written with `lock` held; the rest is
    // constant.
    private let lock = NSLock()
    private var config: PipelineConfig?
    private var runner: PipelineRunner?
    private var path: String?
    private let command: String, pipeline: String?, dryRun: Bool
    private let started = Date()

    init(command: String, pipeline: String?, path: String?, dryRun: Bool) {
        (self.command, self.pipeline, self.path, self.dryRun) = (command, pipeline, path, dryRun)
    }

    func set(_ config: PipelineConfig, _ runner: PipelineRunner) {
        lock.withLock { (self.config, self.runner) = (config, runner) }
    }

    /// Runs `runner`; when a sampled import's attempt does not stand, the whole inputs' plan instead.
    /// - Returns: the configuration and runner that ran, and the report.
    func run(
        _ runner: PipelineRunner, _ options: PipelineRunner.Options, check: SampledImport?, output: RunOutput,
        command: String
    ) throws -> (PipelineConfig, PipelineRunner, RunReport) {
        do {
            let report = try runner.run(options)
            if let check { warnAbout(check.sample) }
            return (runner.config, runner, report)
        } catch is RunSuperseded {
            // The whole inputs plan otherwise than their sample: the import again, with their plan.
            let whole: ImportPlan.Prepared
            do { whole = try check!.wholePlan() } catch {
                forget()  // as when planning fails before a run
                throw error
            }
            warnAbout(whole)
            let config = try finished(whole.config, output)
            let again = PipelineRunner(config: config)
            set(config, again)
            var options = options
            options.check = nil
            log.info("\(command) runs again with the model of every record (the first records' differed)")
            return (config, again, try again.run(options))
        } catch {
            // The attempt stood (or a signal stopped it): its plan's warnings, as a run tells them.
            if let check { warnAbout(check.sample) }
            throw error
        }
    }

    /// The run's plan is no more (`SampledImport`'s whole inputs failed to plan): the report tells
    /// of no pipeline, as for a plan that failed before any run.
    func forget() { lock.withLock { (config, runner) = (nil, nil) } }

    /// The report's path was refused (it is a file the run reads or writes): nothing is written there.
    func refusePath() { lock.withLock { path = nil } }

    /// `config` with the command line's rejects file over the pipeline's, once the report's path is
    /// checked against it.
    func finished(_ config: PipelineConfig, _ output: RunOutput) throws -> PipelineConfig {
        var config = config
        if let rejects = output.rejects { config.rejectsPath = rejects }
        if let path = output.report {
            do { try OutputFile.check(path, .report, config: config) } catch {
                refusePath()
                throw error
            }
        }
        return config
    }

    /// Writes the report (when `--report` asked for one) of the run ended by `error`, or done.
    func write(_ error: (any Error)?) {
        let state: (PipelineConfig?, PipelineRunner?, String?) = lock.withLock { (config, runner, path) }
        guard let path = state.2 else { return }
        let outcome = RunOutcome(
            config: state.0, command: command, pipeline: pipeline, dryRun: dryRun, started: started,
            report: state.1?.report ?? RunReport(), rejectsFile: state.1?.rejectsFile, error: error)
        do { try outcome.write(to: path) } catch { log.error("\(error)") }
    }
}

/// Runs a pipeline (`prepare` reads it) and writes its report however it ends; prints the
/// summary (unless quiet), a warning naming the rejects file when records were rejected, and on
/// failure the error — which becomes the exit status (`sluice run` and `sluice import`).
/// - Parameters:
///   - pipeline: the pipeline file, for the report.
///   - sampled: after `prepare`, the check of an import planned from a sample (`SampledImport`): the
///     run stands only when the whole inputs plan the same, else runs again with their plan.
func execute(
    command: String, pipeline: String?, _ output: RunOutput, resume: Bool, discardCheckpoint: Bool = false,
    sampled: () -> SampledImport? = { nil }, prepare: () throws -> PipelineConfig
) throws {
    if let path = output.report {
        try exitingOnFailure {
            try OutputFile.check(path, .report, config: nil, reads: pipeline.map { [$0] } ?? [])
            try ReportFile.check(path)
        }
    }
    let record = RunRecord(
        command: command, pipeline: pipeline.map { URL(fileURLWithPath: $0).standardizedFileURL.path },
        path: output.report, dryRun: output.dryRun)
    RunStop.catchSignals { signal in
        let error = RunError.stopped(signal: signal)
        record.write(error)
        Foundation.exit(failure(error).rawValue)
    }
    do {
        var config = try record.finished(prepare(), output)
        let check = sampled()
        var runner = PipelineRunner(config: config)
        record.set(config, runner)
        var options = output.runnerOptions(resume: resume, discardCheckpoint: discardCheckpoint)
        options.check = check
        log.info(
            "\(command) started",
            metadata: [
                "pipeline": "\(pipeline ?? "-")", "target": "\(config.targetName)",
                "dryRun": .stringConvertible(output.dryRun),
            ])
        let report: RunReport
        (config, runner, report) = try record.run(runner, options, check: check, output: output, command: command)
        record.write(nil)
        for note in runner.notes { warn(note) }
        if let (source, batches) = runner.discardedCheckpoint {
            warn(
                "set aside the checkpoint of an interrupted run (source \(source), \(batches) batches done): this run "
                    + "started from the first record; the batches it committed stayed (keyed records merged)")
        }
        let counts = report.totals
        log.info(
            "\(command) done",
            metadata: [
                "read": .stringConvertible(counts.read), "inserted": .stringConvertible(counts.inserted),
                "updated": .stringConvertible(counts.updated), "unchanged": .stringConvertible(counts.unchanged),
                "rejected": .stringConvertible(report.rejected), "filtered": .stringConvertible(counts.filtered),
                "deleted": .stringConvertible(counts.deleted),
                "seconds": .stringConvertible((report.seconds * 100).rounded() / 100),
            ])
        if report.rejected > 0 {
            let count = "\(report.rejected) record\(report.rejected == 1 ? " was" : "s were")"
            let place = runner.rejectsFile.map { "; they are in \($0)" } ?? ""
            warn("\(count) rejected (errors.max \(config.maxErrors))\(place)\(output.dryRun ? " in the dry run" : "")")
        }
        if !output.quiet {
            print(
                report.summary(
                    for: config, dryRun: output.dryRun, rejectsFile: runner.rejectsFile, first: runner.firstRejects))
        }
    } catch let exit as ExitCode {
        throw exit
    } catch {
        record.write(error)
        throw failure(error)
    }
}

extension RunOutput {
    /// The runner's options for what the command line asks.
    func runnerOptions(resume: Bool, discardCheckpoint: Bool) -> PipelineRunner.Options {
        var options = PipelineRunner.Options()
        options.dryRun = dryRun
        options.showsProgress = !quiet && isatty(STDERR_FILENO) != 0
        options.resume = resume
        options.discardCheckpoint = discardCheckpoint
        options.waitLock = waitLock
        return options
    }
}
