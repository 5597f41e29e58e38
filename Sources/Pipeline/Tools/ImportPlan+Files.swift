import Foundation
import Stores

extension ImportPlan {
    /// An import's pipeline, loaded: run `config`.
    public struct Prepared: Sendable {
        public let config: PipelineConfig
        /// What the inputs define but hold no rows of (views, triggers, virtual tables).
        public let notImported: [String]
        /// What was guessed about the inputs (`ImportPlan.guesses`).
        public let guesses: [String]
        /// The texts the pipeline was loaded from, to compare plans by (`SampledImport`).
        let pipelineText: String, modelText: String?
        /// Whether the model was inferred from a sample (`ImportPlan.isSample`).
        public let isSample: Bool
        /// What the plan read of the target (`ImportPlan.targetReading`).
        public let targetReading: ImportPlan.TargetReading

        /// Whether `other` would run the same import, with the same warnings.
        func isSame(as other: Prepared) -> Bool {
            (pipelineText, modelText, notImported, guesses)
                == (other.pipelineText, other.modelText, other.notImported, other.guesses)
        }
    }

    /// Plans the import and loads its pipeline: kept in memory, or written to `savePipeline` (with
    /// the inferred model next to it, `<name>.model.yaml`) to keep and run again — never through a
    /// file in a shared temporary folder another user could change between the write and the read.
    /// - Throws: what `init(_:modelFile:folder:)` and `PipelineFile.load` throw; `RunFileError` when
    ///   a file cannot be written.
    public static func prepare(_ options: Options, savingPipelineTo savePipeline: String?) throws -> Prepared {
        // Before the target is looked at (opening a FIFO would wait forever).
        if !PostgresStore.isDatabaseURL(options.target) {
            try OutputFile.requireFile(TargetTransaction.realFile(options.target).path, "the target")
        }
        guard let savePipeline else {
            // Named after the first input, so that a message about them says what they were made from.
            let first = options.inputs.first.map { $0 == "-" ? "standard input" : $0 } ?? "the inputs"
            let base = URL(fileURLWithPath: first).standardizedFileURL.path
            let modelFile = base + " (inferred model)"
            let plan = try ImportPlan(options, modelFile: modelFile)
            var config = try PipelineFile.load(
                text: plan.pipelineText, file: base + " (import pipeline)",
                models: plan.modelText.map { [modelFile: $0] } ?? [:], quietModel: options.quiet)
            config.takeDatabaseURL(options.target)
            return Prepared(plan, config)
        }
        let saved = URL(fileURLWithPath: savePipeline).standardizedFileURL
        try OutputFile.check(saved.path, .pipeline, config: nil, reads: options.inputs, target: options.target)
        let modelFile = saved.deletingPathExtension().appendingPathExtension("model.yaml")
        let plan = try ImportPlan(options, modelFile: modelFile.path, folder: saved.deletingLastPathComponent())
        if let modelText = plan.modelText {
            try ReportFile.write(Data(modelText.utf8), to: modelFile.path, role: "the model file")
        }
        try ReportFile.write(Data(plan.pipelineText.utf8), to: saved.path, role: "the pipeline file")
        var config = try PipelineFile.load(contentsOf: saved)
        config.takeDatabaseURL(options.target)
        return Prepared(plan, config)
    }
}

extension ImportPlan.Prepared {
    init(_ plan: ImportPlan, _ config: PipelineConfig) {
        self.init(
            config: config, notImported: plan.notImported, guesses: plan.guesses, pipelineText: plan.pipelineText,
            modelText: plan.modelText, isSample: plan.isSample, targetReading: plan.targetReading)
    }
}

extension PipelineConfig {
    /// A postgres target of `sluice import` as the command line gave it: the pipeline written for it
    /// leaves a password of the URL out, the run connects with it.
    mutating func takeDatabaseURL(_ target: String) {
        guard store == .postgres, PostgresStore.isDatabaseURL(target) else { return }
        databaseURL = target
    }
}
