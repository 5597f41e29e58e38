import ArgumentParser
import Foundation
import Logging
import Pipeline

/// `sluice check PIPELINE.yaml`: reads the pipeline and its model and checks them against each other,
/// touching no data.
struct Check: LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a pipeline file and its model without reading any data.",
        usage: "sluice check <pipeline> [<options>]",
        discussion: """
            Reports every mistake with file, line and column: unknown keys, wrong types,
            entities, attributes or relationships the model does not have, an attribute
            mapped twice, a `where` that does not parse, an unknown date format or
            transform, an unset ${VARIABLE}, a required attribute or relationship that
            nothing fills. Input files must exist (they are not read).

            Examples:
              sluice check Pipelines/shop.yaml
              SLUICE_OUT=/tmp/run sluice check Pipelines/shop.yaml

            Exit status: 0 the pipeline is usable; 2 it has errors; 3 an input file is
            missing.
            """)

    @Argument(help: "The pipeline file (YAML).")
    var pipeline: String

    @OptionGroup var logging: LogOptions

    func run() throws {
        let check = try exitingOnFailure { try PipelineCheck(pipelineAt: pipeline) }
        for problem in check.problems + check.missingInputs { log.error("\(problem)") }
        print(check.summary)
        if !check.problems.isEmpty { throw ExitCode(ExitStatus.usage.rawValue) }
        if !check.missingInputs.isEmpty { throw ExitCode(ExitStatus.failure.rawValue) }
    }
}
