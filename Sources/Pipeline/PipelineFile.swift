import Foundation
import ObjectGraph
import Readers
import Yams

/// A pipeline, read from its YAML file and checked against its model: what `sluice run` executes
/// and `sluice check` validates. Paths are absolute (resolved against the pipeline file's folder).
public struct PipelineConfig: Sendable {
    public enum StoreKind: String, Sendable {
        case sqlite, inMemory = "in-memory", xml, binary

        /// The registered store type of a file target.
        public var storeType: String { self == .xml ? "XML" : self == .binary ? "Binary" : "SQLite" }
    }
    public enum Commit: String, Sendable { case atomic, batches }

    public var file: String
    public var modelPath: String
    public var model: ManagedObjectModel
    public var store: StoreKind = .sqlite
    public var targetPath: String?
    public var commit: Commit = .atomic
    /// `target.shared`: the SQLite file is another program's database; the store's tables go next
    /// to its own, which are never touched.
    public var sharesFile = false
    public var batchSize = 5_000
    public var contexts = 2
    public var merge: MergePolicy = .error
    public var maxErrors = 0
    public var rejectsPath: String?
    public var sources: [Source] = []

    /// One input and how its records become objects.
    public struct Source: Sendable {
        public var name: String
        public var format: InputFormat
        public var path: String
        public var csv = CSVDialect()
        /// XML: the record path (`/orders/order`); SQL dumps and SQLite files: the table.
        public var record: String?
        public var table: String?
        public var mapping: Mapping
        /// Where the source is declared in the pipeline file.
        public var line: Int
    }

    /// Records of one kind onto objects of one entity; children are records nested in them (XML).
    public struct Mapping: Sendable {
        public var entity: String
        /// Attributes whose values identify an object (find-or-create, upsert).
        public var key: [String] = []
        public var fields: [Field] = []
        public var relationships: [Lookup] = []
        public var children: [Child] = []
        /// Records for which the predicate is false are skipped.
        public var filter: FetchPredicate?
    }

    /// A record nested in its parent's record, linked to the parent object through `parent`.
    public struct Child: Sendable {
        public var record: String
        public var parent: String
        public var mapping: Mapping
    }

    /// One attribute from one column or path, converted and transformed.
    public struct Field: Sendable {
        public var attribute: String
        public var from: String
        public var transforms: [Transform] = []
        public var date: DateFormat?
        public var binary: BinaryEncoding?
        public var defaultValue: AttributeValue?
        /// Values meaning "no value" (beyond the source's own null markers).
        public var nulls: [String] = []
        public var trueWords: [String] = ["true", "yes", "1"]
        public var falseWords: [String] = ["false", "no", "0"]

        public init(attribute: String, from: String) {
            self.attribute = attribute
            self.from = from
        }
    }

    public enum Transform: Sendable, Equatable {
        case trim, lowercase, uppercase
        case replace(String, with: String)
        /// The first capture group of a regular expression (the whole match when it has none).
        case capture(String)
    }

    public enum DateFormat: Sendable, Equatable {
        case iso8601, unixSeconds
        case pattern(String)
    }

    public enum BinaryEncoding: String, Sendable { case hex, base64 }

    /// A to-one relationship set by looking the destination up by its key.
    public struct Lookup: Sendable {
        public var relationship: String
        public var entity: String
        /// Destination key attribute → column or path of this record holding its value.
        public var key: [(attribute: String, from: String)]
        /// Whether a missing destination is created (find-or-create) or the record rejected.
        public var createsMissing: Bool

        public init(
            relationship: String, entity: String, key: [(attribute: String, from: String)], createsMissing: Bool
        ) {
            self.relationship = relationship
            self.entity = entity
            self.key = key
            self.createsMissing = createsMissing
        }
    }
}

/// A pipeline file that cannot be used: every mistake found, each with file, line and column.
public struct PipelineFileError: Error, Sendable, CustomStringConvertible {
    public var issues: [ModelFileIssue]
    public var description: String {
        let count = issues.count
        return "The pipeline file has \(count) error\(count == 1 ? "" : "s"):\n"
            + issues.map { "  " + $0.description }.joined(separator: "\n")
    }
}

