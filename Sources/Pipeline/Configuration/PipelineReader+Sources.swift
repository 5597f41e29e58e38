import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Yams

extension PipelineReader {
    // MARK: Sources

    mutating func readSource(_ node: Node, model: ManagedObjectModel) -> PipelineConfig.Source? {
        let allowed: Set<String> = [
            "name", "format", "path", "csv", "record", "table", "entity", "key", "fields", "relationships", "children",
            "where", "duplicates", "find", "namespaces", "mode", "sync", "json",
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
        let format = readFormat(entry("format"), of: path, node, subject: subject)
        guard let format, let mapping = readMapping(node, entries: entries, model: model, source: subject) else {
            return nil
        }
        var source = PipelineConfig.Source(
            name: name, format: format, path: path, mapping: mapping, line: node.mark?.line ?? 0)
        if let csv = entry("csv") {
            if format != .csv { fail(csv, "`csv` options apply to csv sources only", entity: subject) }
            readCSV(csv, into: &source.csv, source: subject)
        }
        if let record = entry("record") {
            if !format.isNested {
                fail(record, "`record` applies to xml, json and jsonl sources only", entity: subject)
            }
            source.record = text(record, "record", source: subject)
            if format.isJSON, let path = source.record, !path.hasPrefix("/") {
                fail(record, "a JSON record path starts at the root with / (like /data/items)", entity: subject)
            }
        }
        if let node = entry("json") { readJSON(node, into: &source, subject: subject) }
        if let node = entry("namespaces") {
            if format != .xml { fail(node, "`namespaces` apply to xml sources only", entity: subject) }
            for (prefix, _, value) in pairs(node, allowed: nil, what: "namespaces", entity: subject) {
                if let uri = text(value, "namespace \(prefix)", source: subject) { source.namespaces[prefix] = uri }
            }
        }
        if let node = entry("duplicates"), let name = text(node, "duplicates", source: subject) {
            if let duplicates = PipelineConfig.Duplicates(rawValue: name) {
                source.duplicates = duplicates
            } else {
                fail(node, "unknown duplicates \(name.debugDescription) (use reject or last-wins)", entity: subject)
            }
        }
        readMode(entry("mode"), sync: entry("sync"), into: &source, subject: subject)
        if let table = entry("table") {
            source.table = text(table, "table", source: subject)
            if let name = source.table, ModelInference.isSluiceOwn(name) {
                fail(
                    table,
                    "\(name) is a Sluice store's own table (its metadata), never imported: its rows would replace "
                        + "the target's", entity: subject)
            }
        }
        checkFormat(of: source, node, children: entry("children"), fields: entry("fields"), subject: subject)
        return source
    }

    /// `format:`, or (without one) the format the file's name or first bytes tell.
    mutating func readFormat(_ formatNode: Node?, of path: String, _ node: Node, subject: String) -> InputFormat? {
        guard let formatNode else {
            // A file not there yet (`check` says so; a run fails reading it, exit 3) goes by its name.
            let format = (try? InputFormat.detect(path: path)) ?? InputFormat.named(byExtensionOf: path)
            if format == nil {
                fail(
                    node,
                    "the source needs a `format` (csv, xml, sqldump, sqlite, json or jsonl): its file does not tell",
                    entity: subject)
            }
            return format
        }
        guard let formatName = text(formatNode, "format", source: subject) else { return nil }
        let format = InputFormat(rawValue: formatName)
        if format == nil {
            fail(
                formatNode,
                "unknown format \(formatName.debugDescription) (use csv, xml, sqldump, sqlite, json or jsonl)",
                entity: subject)
        }
        return format
    }

    /// What a source's format needs (`record`, `table`) and allows (`children`), and its JSON paths
    /// (checked here, not when the run reads the file).
    mutating func checkFormat(
        of source: PipelineConfig.Source, _ node: Node, children: Node?, fields: Node?, subject: String
    ) {
        let format = source.format
        switch format {
        case .xml where source.record == nil:
            fail(node, "an xml source needs `record` (the path of its records, like /orders/order)", entity: subject)
        case .sqldump where source.table == nil, .sqlite where source.table == nil:
            fail(node, "a \(format.rawValue) source needs `table` (the table whose rows it imports)", entity: subject)
        default: break
        }
        if !format.isNested, !source.mapping.children.isEmpty {
            fail(
                children, "children (nested records) apply to xml, json and jsonl sources only",
                entity: subject)
        }
        if format.isJSON, source.record?.hasPrefix("/") != false {
            // Field and child paths are checked here, not when the run reads the file.
            do {
                try JSONReader.check(source.mapping.recordSpec(path: source.record ?? "/"))
            } catch let error as ReaderError {
                fail(fields ?? node, error.message, entity: subject)
            } catch {
                fail(node, "\(error)", entity: subject)
            }
        }
    }

    /// `json: { repeated_members: reject | last-wins }`.
    mutating func readJSON(_ node: Node, into source: inout PipelineConfig.Source, subject: String) {
        if !source.format.isJSON { fail(node, "`json` options apply to json and jsonl sources only", entity: subject) }
        for (_, _, value) in pairs(node, allowed: ["repeated_members"], what: "json options", entity: subject) {
            switch text(value, "json.repeated_members", source: subject) {
            case "reject": source.lastWins = false
            case "last-wins": source.lastWins = true
            case nil: break
            case let other?:
                fail(
                    value, "unknown json.repeated_members \(other.debugDescription) (use reject or last-wins)",
                    entity: subject)
            }
        }
    }

    /// `mode:` and, for `mode: sync`, `sync: { max_delete: N | P% }`.
    mutating func readMode(_ modeNode: Node?, sync: Node?, into source: inout PipelineConfig.Source, subject: String) {
        if let modeNode, let name = text(modeNode, "mode", source: subject) {
            if let mode = PipelineConfig.LoadMode(rawValue: name) {
                source.mode = mode
            } else {
                fail(
                    modeNode, "unknown mode \(name.debugDescription) (use merge, append, replace or sync)",
                    entity: subject)
            }
        }
        guard let sync else { return }
        if source.mode != .sync { fail(sync, "`sync` options apply to a source with `mode: sync`", entity: subject) }
        for (_, _, value) in pairs(sync, allowed: ["max_delete"], what: "sync options", entity: subject) {
            guard let text = text(value, "sync.max_delete", source: subject) else { continue }
            if let limit = PipelineConfig.DeleteLimit(text) {
                source.maxDelete = limit
            } else {
                fail(
                    value, "sync.max_delete must be a count (100) or a share of the stored objects (5%)",
                    entity: subject)
            }
        }
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
}
