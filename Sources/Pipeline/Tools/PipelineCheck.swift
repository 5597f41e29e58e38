import Foundation
import ObjectGraph
import Readers

/// `sluice check`: a pipeline file and its model read and checked against each other, no data read.
public struct PipelineCheck: Sendable {
    /// The pipeline as understood: model, target, batches, and each source's mapping.
    public let summary: String
    /// One message per input file that does not exist (`file:line: source NAME: the input … does not exist`).
    public let missingInputs: [String]
    /// Mistakes that would reject every record though the file reads: a required attribute or
    /// to-one relationship that no field, default, lookup or parent of any source fills.
    public let problems: [String]

    /// Loads and checks the pipeline at `path`.
    /// - Throws: `PipelineFileError` (with `ModelFileError` issues) naming file, line and column.
    public init(pipelineAt path: String) throws {
        let config = try PipelineFile.load(contentsOf: URL(fileURLWithPath: path))
        missingInputs = config.sources.filter { $0.path != "-" && !FileManager.default.fileExists(atPath: $0.path) }
            .map { "\(config.file):\($0.line): source \($0.name): the input \($0.path) does not exist" }
        problems = Self.unfilled(config)
        let target =
            config.store == .inMemory ? "an in-memory store" : "\(config.store.storeType) \(config.targetName)"
        let contexts = "\(config.contexts) context\(config.contexts == 1 ? "" : "s")"
        let entities = config.model.entities.count
        let verdict =
            problems.isEmpty && missingInputs.isEmpty
            ? "OK"
            : "\(problems.count + missingInputs.count) problem\(problems.count + missingInputs.count == 1 ? "" : "s")"
        var lines = [
            "\(path): \(verdict)",
            "  model \(config.modelPath) (\(entities) entit\(entities == 1 ? "y" : "ies"))",
            "  target \(target), commit \(config.commit.rawValue), batches of \(config.batchSize) in \(contexts), "
                + "merge \(config.merge.pipelineName)",
        ]
        for source in config.sources {
            lines.append(
                "  source \(source.name): \(source.format.rawValue) \(source.path) → \(Self.describe(source.mapping))"
                    + Self.describe(mode: source))
        }
        summary = lines.joined(separator: "\n")
    }

    /// The required attributes and to-one relationships of each source's objects (and their nested
    /// children's) that nothing fills: no field maps them, they have no default, no lookup sets them,
    /// they are not the parent of nested records — and no other source of the entity fills them
    /// either (a second source may complete objects the first made).
    static func unfilled(_ config: PipelineConfig) -> [String] {
        var filled: [String: Set<String>] = [:]
        var made: [(source: PipelineConfig.Source, mapping: PipelineConfig.Mapping, parent: String?)] = []
        func visit(_ source: PipelineConfig.Source, _ mapping: PipelineConfig.Mapping, parent: String?) {
            guard mapping.links == nil else { return }
            made.append((source, mapping, parent))
            var names = Set(mapping.fields.map(\.attribute)).union(mapping.relationships.map(\.relationship))
            if let parent { names.insert(parent) }
            filled[mapping.entity, default: []].formUnion(names)
            for child in mapping.children { visit(source, child.mapping, parent: child.parent) }
        }
        for source in config.sources { visit(source, source.mapping, parent: nil) }
        var problems: [String] = [], said: Set<String> = []
        for (source, mapping, _) in made {
            guard let entity = config.model.entity(named: mapping.entity) else { continue }
            let fills = filled[mapping.entity] ?? []
            let attributes = entity.attributes.filter { !$0.isOptional && !$0.isTransient && $0.defaultValue.isNull }
            let relationships = entity.relationships.filter { !$0.isOptional && !$0.isToMany && !$0.isTransient }
            for name in attributes.map(\.name) + relationships.map(\.name) where !fills.contains(name) {
                guard said.insert("\(entity.name).\(name)").inserted else { continue }
                let what = entity.attribute(named: name) != nil ? "attribute" : "relationship"
                problems.append(
                    "\(config.file):\(source.line): source \(source.name): \(entity.name).\(name) is a required "
                        + "\(what) that no field, default, lookup or parent fills: every record would be rejected")
            }
        }
        return problems
    }

    /// `; mode sync (deletes at most 10%)`, or nothing for `merge`.
    private static func describe(mode source: PipelineConfig.Source) -> String {
        switch source.mode {
        case .merge: return ""
        case .sync: return "; mode sync (deletes at most \(source.maxDelete))"
        default: return "; mode \(source.mode.rawValue)"
        }
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
