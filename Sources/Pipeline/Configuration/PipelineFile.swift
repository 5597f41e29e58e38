import Foundation
import ModelFiles
import ObjectGraph
import Yams

/// Reads pipeline files (format in docs/pipeline-files.md): `${VAR}` and `${VAR:-default}` from the
/// environment in every value, paths relative to the file, and every mistake reported with file,
/// line and column — unknown keys, wrong types, entities, attributes and relationships the model
/// does not have, an attribute mapped twice, a `where` that does not parse.
public enum PipelineFile {
    /// - Throws: `PipelineFileError`; `ModelFileError` when the model file is wrong.
    public static func load(
        contentsOf url: URL, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PipelineConfig {
        let path = url.standardizedFileURL.path
        let text: String
        switch ModelFileIssue.readText(at: path, "the pipeline file") {
        case .success(let read): text = read
        case .failure(let issue): throw PipelineFileError(issues: [issue])
        }
        return try load(text: text, file: path, environment: environment)
    }

    /// Reads a pipeline from text; `file` names it in errors and is the base of relative paths.
    /// - Parameter models: model files held in memory, by absolute path (read instead of the disk).
    public static func load(
        text: String, file: String, environment: [String: String] = ProcessInfo.processInfo.environment,
        models: [String: String] = [:], quietModel: Bool = false
    ) throws -> PipelineConfig {
        var reader = PipelineReader(file: file, environment: environment, models: models)
        reader.quietModel = quietModel
        let root: Node?
        do { root = try Yams.compose(yaml: text) } catch { throw PipelineFileError(issues: [reader.issue(for: error)]) }
        guard let root else {
            throw PipelineFileError(issues: [
                ModelFileIssue(file: file, line: 1, column: 1, message: "the pipeline file is empty")
            ])
        }
        let config = try reader.read(root)
        if !reader.issues.isEmpty || config == nil { throw PipelineFileError(issues: reader.issues) }
        return config!
    }
}
