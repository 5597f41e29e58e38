import ArgumentParser
import Foundation
import ObjectGraph
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
        let config: PipelineConfig
        do {
            config = try PipelineFile.load(contentsOf: URL(fileURLWithPath: pipeline))
        } catch {
            throw report(error)
        }
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

/// Runs a loaded pipeline, prints its summary (unless quiet) and maps failures to exit statuses
/// (`sluice run` and `sluice import`).
func execute(_ config: PipelineConfig, _ output: RunOutput, resume: Bool) throws {
    let (dryRun, quiet, report) = (output.dryRun, output.quiet, output.report)
    let result: RunReport
    do {
        result = try PipelineRunner(config: config).run(
            dryRun: dryRun, showsProgress: !quiet && isatty(STDERR_FILENO) != 0, resume: resume)
    } catch let error as RunError {
        fail("\(error)")
        switch error {
        case .tooManyRejects, .invalidGraph: throw ExitStatus.dataErrors
        case .locked: throw ExitStatus.locked
        case .input(_, let message) where message.contains("the input has no field"): throw ExitStatus.configError
        case .input, .store: throw ExitStatus.ioError
        case .interrupted: throw ExitStatus.configError
        }
    } catch let error as PipelineFileError {
        fail("\(error)")
        throw ExitStatus.configError
    } catch let error as StoreError where error.code == .incompatibleModel {
        fail("\(error)")
        throw ExitStatus.configError
    } catch {
        fail("\(error)")
        throw ExitStatus.ioError
    }
    if let report {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do { try encoder.encode(result).write(to: URL(fileURLWithPath: report)) } catch {
            fail("cannot write the report \(report): \(error.localizedDescription)")
            throw ExitStatus.ioError
        }
    }
    if !quiet { print(summary(result, config, dryRun: dryRun)) }
}

private func summary(_ report: RunReport, _ config: PipelineConfig, dryRun: Bool) -> String {
    let target = dryRun || config.store == .inMemory ? "an in-memory store (dry run)" : (config.targetPath ?? "")
    var lines = [
        String(
            format: "Imported into %@ in %.2f s (peak memory %.0f MB).", target, report.seconds, report.peakRSSMegabytes
        )
    ]
    for (entity, counts) in report.entities.sorted(by: { $0.key < $1.key }) {
        lines.append(
            "  \(entity): \(counts.read) read, \(counts.inserted) inserted, \(counts.updated) updated, "
                + "\(counts.unchanged) unchanged, \(counts.rejected) rejected"
        )
    }
    if !report.stages.isEmpty {
        lines.append(
            "  Time: " + report.stages.map { String(format: "%@ %.2f s", $0.name, $0.seconds) }.joined(separator: ", "))
    }
    if report.rejected > 0 {
        lines.append(
            "  \(report.rejected) rejected record\(report.rejected == 1 ? "" : "s") in "
                + "\(config.rejectsPath ?? "(no rejects file)")"
        )
    }
    return lines.joined(separator: "\n")
}

func fail(_ message: String) {
    FileHandle.standardError.write(Data("sluice: \(message)\n".utf8))
}
