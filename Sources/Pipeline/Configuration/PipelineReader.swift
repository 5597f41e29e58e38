import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Yams

struct PipelineReader: YAMLFileReader {
    let file: String
    let environment: [String: String]
    var issues: [ModelFileIssue] = []
    let folder: URL

    init(file: String, environment: [String: String]) {
        self.file = file
        self.environment = environment
        folder = URL(fileURLWithPath: file).deletingLastPathComponent()
    }

    // MARK: Values

    /// The scalar's text with `${VAR}` / `${VAR:-default}` replaced; an unset or empty variable without
    /// a default is an issue.
    mutating func text(_ node: Node, _ what: String, source: String? = nil, allowEmpty: Bool = false) -> String? {
        guard let raw = node.scalar?.string else {
            fail(node, "\(what) must be a single value", entity: source)
            return nil
        }
        var result = "", rest = Substring(raw)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                fail(node, "\(what): `${` without a closing `}`", entity: source)
                return nil
            }
            let body = rest[start.upperBound..<end]
            let parts = body.split(separator: ":-", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            // An empty variable counts as unset: `${OUT}/t.sqlite` must never become `/t.sqlite`.
            if let value = environment[name], !value.isEmpty {
                result += value
            } else if parts.count == 2 {
                result += parts[1]
            } else {
                let state = environment[name] == nil ? "is not set" : "is empty"
                fail(
                    node,
                    "\(what): the environment variable \(name) \(state) (write ${\(name):-default} for a default)",
                    entity: source)
                return nil
            }
            rest = rest[rest.index(after: end)...]
        }
        result += rest
        if result.isEmpty && !allowEmpty {
            fail(node, "\(what) must not be empty", entity: source)
            return nil
        }
        return result
    }

    mutating func path(_ node: Node, _ what: String, source: String? = nil) -> String? {
        guard let text = text(node, what, source: source) else { return nil }
        if text == "-" { return text }  // standard input
        return URL(fileURLWithPath: text, relativeTo: folder).standardizedFileURL.path
    }

    mutating func number(
        _ node: Node, _ what: String, minimum: Int, maximum: Int = .max, source: String? = nil
    ) -> Int? {
        guard let text = text(node, what, source: source), let value = Int(text), value >= minimum, value <= maximum
        else {
            let range = maximum == .max ? "≥ \(minimum)" : "from \(minimum) to \(maximum)"
            fail(node, "\(what) must be a whole number \(range)", entity: source)
            return nil
        }
        return value
    }

    mutating func flag(_ node: Node, _ what: String, source: String?) -> Bool? {
        switch text(node, what, source: source)?.lowercased() {
        case "true", "yes": return true
        case "false", "no": return false
        default:
            fail(node, "\(what) must be true or false", entity: source)
            return nil
        }
    }

    /// A list of texts, or one text.
    mutating func texts(_ node: Node, _ what: String, source: String?) -> [String]? {
        if node.scalar != nil { return text(node, what, source: source, allowEmpty: true).map { [$0] } }
        guard let list = node.sequence else {
            fail(node, "\(what) must be a value or a list of values", entity: source)
            return nil
        }
        return list.compactMap { text($0, what, source: source, allowEmpty: true) }
    }

    /// One byte, for CSV punctuation (`","`, `"\t"`, `tab`).
    mutating func byte(_ node: Node, _ what: String, source: String) -> UInt8? {
        guard let text = text(node, what, source: source) else { return nil }
        let named: [String: String] = [
            "tab": "\t", "\\t": "\t", "space": " ", "pipe": "|", "semicolon": ";", "comma": ",",
        ]
        let value = named[text.lowercased()] ?? text
        guard value.utf8.count == 1, let byte = value.utf8.first else {
            fail(node, "\(what) must be one ASCII character (or tab, space, pipe, semicolon, comma)", entity: source)
            return nil
        }
        return byte
    }

    // MARK: The file

    mutating func read(_ root: Node) throws -> PipelineConfig? {
        let allowed: Set<String> = ["version", "model", "target", "batch", "merge", "errors", "limits", "sources"]
        let entries = pairs(root, allowed: allowed, what: "the pipeline file")
        guard let modelEntry = entries.first(where: { $0.key == "model" }) else {
            fail(root, "the pipeline file needs `model:` (the model file, relative to this file)")
            return nil
        }
        guard let modelPath = path(modelEntry.value, "model") else { return nil }
        let model: ManagedObjectModel
        do { model = try ModelFile.load(contentsOf: URL(fileURLWithPath: modelPath)) } catch let error as ModelFileError
        {
            issues += error.issues
            return nil
        }
        var config = PipelineConfig(file: file, modelPath: modelPath, model: model)
        var sawSources = false, limits = ReaderLimits.standard
        for (key, _, value) in entries {
            switch key {
            case "version":
                if text(value, "version") != "1" { fail(value, "this Sluice reads pipeline files of version 1") }
            case "target": readTarget(value, into: &config)
            case "batch":
                for (key, _, value) in pairs(value, allowed: ["size", "contexts"], what: "batch") {
                    if key == "size" { config.batchSize = number(value, "batch.size", minimum: 1) ?? config.batchSize }
                    if key == "contexts" {
                        // Each context holds a batch in memory: more than the cores can use only costs memory.
                        config.contexts =
                            number(value, "batch.contexts", minimum: 1, maximum: PipelineConfig.maxContexts)
                            ?? config.contexts
                    }
                }
            case "merge":
                let policies: [String: MergePolicy] = [
                    "error": .error, "store-trumps": .storeTrumps, "object-trumps": .objectTrumps,
                    "overwrite": .overwrite, "rollback": .rollback,
                ]
                if let name = text(value, "merge") {
                    if let policy = policies[name] {
                        config.merge = policy
                    } else {
                        fail(
                            value,
                            "unknown merge policy \(name.debugDescription) (use error, store-trumps, object-trumps, "
                                + "overwrite or rollback)"
                        )
                    }
                }
            case "errors":
                for (key, _, value) in pairs(value, allowed: ["max", "rejects"], what: "errors") {
                    if key == "max" { config.maxErrors = number(value, "errors.max", minimum: 0) ?? 0 }
                    if key == "rejects" { config.rejectsPath = path(value, "errors.rejects") }
                }
            case "limits":
                for (_, _, value) in pairs(value, allowed: ["record"], what: "limits") {
                    guard let text = text(value, "limits.record") else { continue }
                    if let bytes = ReaderLimits.parseSize(text) {
                        limits.recordBytes = bytes
                    } else {
                        fail(
                            value,
                            "limits.record must be a size up to 1 GB: a number of bytes, or with KB, MB or GB (64 MB)")
                    }
                }
            case "sources":
                sawSources = true
                guard let list = value.sequence, !list.isEmpty else {
                    fail(value, "sources must be a list with at least one source")
                    continue
                }
                var names: Set<String> = []
                for item in list {
                    guard let source = readSource(item, model: model) else { continue }
                    if !names.insert(source.name).inserted {
                        fail(
                            item, "two sources are named \(source.name.debugDescription)",
                            entity: "source \(source.name)")
                    }
                    config.sources.append(source)
                }
            default:
                break
            }
        }
        if !sawSources { fail(root, "the pipeline file needs `sources:` (a list)") }
        for index in config.sources.indices {
            config.sources[index].limits = limits
            config.sources[index].csv.maxRecordBytes = limits.recordBytes
        }
        // Only a policy under which the record's values win lets the last record of a key win.
        for source in config.sources where source.duplicates == .lastWins {
            if config.merge != .objectTrumps && config.merge != .overwrite {
                fail(
                    root,
                    "duplicates: last-wins needs merge: object-trumps or overwrite (under the merge policy "
                        + "given, a later record of a key would be rejected or lose to the first)",
                    entity: "source \(source.name)")
            }
        }
        let target = entries.first { $0.key == "target" }?.value
        if config.store != .inMemory, target?.mapping?.first(where: { $0.key.scalar?.string == "path" }) == nil {
            fail(
                target ?? root, "a \(config.store.rawValue) target needs `path` (the store file, relative to this file)"
            )
        }
        if config.store != .sqlite, !config.layoutOptions.isEmpty {
            fail(target ?? root, "layout, dates and version_column are options of a sqlite target")
        }
        if config.layoutOptions["layout"] == "graph",
            config.layoutOptions["dates"] != nil || config.layoutOptions["version_column"] != nil
        {
            fail(target ?? root, "dates and version_column belong to the plain layout (layout: plain)")
        }
        if config.store == .xml || config.store == .binary, config.commit == .batches {
            fail(
                target ?? root,
                "commit: batches needs a sqlite target (an \(config.store.rawValue) store rewrites its whole file at "
                    + "every save); use commit: atomic"
            )
        }
        return config
    }

    mutating func readTarget(_ node: Node, into config: inout PipelineConfig) {
        let allowed: Set<String> = [
            "store", "path", "commit", "shared", "layout", "dates", "version_column", "lightweight_migration",
        ]
        for (key, _, value) in pairs(node, allowed: allowed, what: "target") {
            switch key {
            case "store":
                guard let name = text(value, "target.store") else { continue }
                if let kind = PipelineConfig.StoreKind(rawValue: name) {
                    config.store = kind
                } else {
                    fail(value, "unknown target store \(name.debugDescription) (use sqlite, xml, binary or in-memory)")
                }
            case "path": config.targetPath = path(value, "target.path")
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
    }

}
