import Foundation
import ObjectGraph
import Readers

extension ModelInference {
    /// `data/orders.csv.gz` → `orders`: a file's name without folders and extensions.
    static func tableName(_ path: String) -> String {
        if path == "-" { return "stdin" }  // standard input
        var base = (path as NSString).lastPathComponent
        for suffix in [".gz", ".csv", ".tsv", ".txt", ".jsonl", ".ndjson", ".json"]
        where base.lowercased().hasSuffix(suffix) {
            base = String(base.dropLast(suffix.count))
        }
        return base.isEmpty ? "records" : base
    }

    /// Reads `path` in `format` (detected when `nil`) into the proposal. XML needs `recordPath`;
    /// JSON takes one (`/` by default: the root's elements, or the root object).
    /// - Throws: `ReaderError` for unreadable input or a missing record path.
    /// - Parameters:
    ///   - entity: the entity's name (by default from the file name, or the XML record element).
    ///   - dialect: CSV: the dialect (sniffed from the file when `nil`).
    ///   - spec: XML and JSON: the record's fields (discovered from the file when `nil`).
    /// The most columns an inferred entity may have: SQLite's default `SQLITE_MAX_COLUMN`, the
    /// most a table (and an INSERT) may have.
    public static let maxColumns = 2000

    ///   - table: the table of a CSV or XML input's entity (by default: a CSV's named entity's name in
    ///     snake case, else the file's name; an XML record element's name, plural).
    public mutating func add(
        inputAt path: String, format: InputFormat? = nil, recordPath: String? = nil, entity name: String? = nil,
        table given: String? = nil, dialect: CSVDialect? = nil, spec: RecordSpec? = nil,
        namespaces: [String: String] = [:]
    ) throws {
        let entity = name ?? Self.entityName(path)
        switch try format ?? InputFormat.detect(path: path) {
        case .csv:
            let reader = try CSVReader(path: path, dialect: dialect ?? CSVSniffer.sniff(path: path))
            if let columns = reader.schema?.names.count, columns > Self.maxColumns {
                throw ReaderError(
                    .invalidOption,
                    "\(path) has \(columns) columns, more than a table holds (\(Self.maxColumns), SQLite's limit): "
                        + "map the columns wanted with a pipeline file (sluice run), which reads only those")
            }
            let before = entities.count
            // A name the user gave is the table's as given (in snake case, never made plural): the
            // daily files of one entity share its table.
            let table = given ?? (name != nil ? snakeCaseName(entity) : Self.tableName(path))
            try add(reader, entity: entity, table: table)
            if entities.count == before, let names = reader.schema?.names {
                // A header and no records: an entity with no objects, its columns text.
                var empty = Entity(
                    name: entity, columns: names.map { Column(source: $0, keyCandidate: false) }, origin: entity)
                empty.table = table
                entities.append(empty)
            }
        case .xml:
            guard let recordPath else { throw XMLReader.recordPathNeeded(for: path) }
            let spec = try spec ?? XMLReader.discoverSpec(path: path, recordPath: recordPath)
            let element =
                recordPath.split(separator: "/").last.map { String($0.split(separator: ":").last ?? $0) } ?? entity
            // As for CSV: a name the user gave names the table too, as given (never made plural).
            try add(
                XMLReader(path: path, spec: spec, namespaces: namespaces), entity: name ?? Self.entityName(element),
                table: given ?? (name.map(snakeCaseName) ?? Self.plural(element))
            )
        case .json, .jsonl:
            let lines = try (format ?? InputFormat.detect(path: path)) == .jsonl
            let recordPath = try recordPath ?? (lines ? "/" : JSONReader.defaultRecordPath(of: path))
            let spec = try spec ?? JSONReader.discoverSpec(path: path, lines: lines, recordPath: recordPath)
            // Named after the record path's last member (`/data/orders`: Order, orders), else the file;
            // as for CSV, a name the user gave names the table too.
            let last = recordPath.split(separator: "/").last.map(String.init)
            try add(
                JSONReader(path: path, lines: lines, spec: spec), entity: name ?? last.map(Self.entityName) ?? entity,
                table: given ?? (name != nil ? snakeCaseName(entity) : last ?? Self.tableName(path)))
        case .sqldump:
            let reader = try SQLDumpReader(path: path)
            // A table's schema is known once its CREATE TABLE is read, which precedes its rows.
            try add(reader, entity: entity, schemas: { reader.tables })
            noteNotImported(reader.notImported, in: path)
        case .sqlite:
            let reader = try SQLiteFileReader(path: path)
            try add(reader, entity: entity, schemas: { reader.tables })
            noteNotImported(reader.notImported, in: path)
        }
    }
}
