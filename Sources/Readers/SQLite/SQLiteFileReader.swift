import Drivers
import Foundation

/// Reads the tables of a SQLite database file through SQLite's C API, read-only: a file whose last
/// transactions are still in its `-wal` file reads as committed.
///
/// Records come table after table (in `tables` order), with `kind` = the table name and the columns as
/// field names. Integers are decimal text, reals their shortest exact form, blobs lowercase hex.
///
/// ```swift
/// let reader = try SQLiteFileReader(path: "legacy.db", tables: ["products"])
/// print(reader.tables[0].columns.map(\.name))
/// while let record = try reader.next() { ... }
/// ```
public final class SQLiteFileReader: RecordReader {
    public let path: String
    /// The tables read, with their schema.
    public let tables: [TableSchema]
    /// What the database defines but holds no rows of to read: views, triggers, virtual tables
    /// (their shadow tables are the virtual table's own storage, never read).
    public let notImported: [String]
    private let connection: SQLiteConnection
    private var tableIndex = 0
    private var statement: SQLiteStatement?
    private var context: Record.Context?
    private var rowNumber = 0
    /// How the current table's rowid is selected (`nil`: no rowid, a row's place stands for it).
    private var rowid: String?
    private var recordNumber = 0
    private let limits: ReaderLimits

