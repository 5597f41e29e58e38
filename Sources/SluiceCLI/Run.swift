import ArgumentParser
import Foundation
import Pipeline

/// `sluice run PIPELINE.yaml`: runs a pipeline into its target store.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a pipeline: read its sources, map and validate the records, write the target store.",
        discussion: """
            With `commit: atomic` the target is replaced only when the run succeeds; with `commit:
            batches` each batch commits with a checkpoint, and after an interrupted run `--resume`
            goes on from it (a target holding a checkpoint is refused without it). Records that
            fail are written to `errors.rejects` (one JSON line each, every failure with its
            position); more than `errors.max` of them fail the run.

            Examples:
              sluice run Pipelines/shop.yaml
              sluice run Pipelines/shop.yaml --dry-run --report /tmp/report.json
              sluice run nightly.yaml --resume

            Exit status: 0 success; 1 too many rejected records, or the imported graph breaks a
            rule of the model (a count, a key, a required value); 2 pipeline or model error, or an
            interrupted run to resume; 3 input, store or I/O error; 4 another run holds the target's lock.
            """)

    @Argument(help: "The pipeline file (YAML).")
    var pipeline: String

    @OptionGroup var output: RunOutput

    @Flag(help: "With `commit: batches`: go on from the checkpoint an interrupted run left in the target.")
    var resume = false

    func run() throws {
        let config = try exitingOnFailure { try PipelineFile.load(contentsOf: URL(fileURLWithPath: pipeline)) }
        try execute(config, output, resume: resume)
    }
}

/// What `sluice run` and `sluice import` share: dry run, report file, quiet.
struct RunOutput: ParsableArguments {
    @Flag(help: "Import into an in-memory store; the target is not touched.")
    var dryRun = false

    @Option(help: "Also write the report as JSON to this file.")
    var report: String?

    @Flag(help: "Print nothing but errors.")
    var quiet = false
}

/// Runs a loaded pipeline, writes the report and prints the summary (unless quiet); a failure is
/// printed and becomes its exit status (`sluice run` and `sluice import`).
func execute(_ config: PipelineConfig, _ output: RunOutput, resume: Bool) throws {
    try exitingOnFailure {
        let showsProgress = !output.quiet && isatty(STDERR_FILENO) != 0
        let result = try PipelineRunner(config: config).run(
            dryRun: output.dryRun, showsProgress: showsProgress, resume: resume)
        if let report = output.report { try result.writeJSON(to: report) }
        if !output.quiet { print(result.summary(for: config, dryRun: output.dryRun)) }
    }
}
