import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Stores
import Yams

extension PipelineReader {
    // MARK: The file, by section

    mutating func read(_ root: Node) throws -> PipelineConfig? {
        let allowed: Set<String> = ["version", "model", "target", "batch", "merge", "errors", "limits", "sources"]
        let entries = pairs(root, allowed: allowed, what: "the pipeline file")
        guard let modelEntry = entries.first(where: { $0.key == "model" }) else {
            fail(root, "the pipeline file needs `model:` (the model file, relative to this file)")
            return nil
        }
        guard let modelPath = path(modelEntry.value, "model") else { return nil }
        let model: ManagedObjectModel, modelText: (text: String, isJSON: Bool)?
        do { (model, modelText) = try loadModel(at: modelPath) } catch let error as ModelFileError {
            issues += error.issues
            return nil
        }
        var config = PipelineConfig(file: file, modelPath: modelPath, model: model, modelText: modelText)
        var limits = ReaderLimits.standard
        for (key, _, value) in entries {
            switch key {
            case "version":
                if text(value, "version") != "1" { fail(value, "this Sluice reads pipeline files of version 1") }
            case "target": readTarget(value, into: &config)
            case "batch": readBatch(value, into: &config)
            case "merge": readMerge(value, into: &config)
            case "errors":
                for (key, _, value) in pairs(value, allowed: ["max", "rejects"], what: "errors") {
                    if key == "max" { config.maxErrors = number(value, "errors.max", minimum: 0) ?? 0 }
                    if key == "rejects" { config.rejectsPath = path(value, "errors.rejects") }
                }
            case "limits": readLimits(value, into: &limits)
            case "sources": readSources(value, model: model, into: &config)
            default: break
            }
        }
        for index in config.sources.indices {
            config.sources[index].limits = limits
            config.sources[index].csv.maxRecordBytes = limits.recordBytes
        }
        checkFile(config, root: root, entries: entries)
        return config
    }

    /// The model the pipeline names, and the text it was read from (read once: the store records
    /// what the run used, even if the file changes meanwhile); an Xcode model has no text.
    private func loadModel(at path: String) throws -> (ManagedObjectModel, (text: String, isJSON: Bool)?) {
        if XcodeModel.isXcodeModel(path) {
            let url = URL(fileURLWithPath: path)
            return (
                try quietModel ? ModelFile.load(contentsOf: url, warn: { _ in }) : ModelFile.load(contentsOf: url), nil
            )
        }
        let text: String
        if let held = models[path] {
            text = held
        } else {
            switch ModelFileIssue.readText(at: path, "the model file") {
            case .success(let read): text = read
            case .failure(let issue): throw ModelFileError(issues: [issue])
            }
        }
        let isJSON = path.lowercased().hasSuffix(".json")
        return (try ModelFile.load(text: text, file: path, isJSON: isJSON), (text, isJSON))
    }

    private mutating func readBatch(_ node: Node, into config: inout PipelineConfig) {
        for (key, _, value) in pairs(node, allowed: ["size", "contexts"], what: "batch") {
            if key == "size" {
                // Each batch is a unit of memory and of a checkpoint's bookkeeping; memory is bounded by
                // bytes too (`ReadStage.batchBytes`), so more would only cost.
                config.batchSize =
                    number(value, "batch.size", minimum: 1, maximum: PipelineConfig.maxBatchSize) ?? config.batchSize
            }
            if key == "contexts" {
                // Each context holds a batch in memory: more than the cores can use only costs memory.
                config.contexts =
                    number(value, "batch.contexts", minimum: 1, maximum: PipelineConfig.maxContexts) ?? config.contexts
            }
        }
    }

    private mutating func readMerge(_ node: Node, into config: inout PipelineConfig) {
        guard let name = text(node, "merge") else { return }
        if let policy = MergePolicy(pipelineName: name) {
            config.merge = policy
        } else {
            fail(
                node,
                "unknown merge policy \(name.debugDescription) (use "
                    + MergePolicy.pipelineNames.map(\.name).joined(separator: ", ") + ")")
        }
    }

