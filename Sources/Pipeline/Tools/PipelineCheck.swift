import Foundation
import ObjectGraph
import Readers

/// `sluice check`: a pipeline file and its model read and checked against each other, no data read.
public struct PipelineCheck: Sendable {
    /// The pipeline as understood: model, target, batches, and each source's mapping.
    public let summary: String
    /// One message per input file that does not exist (`file:line: source NAME: the input … does not exist`).
    public let missingInputs: [String]

    /// Loads and checks the pipeline at `path`.
    /// - Throws: `PipelineFileError` (with `ModelFileError` issues) naming file, line and column.
    public init(pipelineAt path: String) throws {
        let config = try PipelineFile.load(contentsOf: URL(fileURLWithPath: path))
        missingInputs = config.sources.filter { $0.path != "-" && !FileManager.default.fileExists(atPath: $0.path) }
            .map { "\(config.file):\($0.line): source \($0.name): the input \($0.path) does not exist" }
        let target =
            config.store == .inMemory ? "an in-memory store" : "\(config.store.storeType) \(config.targetPath ?? "?")"
        let contexts = "\(config.contexts) context\(config.contexts == 1 ? "" : "s")"
        var lines = [
            "\(path): OK",
            "  model \(config.modelPath) (\(config.model.entities.count) entities)",
            "  target \(target), commit \(config.commit.rawValue), batches of \(config.batchSize) in \(contexts), "
                + "merge \(config.merge)",
        ]
        for source in config.sources {
            lines.append(
                "  source \(source.name): \(source.format.rawValue) \(source.path) → \(Self.describe(source.mapping))")
        }
        summary = lines.joined(separator: "\n")
    }

    private static func describe(_ mapping: PipelineConfig.Mapping) -> String {
        if let links = mapping.links {
            let owner: String
            switch links {
            case .found(let key): owner = "\(mapping.entity) found by \(key.map(\.attribute).joined(separator: ", "))"
            case .parent: owner = "the enclosing \(mapping.entity)"
            }
            let added = mapping.relationships.map {
                "\($0.relationship) += \($0.entity) by \($0.key.map(\.attribute).joined(separator: ", "))"
            }
            return "links of \(owner) (\(added.joined(separator: "; ")))"
        }
        var parts = ["\(mapping.entity) (\(mapping.fields.count) field\(mapping.fields.count == 1 ? "" : "s")"]
        if !mapping.key.isEmpty { parts.append("key \(mapping.key.joined(separator: ", "))") }
        for lookup in mapping.relationships {
            parts.append(
                "\(lookup.relationship) → \(lookup.entity) by \(lookup.key.map(\.attribute).joined(separator: ", "))")
        }
        var text = parts.joined(separator: "; ") + ")"
        for child in mapping.children { text += "; children \(child.record) → \(describe(child.mapping))" }
        return text
    }
}
