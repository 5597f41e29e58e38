import Foundation
import ObjectGraph
import Readers

/// Writes the tables of an export in one format to one file (or standard output, `-`):
///
/// - CSV: a header of column names, then a line per row; null is an empty field, an empty string
///   `""` (`CSVWriter` quotes exactly what needs it).
/// - JSON Lines: an object per row, columns in order; numbers and decimals as JSON numbers with
///   every digit, dates and binary (base64) as strings, a double that is not finite as a string
///   (`"nan"`). With `namesTables`, each object names its table first (`"table": "orders"`).
/// - SQL: `CREATE TABLE` per table (plain layout types, keys and references), `INSERT` per row,
///   inside one transaction; text with a NUL goes as `CAST(X'…' AS TEXT)`.
final class ExportWriter {
    let format: StoreExport.Format
    let namesTables: Bool
    private let sink: FileByteSink
    private var csv: CSVWriter?
    private var buffer: [UInt8] = []
    private var table: ExportTable?
    private let path: String

    /// - Throws: `RunFileError` when the file cannot be made.
    init(path: String, format: StoreExport.Format, namesTables: Bool) throws {
        self.path = path
        self.format = format
        self.namesTables = namesTables
        do { sink = try FileByteSink(path: path) } catch {
            throw Self.fileError(.open, path: path, error)
        }
        if format == .sqldump { append("PRAGMA foreign_keys = OFF;\nBEGIN TRANSACTION;\n") }
    }

    func begin(_ table: ExportTable) throws {
        self.table = table
        switch format {
        case .csv:
            var dialect = CSVDialect()
            dialect.nullMarkers = [""]
            let writer = try CSVWriter(sink: sink, dialect: dialect)
            try writing { try writer.write(table.columns.map(\.name)) }
            csv = writer
        case .jsonl:
            break
        case .sqldump:
            let columns = table.columns.map { "  \(ExportTable.quote($0.name)) \($0.sqlType)\($0.constraint)" }
            // A link table's pairs are its key, as a many-to-many's join table is.
            let unique =
                table.link != nil
                ? ["  PRIMARY KEY (\(table.columns.map { ExportTable.quote($0.name) }.joined(separator: ", ")))"]
                : table.uniqueColumns.map { "  UNIQUE (\($0.map(ExportTable.quote).joined(separator: ", ")))" }
            append(
                "CREATE TABLE \(ExportTable.quote(table.name)) (\n\((columns + unique).joined(separator: ",\n"))\n);\n")
        }
    }

    func write(_ values: [AttributeValue]) throws {
        guard let table else { return }
        switch format {
        case .csv:
            try writing { try csv?.write(zip(values, table.columns).map { Self.text($0, as: $1.attribute) }) }
        case .jsonl:
            var parts: [String] = []
            if namesTables { parts.append("\"table\":" + Self.json(string: table.name)) }
            for (column, value) in zip(table.columns, values) {
                parts.append(Self.json(string: column.name) + ":" + Self.json(value, as: column.attribute))
            }
            append("{" + parts.joined(separator: ",") + "}\n")
        case .sqldump:
            append(
                "INSERT INTO \(ExportTable.quote(table.name)) VALUES("
                    + zip(values, table.columns).map { Self.sql($0, as: $1.attribute) }.joined(separator: ",") + ");\n"
            )
        }
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Writes what is buffered and ends the file (SQL: the transaction).
    func finish() throws {
        if format == .sqldump { append("COMMIT;\n") }
        try flush()
    }

    private func append(_ text: String) { buffer += text.utf8 }

    private func flush() throws {
        try writing { try csv?.flush() }
        guard !buffer.isEmpty else { return }
        try writing { try buffer.withUnsafeBytes { try sink.write($0) } }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Runs a write to the file: its failure is the export file's.
    private func writing(_ body: () throws -> Void) throws {
        do { try body() } catch { throw Self.fileError(.write, path: path, error) }
    }

    /// The sink's failure as the export file's, with the system's reason it carries.
    private static func fileError(_ operation: RunFileError.Operation, path: String, _ error: any Error) -> RunFileError
    {
        if let posix = (error as? ReaderError)?.underlying as? POSIXError {
            return RunFileError(operation, "the export file", path: path, errno: posix.code.rawValue)
        }
        return RunFileError(operation, "the export file", path: path, underlying: error)
    }

    // MARK: Values

    /// A value as CSV text (`nil` for null), as the column's attribute (if any) has it written:
    /// a calendar date as `2024-01-31`, a decimal with its scale's digits (`2684.00`).
    static func text(_ value: AttributeValue, as attribute: AttributeDescription? = nil) -> String? {
        switch value {
        case .null: return nil
        case .integer(let v): return String(v)
        case .decimal(let v): return DecimalText.text(v, scale: attribute?.scale)
        case .date(let v) where attribute?.type == .calendarDate: return SQLDateText.formatDay(v)
        case .double(let v): return v.description
        case .float(let v): return v.description
        case .string(let v): return v
        case .boolean(let v): return v ? "true" : "false"
        case .date(let v): return SQLDateText.format(v, iso8601: true)
        case .binary(let v): return v.base64EncodedString()
        case .uuid(let v): return v.uuidString
        case .uri(let v): return v.absoluteString
        }
    }

    static func json(_ value: AttributeValue, as attribute: AttributeDescription? = nil) -> String {
        switch value {
        case .null: return "null"
        case .integer, .decimal: return text(value, as: attribute)!
        case .double(let v): return v.isFinite ? v.description : json(string: v.description)
        case .float(let v): return v.isFinite ? v.description : json(string: v.description)
        case .boolean(let v): return v ? "true" : "false"
        default: return json(string: text(value, as: attribute) ?? "")
        }
    }

    static func json(string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func sql(_ value: AttributeValue, as attribute: AttributeDescription? = nil) -> String {
        switch value {
        case .null: return "NULL"
        case .decimal(let v) where DecimalText.exactNumber(v) == nil:
            // More digits than SQLite's numbers hold (it would round them): a BLOB of the digits, as
            // the plain layout keeps them.
            return "X'" + DecimalText.canonical(v).utf8.map { String(format: "%02x", $0) }.joined() + "'"
        case .integer, .decimal: return text(value, as: attribute)!
        case .double(let v): return v.isNaN ? "'NaN'" : v.isInfinite ? (v > 0 ? "9e999" : "-9e999") : v.description
        case .float(let v): return sql(.double(Double(v.description) ?? Double(v)))
        case .boolean(let v): return v ? "1" : "0"
        case .date(let v) where attribute?.type == .calendarDate: return sqlText(SQLDateText.formatDay(v))
        case .date(let v): return sqlText(SQLDateText.format(v))
        case .binary(let v): return "X'" + v.map { String(format: "%02x", $0) }.joined() + "'"
        default: return sqlText(text(value) ?? "")
        }
    }

    private static func sqlText(_ text: String) -> String {
        if text.utf8.contains(0) {
            return "CAST(X'" + text.utf8.map { String(format: "%02x", $0) }.joined() + "' AS TEXT)"
        }
        return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
