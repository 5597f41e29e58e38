import Foundation

extension ImportPlan {
    /// An import's pipeline written to disk and loaded: run `config`, then `removeFiles()` (which
    /// keeps them when the user asked to save the pipeline).
    public struct Prepared {
        public let config: PipelineConfig
        /// What the inputs define but hold no rows of (views, triggers, virtual tables).
        public let notImported: [String]
        /// What was guessed about the inputs (`ImportPlan.guesses`).
        public let guesses: [String]
        let files: [URL]

        /// Removes the pipeline and model files written for the run, unless they were asked for.
        public func removeFiles() {
            for file in files { try? FileManager.default.removeItem(at: file) }
        }
    }

    /// Plans the import and writes its pipeline — to `savePipeline` (with the inferred model next to
    /// it, `<name>.model.yaml`) to keep, or to temporary files — and loads it.
    /// - Throws: what `init(_:modelFile:)` and `PipelineFile.load` throw; `RunFileError` when a
    ///   file cannot be written.
    public static func prepare(_ options: Options, savingPipelineTo savePipeline: String?) throws -> Prepared {
        let saved = savePipeline.map { URL(fileURLWithPath: $0) }
        if let saved {
            try OutputFile.check(saved.path, .pipeline, config: nil, reads: options.inputs, target: options.target)
        }
        let directory = saved?.deletingLastPathComponent() ?? FileManager.default.temporaryDirectory
        let stem = saved?.deletingPathExtension().lastPathComponent ?? Leftovers.prefix("sluice-import") + "pipeline"
        let modelFile = directory.appendingPathComponent(stem + ".model.yaml")
        let plan = try ImportPlan(
            options, modelFile: modelFile.path, folder: saved?.deletingLastPathComponent())
        let pipelineFile = saved ?? directory.appendingPathComponent(stem + ".yaml")
        var written: [URL] = []
        func write(_ text: String, to url: URL, _ role: String) throws {
            try ReportFile.write(Data(text.utf8), to: url.path, role: role)
            written.append(url)
        }
        do {
            if let modelText = plan.modelText { try write(modelText, to: modelFile, "the model file") }
            try write(plan.pipelineText, to: pipelineFile, "the pipeline file")
            let config = try PipelineFile.load(contentsOf: pipelineFile)
            return Prepared(
                config: config, notImported: plan.notImported, guesses: plan.guesses, files: saved == nil ? written : []
            )
        } catch {
            if saved == nil { for file in written { try? FileManager.default.removeItem(at: file) } }
            throw error
        }
    }
}