    /// Opens the database read-only. A WAL-mode database in a folder SQLite cannot write (a read-only
    /// mount) cannot be opened so — SQLite makes its `-shm` file beside it — and is opened as
    /// immutable when it has no `-wal` file with content (there is no log to read, and nobody writes
    /// on such a mount); with one, it is refused saying why rather than read without the log.
    /// - Throws: `SQLiteError`; `ReaderError.Kind.sqlite` for the WAL case.
    static func openReadOnly(_ path: String) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        do {
            _ = try connection.makeStatement("SELECT count(*) FROM sqlite_master").step()
            return connection
        } catch let error as SQLiteError where error.code.primary == .cannotOpen || error.code.primary == .readOnly {
            let log = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? nil
            guard (log ?? 0) == 0 else {
                throw ReaderError(
                    .sqlite,
                    "cannot read \(path): a WAL-mode database whose log (\(path)-wal) SQLite cannot read "
                        + "where it is, since it needs to write \(path)-shm beside it (a read-only folder or "
                        + "mount?); copy the database with its -wal file to a writable folder, or checkpoint it",
                    underlying: error)
            }
            var allowed = CharacterSet.urlPathAllowed
            allowed.remove(charactersIn: "?#%")
            let escaped = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
            let immutable = try SQLiteConnection(path: "file:\(escaped)?immutable=1", mode: .readOnly)
            _ = try immutable.makeStatement("SELECT count(*) FROM sqlite_master").step()
            return immutable
        }
    }

    /// - Parameter tables: the tables to read (all ordinary tables when `nil`), in that order.
    /// - Throws: `ReaderError.Kind.sqlite` when the file is not a readable SQLite database or a named
    ///   table does not exist.
    public init(path: String, tables names: [String]? = nil, limits: ReaderLimits = .standard) throws {
        self.path = path
        self.limits = limits
        do {
            guard FileManager.default.fileExists(atPath: path) else {
                throw ReaderError(.io, "cannot open \(path): no such file")
            }
            let open = try Self.openReadOnly(path)
            connection = open
            let list = try open.makeStatement(
                "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view', 'trigger') "
                    + "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid")
            var listed: [(type: String, name: String, isVirtual: Bool, fullText: FullTextTable?)] = []
            while try list.step() {
                let text = list.string(2) ?? "", name = list.string(1) ?? ""
                let sql = text.uppercased().split { $0 == " " || $0 == "\n" || $0 == "\t" }
                let isVirtual = sql.starts(with: ["CREATE", "VIRTUAL"])
                // A full-text table's documents are read as a table of its columns (when this SQLite
                // has its module).
                let fullText = isVirtual ? FullTextTable(name: name, sql: text) : nil
                listed.append((list.string(0) ?? "", name, isVirtual, fullText))
            }
            let readable = Set(
                listed.compactMap { $0.fullText }.filter { $0.hasOwnContent && Self.canRead($0.name, in: open) }
                    .map(\.name))
            let virtual = listed.filter(\.isVirtual).map { TableSchema.sqlName($0.name) }
            let all = listed.filter { entry in
                entry.type == "table" && (!entry.isVirtual || readable.contains(entry.name))
                    && !TableSchema.isShadow(TableSchema.sqlName(entry.name), of: virtual)
            }.map(\.name)
            notImported = try listed.flatMap { entry -> [String] in
                if let fullText = entry.fullText {
                    guard !fullText.hasOwnContent || readable.contains(entry.name) else {
                        return [
                            "virtual table \(entry.name.debugDescription) (\(fullText.module), which this SQLite "
                                + "cannot read: its documents are not imported)"
                        ]
                    }
                    return [fullText.note]
                }
                if entry.type != "table" || entry.isVirtual {
                    return ["\(entry.isVirtual ? "virtual table" : entry.type) \(entry.name.debugDescription)"]
                }
                guard all.contains(entry.name) else { return [] }
                return try Self.generatedColumns(of: entry.name, in: open).map {
                    TableSchema.generatedColumnNote($0, of: entry.name)
                }
            }
            let chosen = try (names ?? all).map { name in
                guard let found = all.first(where: { TableSchema.sqlName($0) == TableSchema.sqlName(name) }) else {
                    throw ReaderError(
                        .sqlite,
                        "\(path) has no table \(name.debugDescription) (it has \(all.joined(separator: ", ")))")
                }
                return found
            }
            tables = try chosen.map { try SQLiteFileReader.schema(of: $0, in: open) }
        } catch let error as SQLiteError {
            throw ReaderError(.sqlite, "cannot read \(path) as a SQLite database: \(error)", underlying: error)
        }
    }

    /// The name that selects a table's rowid: `rowid`, `_rowid_` or `oid`, whichever no column takes.
    private static func rowidName(of table: TableSchema) -> String? {
        ["rowid", "_rowid_", "oid"].first { table.columnIndex(named: $0) == nil }
    }

    /// Whether the rows of `table` can be selected here (a virtual table needs its module).
    private static func canRead(_ table: String, in connection: SQLiteConnection) -> Bool {
        (try? connection.makeStatement("SELECT * FROM \(quoted(table)) LIMIT 0")) != nil
    }

    private static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The table's generated columns (`table_xinfo` hidden 2: virtual, 3: stored), which
    /// `table_info` leaves out.
    private static func generatedColumns(of table: String, in connection: SQLiteConnection) throws -> [String] {
        let statement = try connection.makeStatement(
            "SELECT name FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3) ORDER BY cid")
        statement.bind(table, at: 1)
        var names: [String] = []
        while try statement.step() { names.append(statement.string(0) ?? "") }
        return names
    }

    private static func schema(of table: String, in connection: SQLiteConnection) throws -> TableSchema {
        let info = try connection.makeStatement("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)")
        info.bind(table, at: 1)
        var columns: [TableSchema.Column] = [], keyed: [(Int64, String)] = []
        while try info.step() {
            let name = info.string(0) ?? ""
            columns.append(.init(name: name, declaredType: info.string(1) ?? "", isNotNull: info.int64(2) != 0))
            if info.int64(3) > 0 { keyed.append((info.int64(3), name)) }
        }
        let keys = try connection.makeStatement(
            "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?) ORDER BY id, seq")
        keys.bind(table, at: 1)
        var foreign: [Int64: TableSchema.ForeignKey] = [:], order: [Int64] = []
        while try keys.step() {
            let id = keys.int64(0)
            if foreign[id] == nil {
                order.append(id)
                foreign[id] = .init(columns: [], table: keys.string(1) ?? "", referencedColumns: [])
            }
            foreign[id]!.columns.append(keys.string(2) ?? "")
            if let to = keys.string(3) { foreign[id]!.referencedColumns.append(to) }
        }
        // UNIQUE constraints and CREATE [UNIQUE] INDEX, whole and on columns (not partial, not on
        // expressions), in the order they were made.
        let indexes = try connection.makeStatement(
            "SELECT name, \"unique\" FROM pragma_index_list(?) WHERE origin IN ('u', 'c') AND partial = 0 "
                + "ORDER BY seq DESC")
        indexes.bind(table, at: 1)
        var unique: [[String]] = [], plain: [[String]] = []
        while try indexes.step() {
            let columnsOf = try connection.makeStatement("SELECT name FROM pragma_index_info(?) ORDER BY seqno")
            columnsOf.bind(indexes.string(0) ?? "", at: 1)
            var group: [String?] = []
            while try columnsOf.step() { group.append(columnsOf.string(0)) }
            let names = group.compactMap { $0 }
            guard names.count == group.count, !names.isEmpty else { continue }
            if indexes.int64(1) != 0 { unique.append(names) } else { plain.append(names) }
        }
        // A WITHOUT ROWID table has no rowid to select.
        let rowid = try connection.makeStatement("SELECT 1 FROM pragma_index_list(?) WHERE origin = 'pk'")
        rowid.bind(table, at: 1)
        let pkIndex = try rowid.step()
        let withoutRowid = pkIndex && (try? connection.makeStatement("SELECT rowid FROM \(quoted(table))")) == nil
        // In the order the table declares them (SQLite numbers them last first), as a dump reads them.
        let foreignKeys = order.reversed().map { foreign[$0]! }
        var schema = TableSchema(
            name: table, columns: columns, primaryKey: keyed.sorted { $0.0 < $1.0 }.map(\.1),
            foreignKeys: foreignKeys, uniqueKeys: unique, isWithoutRowid: withoutRowid)
        schema.indexes = plain
        schema.leaveOut(generated: try generatedColumns(of: table, in: connection))
        return schema
    }

    public func next() throws -> Record? {
        do {
            while tableIndex < tables.count {
                let table = tables[tableIndex]
                if statement == nil {
                    // The columns by name: `*` would add generated columns, which `table_info` leaves out.
                    var list = table.columns.map { Self.quoted($0.name) }.joined(separator: ", ")
                    // Then the row's rowid, its `Record.ordinal`: a keyless row is known by it on a
                    // re-run even after rows before it went (a table's rowid, unless a column hides it).
                    rowid = table.isWithoutRowid ? nil : Self.rowidName(of: table)
                    if let rowid { list += ", " + rowid }
                    statement = try connection.makeStatement("SELECT \(list) FROM \(Self.quoted(table.name))")
                    context = Record.Context(
                        file: path, schema: RecordSchema(names: table.columns.map(\.name)), kind: table.name)
                    rowNumber = 0
                }
                guard let statement, let context else { break }
                if try statement.step() {
                    rowNumber += 1
                    recordNumber += 1
                    var fields: [[UInt8]?] = [], blobs = Set<Int>(), bytes = 0
                    for column in 0..<Int32(table.columns.count) {
                        bytes += statement.byteCount(column)
                        guard bytes <= limits.recordBytes else {
                            throw limits.tooLarge(
                                "the row",
                                at: SourcePosition(
                                    file: path, line: rowNumber, column: Int(column) + 1, record: recordNumber))
                        }
                        switch statement.value(column) {
                        case .null: fields.append(nil)
                        case .integer(let v): fields.append(Array(String(v).utf8))
                        case .real(let v): fields.append(SQLValueText.real(v))
                        case .text(let v): fields.append(Array(v.utf8))
                        case .blob(let v):
                            blobs.insert(fields.count)
                            fields.append(SQLValueText.hex(v))
                        }
                    }
                    var record = Record(
                        byteFields: fields, blobs: blobs, context: context, line: rowNumber, column: 1,
                        number: recordNumber)
                    record.ordinal = rowid.map { _ in Int(statement.int64(Int32(table.columns.count))) } ?? rowNumber
                    return record
                }
                self.statement = nil
                tableIndex += 1
            }
            return nil
        } catch let error as SQLiteError {
            throw ReaderError(
                .sqlite, "reading table \(tables[tableIndex].name) of \(path): \(error)",
                at: SourcePosition(file: path, line: rowNumber, column: 1, record: recordNumber), underlying: error)
        }
    }
}
