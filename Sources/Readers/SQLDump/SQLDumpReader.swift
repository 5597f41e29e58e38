import Foundation

/// Reads a SQL dump as `sqlite3 .dump` writes it (PRAGMA, BEGIN/COMMIT, CREATE TABLE/INDEX/VIEW/
/// TRIGGER, INSERT INTO … VALUES with one or many rows) without executing it: tables' schemas from
/// their CREATE TABLE statements, rows from INSERTs as records (`kind` = the table, fields named by the
/// columns).
///
/// Values: integers and reals as written, NULL, 'strings' with '' escapes and raw line breaks, X'…' blobs
/// (as lowercase hex), and the `replace(…, '\n', char(10))`, `char(…)` and `unistr('…')` forms newer
/// versions emit. A statement the reader cannot parse is an error naming the statement number and
/// line; the next call goes on with the following statement.
///
/// Rows are what SQLite would store: a NULL (or no value) for an INTEGER PRIMARY KEY gets the next
/// rowid, columns an INSERT leaves out get their DEFAULT, table names match in any ASCII case. What
/// the reader cannot apply is refused, never skipped: a statement that changes rows otherwise
/// (UPDATE, DELETE, ALTER TABLE, ROLLBACK) is an `.unsupportedStatement` error, a dump cut inside a
/// statement or whose transaction never commits a `.truncated` one — neither can be read past.
/// Views, triggers and virtual tables (with their shadow tables) are listed in `notImported`.
///
/// ```swift
/// let dump = try SQLDumpReader(path: "legacy.sql.gz", tables: ["products"])
/// while let record = try dump.next() { print(record.kind!, record.strings) }
/// ```
public final class SQLDumpReader: RecordReader {
    /// Tables seen so far, in the order the dump creates them.
    public internal(set) var tables: [TableSchema] = []
    /// What the dump defines but holds no rows of to read: views, triggers, virtual tables (their
    /// shadow tables are the virtual table's own storage, never read), e.g. `view "recent_orders"`.
    public internal(set) var notImported: [String] = []
    public var name: String { splitter.name }
    /// The tables asked for, by `TableSchema.sqlName`.
    let only: Set<String>?
    // `@exclusivity(unchecked)` here and below: every value of every row touches this state; the reader
    // is used by one thread at a time (it is not Sendable) and hands none of it out.
    @exclusivity(unchecked) var splitter: StatementSplitter
    /// What is known of each table created so far, by `TableSchema.sqlName`.
    @exclusivity(unchecked) var states: [String: TableState] = [:]
    /// Virtual tables (by `sqlName`): tables named `<virtual table>_…` are their storage.
    var virtualTables: [String] = []
    /// The full-text tables among them whose documents are read (by `sqlName`).
    var fullTextTables: Set<String> = []
    /// Tables (by `sqlName`) with an INSERT trigger, and the trigger: SQLite would run it for each row.
    var insertTriggers: [String: String] = [:]
    /// The line of a BEGIN whose COMMIT is still to come.
    private var openTransaction: Int?
    private var ended = false
    @exclusivity(unchecked) var pending: [Record] = []
    @exclusivity(unchecked) var pendingIndex = 0
    @exclusivity(unchecked) var recordNumber = 0
    @exclusivity(unchecked) var builder = RecordBuilder.forReader()
    /// The table of the last INSERT (dumps insert into one table many times in a row).
    @exclusivity(unchecked) var lastTable = ""
    /// What is known about `lastTable`: its state (`nil` for a table no CREATE TABLE declared)
    /// and whether its rows are wanted.
    @exclusivity(unchecked) var lastTableInfo: (state: TableState?, wanted: Bool)?

    /// A table as the reader keeps it: schema, the records' context, and the largest rowid so far.
    final class TableState {
        let schema: TableSchema
        let context: Record.Context
        /// `context` for rows of INSERT OR REPLACE and OR IGNORE (made when first needed).
        private var conflictContexts: [Record.Conflict: Record.Context] = [:]
        let rowidColumn: Int?
        var maxRowid: Int64 = 0
        /// Rows read so far (the next row's `Record.ordinal` is one more).
        var rows = 0
        /// A virtual table's storage: never read.
        let isShadow: Bool
        /// A full-text table's `_content` rows: their first value (the document's id) is not a column.
        let skipsFirstValue: Bool

        init(schema: TableSchema, file: String, isShadow: Bool, skipsFirstValue: Bool = false) {
            self.schema = schema
            context = Record.Context(
                file: file, schema: RecordSchema(names: schema.columns.map(\.name)), kind: schema.name)
            rowidColumn = schema.rowidColumn
            self.isShadow = isShadow
            self.skipsFirstValue = skipsFirstValue
        }

        func context(for conflict: Record.Conflict?) -> Record.Context {
            guard let conflict else { return context }
            if let known = conflictContexts[conflict] { return known }
            let made = context.with(conflict: conflict)
            conflictContexts[conflict] = made
            return made
        }
    }

