import Foundation
import Readers

/// The formats `sluice` reads, and how one is chosen for `--format auto`.
public enum InputFormat: String, Sendable, CaseIterable {
    case csv, xml, sqldump, sqlite

    /// The format of `path`: a SQLite database by its header, otherwise by the name without `.gz`
    /// (`.csv`/`.tsv`/`.txt` CSV, `.xml` XML, `.sql` dump), otherwise by the first bytes (`<` XML).
    /// - Throws: `ReaderError` when the file cannot be read or nothing tells the format.
    public static func detect(path: String) throws -> InputFormat {
        let source = try Input.open(path)
        var head = [UInt8](repeating: 0, count: 64)
        let n = try head.withUnsafeMutableBytes { try source.read(into: $0) }
        head = Array(head[..<n])
        if head.starts(with: Array("SQLite format 3\0".utf8)) { return .sqlite }
        var name = path.lowercased()
        if name.hasSuffix(".gz") { name.removeLast(3) }
        if name.hasSuffix(".csv") || name.hasSuffix(".tsv") || name.hasSuffix(".txt") { return .csv }
        if name.hasSuffix(".xml") { return .xml }
        if name.hasSuffix(".sql") { return .sqldump }
        let text = head.drop { $0 == 32 || $0 == 10 || $0 == 13 || $0 == 9 || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }
        if text.first == UInt8(ascii: "<") { return .xml }
        throw ReaderError(
            .invalidOption, "cannot tell the format of \(path); give it with --format csv|xml|sqldump|sqlite")
    }
}

extension ModelInference {
    /// Reads `path` in `format` (detected when `nil`) into the proposal. XML needs `recordPath`.
    /// - Throws: `ReaderError` for unreadable input or a missing record path.
    /// - Parameters:
    ///   - entity: the entity's name (by default from the file name, or the XML record element).
    ///   - dialect: CSV: the dialect (sniffed from the file when `nil`).
    ///   - spec: XML: the record's fields (discovered from the file when `nil`).
    public mutating func add(
        inputAt path: String, format: InputFormat? = nil, recordPath: String? = nil, entity name: String? = nil,
        dialect: CSVDialect? = nil, spec given: XMLRecordSpec? = nil
    ) throws {
        let entity = name ?? Self.entityName(path)
        switch try format ?? InputFormat.detect(path: path) {
        case .csv:
            try add(CSVReader(path: path, dialect: dialect ?? CSVSniffer.sniff(path: path)), entity: entity)
        case .xml:
            guard let recordPath else {
                throw ReaderError(
                    .invalidOption, "inferring a model from XML needs the record path (--record /root/element)")
            }
            let spec = try given ?? XMLReader.discoverSpec(path: path, recordPath: recordPath)
            let element = name ?? recordPath.split(separator: "/").last.map(String.init) ?? entity
            try add(XMLReader(path: path, spec: spec), entity: Self.entityName(element))
        case .sqldump:
            let reader = try SQLDumpReader(path: path)
            // A table's schema is known once its CREATE TABLE is read, which precedes its rows.
            try add(reader, entity: entity, schemas: { reader.tables })
        case .sqlite:
            let reader = try SQLiteFileReader(path: path)
            try add(reader, entity: entity, schemas: { reader.tables })
        }
    }
}