/// Reads pipeline files (format in DESIGN.md and README): `${VAR}` and `${VAR:-default}` from the
/// environment in every value, paths relative to the file, and every mistake reported with file,
/// line and column — unknown keys, wrong types, entities, attributes and relationships the model
/// does not have, an attribute mapped twice, a `where` that does not parse.
public enum PipelineFile {
    /// - Throws: `PipelineFileError`; `ModelFileError` when the model file is wrong.
    public static func load(
        contentsOf url: URL, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PipelineConfig {
        let path = url.standardizedFileURL.path
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw PipelineFileError(issues: [
                ModelFileIssue(
                    file: path, line: 0, column: 0,
                    message: "cannot read the pipeline file (missing, unreadable or not UTF-8)")
            ])
        }
        return try load(text: text, file: path, environment: environment)
    }

    /// Reads a pipeline from text; `file` names it in errors and is the base of relative paths.
    public static func load(
        text: String, file: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PipelineConfig {
        var reader = PipelineReader(file: file, environment: environment)
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

private struct PipelineReader: YAMLFileReader {
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

    /// The scalar's text with `${VAR}` / `${VAR:-default}` replaced; an undefined variable is an issue.
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
            if let value = environment[name], !(parts.count == 2 && value.isEmpty) {
                result += value
            } else if parts.count == 2 {
                result += parts[1]
            } else {
                fail(
                    node,
                    "\(what): the environment variable \(name) is not set (write ${\(name):-default} for a default)",
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

    mutating func number(_ node: Node, _ what: String, minimum: Int, source: String? = nil) -> Int? {
        guard let text = text(node, what, source: source), let value = Int(text), value >= minimum else {
            fail(node, "\(what) must be a whole number ≥ \(minimum)", entity: source)
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
        let allowed: Set<String> = ["version", "model", "target", "batch", "merge", "errors", "sources"]
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
        var sawSources = false
        for (key, _, value) in entries {
            switch key {
            case "version":
                if text(value, "version") != "1" { fail(value, "this Sluice reads pipeline files of version 1") }
            case "target": readTarget(value, into: &config)
            case "batch":
                for (key, _, value) in pairs(value, allowed: ["size", "contexts"], what: "batch") {
                    if key == "size" { config.batchSize = number(value, "batch.size", minimum: 1) ?? config.batchSize }
                    if key == "contexts" {
                        config.contexts = number(value, "batch.contexts", minimum: 1) ?? config.contexts
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
        let target = entries.first { $0.key == "target" }?.value
        if config.store != .inMemory, target?.mapping?.first(where: { $0.key.scalar?.string == "path" }) == nil {
            fail(
                target ?? root, "a \(config.store.rawValue) target needs `path` (the store file, relative to this file)"
            )
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
        for (key, _, value) in pairs(node, allowed: ["store", "path", "commit", "shared"], what: "target") {
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

    // MARK: Sources

    mutating func readSource(_ node: Node, model: ManagedObjectModel) -> PipelineConfig.Source? {
        let allowed: Set<String> = [
            "name", "format", "path", "csv", "record", "table", "entity", "key", "fields", "relationships", "children",
            "where",
        ]
        let entries = pairs(node, allowed: allowed, what: "a source")
        func entry(_ key: String) -> Node? { entries.first { $0.key == key }?.value }
        guard let nameNode = entry("name"), let name = text(nameNode, "the source name") else {
            fail(node, "each source needs a `name`")
            return nil
        }
        let subject = "source \(name)"
        guard let pathNode = entry("path"), let path = path(pathNode, "path", source: subject) else {
            if entry("path") == nil {
                fail(node, "the source needs a `path` (a file, or - for standard input)", entity: subject)
            }
            return nil
        }
        var format: InputFormat?
        if let formatNode = entry("format"), let formatName = text(formatNode, "format", source: subject) {
            format = InputFormat(rawValue: formatName)
            if format == nil {
                fail(
                    formatNode, "unknown format \(formatName.debugDescription) (use csv, xml, sqldump or sqlite)",
                    entity: subject)
            }
        } else if entry("format") == nil {
            format = try? InputFormat.detect(path: path)
            if format == nil {
                fail(
                    node, "the source needs a `format` (csv, xml, sqldump or sqlite): its file does not tell",
                    entity: subject)
            }
        }
        guard let format, let mapping = readMapping(node, entries: entries, model: model, source: subject) else {
            return nil
        }
        var source = PipelineConfig.Source(
            name: name, format: format, path: path, mapping: mapping, line: node.mark?.line ?? 0)
        if let csv = entry("csv") {
            if format != .csv { fail(csv, "`csv` options apply to csv sources only", entity: subject) }
            readCSV(csv, into: &source.csv, source: subject)
        }
        if let record = entry("record") { source.record = text(record, "record", source: subject) }
        if let table = entry("table") { source.table = text(table, "table", source: subject) }
        switch format {
        case .xml where source.record == nil:
            fail(node, "an xml source needs `record` (the path of its records, like /orders/order)", entity: subject)
        case .sqldump where source.table == nil, .sqlite where source.table == nil:
            fail(node, "a \(format.rawValue) source needs `table` (the table whose rows it imports)", entity: subject)
        default: break
        }
        if format != .xml, !mapping.children.isEmpty {
            fail(entry("children"), "children (nested records) apply to xml sources only", entity: subject)
        }
        return source
    }

    mutating func readCSV(_ node: Node, into dialect: inout CSVDialect, source: String) {
        let allowed: Set<String> = ["header", "delimiter", "quote", "escape", "encoding", "null", "comment", "trim"]
        for (key, _, value) in pairs(node, allowed: allowed, what: "csv options", entity: source) {
            switch key {
            case "header": dialect.hasHeader = flag(value, "csv.header", source: source) ?? true
            case "delimiter": dialect.delimiter = byte(value, "csv.delimiter", source: source) ?? dialect.delimiter
            case "quote":
                if text(value, "csv.quote", source: source, allowEmpty: true)?.lowercased() == "none" {
                    dialect.quote = nil
                } else {
                    dialect.quote = byte(value, "csv.quote", source: source) ?? dialect.quote
                }
            case "escape": dialect.escape = byte(value, "csv.escape", source: source)
            case "comment": dialect.comment = byte(value, "csv.comment", source: source)
            case "trim": dialect.trimsWhitespace = flag(value, "csv.trim", source: source) ?? false
            case "null": dialect.nullMarkers = texts(value, "csv.null", source: source) ?? []
            case "encoding":
                guard let name = text(value, "csv.encoding", source: source) else { continue }
                if let encoding = TextEncoding(name: name) {
                    dialect.encoding = encoding
                } else {
                    fail(
                        value,
                        "unknown encoding \(name.debugDescription) (known: "
                            + "\(TextEncoding.allCases.map(\.rawValue).joined(separator: ", ")))",
                        entity: source)
                }
            default: break
            }
        }
    }

    // MARK: Mappings

    mutating func readMapping(
        _ node: Node, entries: [(key: String, keyNode: Node, value: Node)], model: ManagedObjectModel, source: String
    ) -> PipelineConfig.Mapping? {
        func entry(_ key: String) -> Node? { entries.first { $0.key == key }?.value }
        guard let entityNode = entry("entity"), let entityName = text(entityNode, "entity", source: source) else {
            if entry("entity") == nil { fail(node, "the mapping needs an `entity`", entity: source) }
            return nil
        }
        guard let entity = model.entity(named: entityName) else {
            fail(
                entityNode,
                "the model has no entity \(entityName.debugDescription) (it has: "
                    + "\(model.entities.map(\.name).sorted().joined(separator: ", ")))",
                entity: source)
            return nil
        }
        guard !entity.isAbstract else {
            fail(entityNode, "\(entityName) is abstract: map records onto one of its sub-entities", entity: source)
            return nil
        }
        var mapping = PipelineConfig.Mapping(entity: entityName)
        if let keyNode = entry("key") {
            mapping.key = texts(keyNode, "key", source: source) ?? []
            for name in mapping.key where entity.attribute(named: name) == nil {
                fail(
                    keyNode, "key attribute \(name.debugDescription) is not an attribute of \(entityName)",
                    entity: source)
            }
            // Upserts happen through the model's uniqueness constraints: a key without one would
            // silently insert every record again on a re-run.
            var constraints: [[String]] = [], cursor: EntityDescription? = entity
            while let current = cursor {
                constraints += current.uniquenessConstraints
                cursor = current.superentity
            }
            if !mapping.key.isEmpty, mapping.key.allSatisfy({ entity.attribute(named: $0) != nil }),
                !constraints.contains(where: { Set($0) == Set(mapping.key) })
            {
                fail(
                    keyNode,
                    "key [\(mapping.key.joined(separator: ", "))] is not a uniqueness constraint of \(entityName) in "
                        + "the model (add `unique: [[\(mapping.key.joined(separator: ", "))]]` to it)",
                    entity: source)
            }
        }
        if let fieldsNode = entry("fields") {
            for (attribute, attributeNode, spec) in pairs(fieldsNode, allowed: nil, what: "fields", entity: source) {
                guard let description = entity.attribute(named: attribute) else {
                    fail(
                        attributeNode, "\(entityName) has no attribute \(attribute.debugDescription)", entity: source,
                        property: attribute)
                    continue
                }
                if description.isTransient {
                    fail(
                        attributeNode, "\(attribute) is transient (never stored): it cannot be imported",
                        entity: source, property: attribute)
                }
                if let field = readField(attribute, description.type, spec, source: source) {
                    mapping.fields.append(field)
                }
            }
        }
        for name in mapping.key where !mapping.fields.contains(where: { $0.attribute == name }) {
            fail(
                entry("key"),
                "key attribute \(name.debugDescription) is not mapped from the records (add it to `fields`)",
                entity: source)
        }
        if let relationshipsNode = entry("relationships") {
            for (name, nameNode, spec) in pairs(relationshipsNode, allowed: nil, what: "relationships", entity: source)
            {
                if mapping.fields.contains(where: { $0.attribute == name }) {
                    fail(nameNode, "\(name) is mapped twice", entity: source, property: name)
                }
                if let lookup = readLookup(name, nameNode, spec, entity: entity, model: model, source: source) {
                    mapping.relationships.append(lookup)
                }
            }
        }
        if let childrenNode = entry("children") {
            guard let list = childrenNode.sequence else {
                fail(childrenNode, "children must be a list", entity: source)
                return mapping
            }
            for item in list {
                if let child = readChild(item, parent: entity, model: model, source: source) {
                    mapping.children.append(child)
                }
            }
        }
        if let whereNode = entry("where"), let format = text(whereNode, "where", source: source) {
            do {
                let predicate = try FetchPredicate(format: format)
                _ = try predicate.compiled(for: entity)
                mapping.filter = predicate
            } catch {
                fail(whereNode, "where: \(error)", entity: source)
            }
        }
        return mapping
    }

    mutating func readField(
        _ attribute: String, _ type: AttributeType, _ spec: Node, source: String
    ) -> PipelineConfig.Field? {
        if spec.scalar != nil {
            return text(spec, "field \(attribute)", source: source).map {
                PipelineConfig.Field(attribute: attribute, from: $0)
            }
        }
        let allowed: Set<String> = [
            "column", "path", "transform", "date", "binary", "default", "null", "true", "false",
        ]
        let entries = pairs(spec, allowed: allowed, what: "field \(attribute)", entity: source, property: attribute)
        let sources = entries.filter { $0.key == "column" || $0.key == "path" }
        guard sources.count == 1, let from = text(sources[0].value, sources[0].key, source: source) else {
            if sources.count != 1 {
                fail(
                    spec, "field \(attribute) needs exactly one of `column` or `path`", entity: source,
                    property: attribute)
            }
            return nil
        }
        var field = PipelineConfig.Field(attribute: attribute, from: from)
        for (key, _, value) in entries {
            switch key {
            case "transform":
                let items = value.sequence ?? [value]
                for item in items {
                    if let transform = readTransform(item, source: source, attribute: attribute) {
                        field.transforms.append(transform)
                    }
                }
            case "date":
                guard type == .date else {
                    fail(
                        value, "`date` applies to date attributes; \(attribute) is \(type)", entity: source,
                        property: attribute)
                    continue
                }
                switch text(value, "date", source: source) {
                case "iso8601"?: field.date = .iso8601
                case "unix"?, "unix-seconds"?: field.date = .unixSeconds
                case let pattern?: field.date = .pattern(pattern)
                case nil: break
                }
            case "binary":
                guard type == .binary else {
                    fail(
                        value, "`binary` applies to binary attributes; \(attribute) is \(type)", entity: source,
                        property: attribute)
                    continue
                }
                guard let name = text(value, "binary", source: source) else { continue }
                if let encoding = PipelineConfig.BinaryEncoding(rawValue: name) {
                    field.binary = encoding
                } else {
                    fail(value, "binary must be hex or base64", entity: source, property: attribute)
                }
            case "default":
                guard let raw = text(value, "default", source: source, allowEmpty: true) else { continue }
                if let parsed = AttributeValueParser.parse(raw, as: type) {
                    field.defaultValue = parsed
                } else {
                    fail(
                        value,
                        "default \(raw.debugDescription) is not a valid "
                            + "\(type)\(AttributeValueParser.formatHint(for: type))",
                        entity: source, property: attribute)
                }
            case "null": field.nulls = texts(value, "null", source: source) ?? []
            case "true", "false":
                guard type == .boolean else {
                    fail(
                        value, "`\(key)` applies to boolean attributes; \(attribute) is \(type)", entity: source,
                        property: attribute)
                    continue
                }
                let words = texts(value, key, source: source) ?? []
                if key == "true" { field.trueWords = words } else { field.falseWords = words }
            default: break
            }
        }
        if !Set(field.trueWords.map { $0.lowercased() }).isDisjoint(with: field.falseWords.map { $0.lowercased() }) {
            fail(spec, "a word cannot mean both true and false", entity: source, property: attribute)
        }
        return field
    }

    mutating func readTransform(_ node: Node, source: String, attribute: String) -> PipelineConfig.Transform? {
        if node.scalar != nil {
            switch text(node, "transform", source: source) {
            case "trim"?: return .trim
            case "lowercase"?: return .lowercase
            case "uppercase"?: return .uppercase
            case let other?:
                fail(
                    node,
                    "unknown transform \(other.debugDescription) (trim, lowercase, uppercase, { replace: [from, to] "
                        + "}, { capture: regex })",
                    entity: source, property: attribute)
                return nil
            case nil: return nil
            }
        }
        let entries = pairs(
            node, allowed: ["replace", "capture"], what: "a transform", entity: source, property: attribute)
        guard entries.count == 1 else {
            fail(
                node, "a transform is one of trim, lowercase, uppercase, { replace: [from, to] }, { capture: regex }",
                entity: source, property: attribute)
            return nil
        }
        let (key, _, value) = entries[0]
        if key == "replace" {
            guard let parts = value.sequence, parts.count == 2,
                let from = text(parts[0], "replace", source: source),
                let to = text(parts[1], "replace", source: source, allowEmpty: true)
            else {
                fail(value, "replace takes [from, to]", entity: source, property: attribute)
                return nil
            }
            return .replace(from, with: to)
        }
        guard let pattern = text(value, "capture", source: source) else { return nil }
        do { _ = try NSRegularExpression(pattern: pattern) } catch {
            fail(
                value, "capture: \(pattern.debugDescription) is not a valid regular expression", entity: source,
                property: attribute)
            return nil
        }
        return .capture(pattern)
    }

    mutating func readLookup(
        _ name: String, _ nameNode: Node, _ spec: Node, entity: EntityDescription, model: ManagedObjectModel,
        source: String
    ) -> PipelineConfig.Lookup? {
        guard let relationship = entity.relationship(named: name) else {
            fail(
                nameNode, "\(entity.name) has no relationship \(name.debugDescription)", entity: source, property: name)
            return nil
        }
        guard !relationship.isToMany else {
            fail(
                nameNode,
                "\(name) is to-many: set it from the other side (the to-one of its destination) or with children",
                entity: source, property: name)
            return nil
        }
        let entries = pairs(
            spec, allowed: ["entity", "key", "missing"], what: "relationship \(name)", entity: source, property: name)
        func entry(_ key: String) -> Node? { entries.first { $0.key == key }?.value }
        // The model resolved every destination.
        guard var destination = relationship.destinationEntity else { return nil }
        if let entityNode = entry("entity"), let entityName = text(entityNode, "entity", source: source) {
            guard let named = model.entity(named: entityName), named.isKind(of: destination) else {
                fail(
                    entityNode,
                    "\(entityName) is not \(relationship.destinationEntityName) or one of its sub-entities (the "
                        + "destination of \(entity.name).\(name))",
                    entity: source, property: name)
                return nil
            }
            destination = named
        }
        guard let keyNode = entry("key") else {
            fail(
                spec, "relationship \(name) needs `key: { <attribute of \(destination.name)>: <column or path> }`",
                entity: source, property: name)
            return nil
        }
        var key: [(attribute: String, from: String)] = []
        for (attribute, attributeNode, from) in pairs(
            keyNode, allowed: nil, what: "the key of \(name)", entity: source, property: name)
        {
            guard destination.attribute(named: attribute) != nil else {
                fail(
                    attributeNode, "\(destination.name) has no attribute \(attribute.debugDescription)", entity: source,
                    property: name)
                continue
            }
            if let column = text(from, "key \(attribute)", source: source) { key.append((attribute, column)) }
        }
        var createsMissing = false
        if let missing = entry("missing") {
            switch text(missing, "missing", source: source) {
            case "create"?: createsMissing = true
            case "reject"?: createsMissing = false
            case let other?:
                fail(
                    missing,
                    "missing must be create (find-or-create) or reject (must exist), not \(other.debugDescription)",
                    entity: source, property: name)
            case nil: break
            }
        }
        guard !key.isEmpty else { return nil }
        return PipelineConfig.Lookup(
            relationship: name, entity: destination.name, key: key, createsMissing: createsMissing)
    }

    mutating func readChild(
        _ node: Node, parent: EntityDescription, model: ManagedObjectModel, source: String
    ) -> PipelineConfig.Child? {
        let allowed: Set<String> = [
            "record", "entity", "parent", "key", "fields", "relationships", "children", "where",
        ]
        let entries = pairs(node, allowed: allowed, what: "a child", entity: source)
        func entry(_ key: String) -> Node? { entries.first { $0.key == key }?.value }
        guard let recordNode = entry("record"), let record = text(recordNode, "record", source: source) else {
            if entry("record") == nil {
                fail(node, "a child needs `record` (its element, relative to the parent's)", entity: source)
            }
            return nil
        }
        guard let mapping = readMapping(node, entries: entries, model: model, source: "\(source) > \(record)") else {
            return nil
        }
        guard let parentNode = entry("parent"), let parentName = text(parentNode, "parent", source: source) else {
            fail(
                node, "a child needs `parent` (its to-one relationship to the \(parent.name) it is nested in)",
                entity: source)
            return nil
        }
        let child = model.entity(named: mapping.entity)!
        guard let relationship = child.relationship(named: parentName), !relationship.isToMany,
            let destination = relationship.destinationEntity, parent.isKind(of: destination)
        else {
            fail(
                parentNode,
                "\(mapping.entity) has no to-one relationship \(parentName.debugDescription) to \(parent.name)",
                entity: source)
            return nil
        }
        if mapping.relationships.contains(where: { $0.relationship == parentName })
            || mapping.fields.contains(where: { $0.attribute == parentName })
        {
            fail(parentNode, "\(parentName) is mapped twice (it links the child to its parent)", entity: source)
        }
        return PipelineConfig.Child(record: record, parent: parentName, mapping: mapping)
    }
}