    /// - Parameter tables: only yield rows of these tables (all when `nil`); schemas are kept for all.
    public convenience init(path: String, tables: Set<String>? = nil, limits: ReaderLimits = .standard) throws {
        try self.init(source: try Input.open(path), tables: tables, limits: limits)
    }

    public init(source: ByteSource, tables: Set<String>? = nil, limits: ReaderLimits = .standard) throws {
        only = tables.map { Set($0.map(TableSchema.sqlName)) }
        splitter = StatementSplitter(
            source: try Input.decodingText(source, encoding: .utf8), maxBytes: limits.recordBytes)
    }

    deinit { splitter.deallocate() }

    public func next() throws -> Record? {
        while pendingIndex == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            guard !ended, try splitter.nextStatement() else {
                try finish()
                return nil
            }
            if splitter.isCut {
                ended = true
                throw failure(
                    .truncated,
                    "statement \(splitter.statementNumber) has no end (no \";\"): the dump was cut; nothing from "
                        + "here on is read")
            }
            try handleStatement()
        }
        defer { pendingIndex += 1 }
        return pending[pendingIndex]
    }

    /// At the end of the input: a transaction still open means the dump was cut or never finished
    /// (SQLite would roll its rows back).
    private func finish() throws {
        guard !ended else { return }
        ended = true
        if let line = openTransaction {
            throw ReaderError(
                .truncated,
                "the transaction begun at line \(line) never commits (the dump ends without COMMIT): it was cut or "
                    + "is unfinished, and SQLite would keep none of its rows",
                at: SourcePosition(file: splitter.name, line: splitter.line, column: 1))
        }
    }

    /// An error at the start of the current statement, which nothing after can be read past.
    private func failure(_ kind: ReaderError.Kind, _ message: String) -> ReaderError {
        ReaderError(
            kind, message, at: SourcePosition(file: splitter.name, line: splitter.statementLine, column: 1),
            recoverable: false)
    }

    private func syntaxError(_ message: String, _ parser: SQLParser) -> ReaderError {
        let (line, column) = splitter.lineAndColumn(at: parser.pos)
        return ReaderError(
            .sqlSyntax, "statement \(splitter.statementNumber): \(message)",
            at: SourcePosition(file: splitter.name, line: line, column: column))
    }

    private func handleStatement() throws {
        try splitter.withStatement { bytes in
            var parser = SQLParser(bytes: bytes)
            do {
                if parser.isKeyword("INSERT") {
                    try insert(&parser, replacing: false)
                } else if parser.isKeyword("REPLACE") {
                    try insert(&parser, replacing: true)
                } else if parser.isKeyword("CREATE") {
                    try create(&parser)
                } else if let word = parser.keyword() {
                    try other(word, &parser)
                } else if !parser.atEnd {
                    throw SQLParser.Failure("expected a statement keyword")
                }
            } catch let failure as SQLParser.Failure {
                throw syntaxError(failure.message, parser)
            }
        }
    }

    /// Statements other than INSERT and CREATE: those that change nothing are passed over; those
    /// that change rows or tables in a way the reader cannot apply end the reading.
    private func other(_ word: String, _ parser: inout SQLParser) throws {
        switch word {
        case "BEGIN":
            openTransaction = openTransaction ?? splitter.statementLine
        case "COMMIT", "END":
            openTransaction = nil
        case "PRAGMA", "SAVEPOINT", "RELEASE", "ANALYZE", "VACUUM", "REINDEX", "SELECT", "EXPLAIN", "ATTACH",
            "DETACH":
            break  // nothing that changes this database's rows (an attached one is never read)
        case "DELETE", "UPDATE":
            if word == "DELETE" { _ = parser.keyword() }  // FROM
            if word == "UPDATE", parser.isKeyword("OR") { _ = parser.keyword() }
            let table = try qualifiedName(&parser)
            // `sqlite3 .dump` empties sqlite_sequence before refilling it: SQLite's own bookkeeping.
            guard !TableSchema.sqlName(table).hasPrefix("sqlite_") else { return }
            throw unsupported("\(word) of \(table.debugDescription) changes rows already read")
        case "DROP":
            let kind = parser.keyword()
            skipIfExists(&parser)
            let name = try qualifiedName(&parser)
            if kind == "TRIGGER" { insertTriggers = insertTriggers.filter { $0.value != name } }
            guard kind == "TABLE", let state = states[TableSchema.sqlName(name)], !state.isShadow else { return }
            throw unsupported("DROP TABLE \(name.debugDescription) drops a table whose rows were read")
        case "ALTER":
            _ = parser.keyword()
            throw unsupported("ALTER TABLE \(try qualifiedName(&parser).debugDescription) changes a table")
        case "ROLLBACK":
            throw unsupported("ROLLBACK undoes rows the dump inserted before it")
        default:
            throw unsupported("\(word) is not a statement of a dump")
        }
    }

    func unsupported(_ what: String) -> ReaderError {
        failure(
            .unsupportedStatement,
            "statement \(splitter.statementNumber): \(what); Sluice reads a dump's tables and rows without running "
                + "it — load it into SQLite (sqlite3 new.db < dump.sql) and import the database file instead")
    }
}