    private mutating func readLimits(_ node: Node, into limits: inout ReaderLimits) {
        for (key, _, value) in pairs(node, allowed: ["record", "depth", "number"], what: "limits") {
            guard let text = text(value, "limits.\(key)") else { continue }
            switch key {
            case "record":
                if let bytes = ReaderLimits.parseSize(text) {
                    limits.recordBytes = bytes
                } else {
                    fail(
                        value,
                        "limits.record must be a size up to 1 GB: a number of bytes, or with KB, MB or GB (64 MB)")
                }
            default:
                guard let number = Int(text), number > 0, number <= 1_000_000 else {
                    fail(value, "limits.\(key) must be a whole number from 1 to 1000000")
                    continue
                }
                if key == "depth" { limits.depth = number } else { limits.numberCharacters = number }
            }
        }
    }

    private mutating func readSources(_ node: Node, model: ManagedObjectModel, into config: inout PipelineConfig) {
        guard let list = node.sequence, !list.isEmpty else {
            fail(node, "sources must be a list with at least one source")
            return
        }
        var names: Set<String> = []
        for item in list {
            guard let source = readSource(item, model: model) else { continue }
            if !names.insert(source.name).inserted {
                fail(item, "two sources are named \(source.name.debugDescription)", entity: "source \(source.name)")
            }
            config.sources.append(source)
        }
    }

    mutating func readTarget(_ node: Node, into config: inout PipelineConfig) {
        let allowed: Set<String> = [
            "store", "path", "commit", "shared", "layout", "dates", "version_column", "lightweight_migration", "url",
            "schema",
        ]
        var schema: String?
        for (key, _, value) in pairs(node, allowed: allowed, what: "target") {
            switch key {
            case "store":
                guard let name = text(value, "target.store") else { continue }
                if let kind = PipelineConfig.StoreKind(rawValue: name) {
                    config.store = kind
                } else {
                    fail(
                        value,
                        "unknown target store \(name.debugDescription) (use sqlite, xml, binary, postgres or in-memory)"
                    )
                }
            case "path": config.targetPath = path(value, "target.path")
            case "url":
                guard let url = text(value, "target.url") else { continue }
                if PostgresStore.isDatabaseURL(url), URLComponents(string: url) != nil {
                    config.databaseURL = url
                } else {
                    fail(value, "target.url must be a postgresql:// URL (postgresql://user@host:5432/database)")
                }
            case "schema": schema = text(value, "target.schema")
            case "shared": config.sharesFile = flag(value, "target.shared", source: nil) ?? false
            case "lightweight_migration":
                config.migratesLightly = flag(value, "target.lightweight_migration", source: nil) ?? false
            case "layout", "dates":
                let choices = key == "layout" ? ["plain", "graph"] : ["iso8601", "unix"]
                guard let name = text(value, "target.\(key)") else { continue }
                if choices.contains(name) {
                    config.layoutOptions[key] = name
                } else {
                    fail(
                        value,
                        "unknown target.\(key) \(name.debugDescription) (use \(choices.joined(separator: " or ")))")
                }
            case "version_column":
                if let flag = flag(value, "target.version_column", source: nil) {
                    config.layoutOptions["version_column"] = String(flag)
                }
            case "commit":
                guard let name = text(value, "target.commit") else { continue }
                if let commit = PipelineConfig.Commit(rawValue: name) {
                    config.commit = commit
                } else {
                    fail(value, "unknown commit mode \(name.debugDescription) (use atomic or batches)")
                }
            default: break
            }
        }
        if let schema, let url = config.databaseURL, var components = URLComponents(string: url) {
            components.queryItems =
                (components.queryItems ?? []).filter { $0.name != "schema" }
                + [URLQueryItem(name: "schema", value: schema)]
            config.databaseURL = components.string ?? url
        }
    }
}
