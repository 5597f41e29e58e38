import ArgumentParser
import Foundation
import Pipeline

/// `sluice check PIPELINE.yaml`: reads the pipeline and its model and checks them against each other,
/// touching no data.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a pipeline file and its model without reading any data.",
        discussion: """
            Reports every mistake with file, line and column: unknown keys, wrong types, entities,
            attributes or relationships the model does not have, an attribute mapped twice, a `where`
            that does not parse, an unset ${VARIABLE}. Input files must exist (they are not read).

            Examples:
              sluice check Pipelines/shop.yaml
              SLUICE_OUT=/tmp/run sluice check Pipelines/shop.yaml

            Exit status: 0 the pipeline is usable; 2 it has errors; 3 an input file is missing.
            """)

    @Argument(help: "The pipeline file (YAML).")
    var pipeline: String

    func run() throws {
        let config: PipelineConfig
        do {
            config = try PipelineFile.load(contentsOf: URL(fileURLWithPath: pipeline))
        } catch let error as PipelineFileError {
            FileHandle.standardError.write(Data("sluice: \(error)\n".utf8))
            throw ExitStatus.configError
        } catch let error as ModelFileError {
            FileHandle.standardError.write(Data("sluice: \(error)\n".utf8))
            throw ExitStatus.configError
        }
        let missing = config.sources.filter { $0.path != "-" && !FileManager.default.fileExists(atPath: $0.path) }
        for source in missing {
            let message =
                "\(config.file):\(source.line): source \(source.name): the input \(source.path) does not exist"
            FileHandle.standardError.write(Data("sluice: \(message)\n".utf8))
        }
        print(summary(config))
        if !missing.isEmpty { throw ExitStatus.ioError }
    }

    private func summary(_ config: PipelineConfig) -> String {
        let target =
            config.store == .inMemory ? "an in-memory store" : "\(config.store.storeType) \(config.targetPath ?? "?")"
        var lines = [
            "\(pipeline): OK",
            "  model \(config.modelPath) (\(config.model.entities.count) entities)",
            "  target \(target), commit \(config.commit.rawValue), batches of \(config.batchSize) in "
                + "\(config.contexts) context\(config.contexts == 1 ? "" : "s"), merge \(config.merge)",
        ]
        for source in config.sources {
            lines.append(
                "  source \(source.name): \(source.format.rawValue) \(source.path) → \(describe(source.mapping))")
        }
        return lines.joined(separator: "\n")
    }

    private func describe(_ mapping: PipelineConfig.Mapping) -> String {
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
